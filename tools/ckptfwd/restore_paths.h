// Where `ckptfwd restore` puts a file, and how it gets there without ever leaving the
// target directory. Paths in a store are untrusted input (a container may be hostile).
#pragma once
#include <string>
#include <vector>

namespace ckptfwd::cli {

// True if p is absolute, has no NUL, no empty, "." or ".." component and is not "/".
// Otherwise *why says what is wrong.
bool check_restore_path(const std::string& p, std::string* why);

// The longest common directory of the paths (component-wise, over their parent
// directories), e.g. {"/a/b/x", "/a/c/y"} -> "/a"; "" when only "/" is common.
std::string common_dir_prefix(const std::vector<std::string>& paths);

// Path relative to the target directory: p with prefix stripped, or p without its leading
// '/' when full_paths. p must have passed check_restore_path and start with prefix.
std::string destination_of(const std::string& p, const std::string& prefix, bool full_paths);

// Opens (creating as needed) the parent directories of rel below root_fd, one component at
// a time with O_NOFOLLOW, so a symlink planted anywhere on the way is refused instead of
// followed, and so is a directory owned by a user other than us or root. Returns the
// parent's fd (caller closes) and the last component in *leaf, or -1 with *why set
// (naming the directory as root_name/its path below root_fd, or without root_name/ when
// it is empty).
int open_parent_dir(int root_fd, const std::string& rel, std::string* leaf, std::string* why,
                    const std::string& root_name = "");

// Makes a path printable on one line (control characters become \xNN).
std::string printable(const std::string& p);

}  // namespace ckptfwd::cli
