// Which paths the preload library captures: the CKPTFWD_CAPTURE globs minus the paths
// ckptfwd itself owns (its stage directories, its stores). Pure logic, allocation free,
// so it can run inside any wrapped call and be unit tested on its own.
#pragma once
#include <climits>
#include <cstddef>

namespace ckptfwd::interpose {

class CaptureSet {
 public:
  static constexpr size_t kMaxPatterns = 64;
  static constexpr size_t kSpecBytes = 16384;

  // Splits a colon-separated glob list (empty fields skipped). Relative globs are made
  // absolute against cwd_or_null (nullptr: the current directory). Returns false if the
  // list was too long to keep in full (the patterns that fit are kept).
  bool parse(const char* spec, const char* cwd_or_null = nullptr);
  // stage_root: the session stage root (its ckptfwd-* directories are never captured);
  // store_dir: CKPTFWD_STORE or nullptr/"" (never captured either).
  void set_exclusions(const char* stage_root, const char* store_dir);

  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }
  const char* pattern(size_t i) const { return i < count_ ? patterns_[i] : nullptr; }

  // path must be absolute and normalised (ckptfwd::normalize_path).
  bool excluded(const char* path) const;
  bool matches(const char* path) const;
  // True if files directly inside dir could be captured (some glob's directory part
  // matches dir, or a '*' of its last component spans dir: "/ck/*" holds /ck/sub/f),
  // so a directory listing must ask the forwarder for its names.
  bool dir_may_hold(const char* dir) const;

 private:
  char buf_[kSpecBytes] = {};
  const char* patterns_[kMaxPatterns] = {};
  size_t count_ = 0;
  char stage_prefix_[PATH_MAX] = {};  // "<stage root>/ckptfwd-"
  char store_[PATH_MAX] = {};
};

// True if some component of path is exactly ".ckptfwd" (a store directory).
bool has_store_component(const char* path);
// True for ROMIO's hidden shared-file-pointer files (".NAME.shfp.<id>").
bool is_romio_shared_fp(const char* path);

// 64-bit FNV-1a of a path: stable inode numbers for synthesized stat/dirent entries.
unsigned long long path_hash(const char* path);

}  // namespace ckptfwd::interpose
