// Ownership checks of the store (docs/semantics.md, "Other users on the node"): a store directory
// another user created in a shared (1777) checkpoint directory, or a MANIFEST replaced by a
// symbolic link, must not be written into or trusted. The forwarder refuses them (the staged data
// is kept, as when the store cannot be written); the CLI warns (docs/settings.md and "ckptfwd").
#pragma once
#include <sys/types.h>

#include <string>

namespace ckptfwd {

// dir (the store; a symbolic link to it is fine when the link is ours too) is a directory
// owned by our effective uid and not writable by group or other. Else false with *err
// naming the path, the owner or mode, and the fix.
bool check_store_dir(const std::string& dir, std::string* err);

// The store directory dir opened (O_DIRECTORY), when it passes the checks of
// check_store_dir as opened: the directory the descriptor holds is ours and not writable
// by group or other, and dir is that directory itself or a symbolic link of ours to it.
// Files created with openat on it land in that checked directory, whatever is renamed in
// the path meanwhile. -1 with errno and *err (naming the path and the fix) otherwise
// (errno ENOENT when dir does not exist).
int open_store_dir(const std::string& dir, std::string* err);

// open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode), then the opened file must be owned by
// our effective uid. -1 with errno and *err (naming the path and the fix) otherwise; *err
// is left alone when the open itself failed for another reason (ENOENT, EACCES...).
int open_owned(const std::string& path, int flags, mode_t mode, std::string* err);
// The same for name in the directory dir_fd (openat); shown is its path for messages.
int open_owned_at(int dir_fd, const std::string& name, const std::string& shown, int flags,
                  mode_t mode, std::string* err);

}  // namespace ckptfwd
