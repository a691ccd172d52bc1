// Replacing a small file of the store in one step (MANIFEST.snap, CHAINS): its new text is
// written under a temporary name of this writer's own, then renamed over the old file, so
// a reader sees the old text or the new one, never a part.
#pragma once
#include <string>

namespace ckptfwd {

// Writes text to name inside the directory dir_fd (opened and checked by the caller, e.g.
// open_store_dir, so the file lands in that directory whatever is renamed in its path);
// the temporary is ".<name>.<pid>.<random>" (forwarders of several nodes may share a pid)
// and is removed on failure. shown_dir names the directory in *err.
bool replace_file_at(int dir_fd, const std::string& shown_dir, const std::string& name,
                     const std::string& text, std::string* err);

}  // namespace ckptfwd
