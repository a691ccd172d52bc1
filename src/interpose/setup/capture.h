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
  // Fast rejects, before any path work (no getcwd, no /proc readlink). Both are
  // necessary conditions of matches(), never sufficient.
  // False when the normalised absolute path (len bytes) starts with no glob's literal
  // prefix (its characters before the first of * ? [ \\, which fnmatch compares one
  // to one), so no glob can match it.
  bool may_match(const char* path, size_t len) const;
  // False when no glob could match any path ending in tail (len bytes): each glob's
  // literal suffix (after its last * ? [ ] \\) must end the path. A suffix longer than
  // tail could end in the unknown part before it: then true.
  bool may_end_with(const char* tail, size_t len) const;
  // False when no path below the normalised absolute directory dir (len bytes) can
  // start with a glob's literal prefix: may_match of every dir/<relative path> is false,
  // so relative paths there are rejected without being joined to dir.
  bool may_match_below(const char* dir, size_t len) const { return below_mask(dir, len) != 0; }
  // The globs that pass may_match_below(dir, len) alone: bit i for glob i.
  unsigned long long below_mask(const char* dir, size_t len) const;
  // may_match(dir/rel) for the globs of mask = below_mask(dir, dir_len), without joining
  // the normal relative path rel (rel_len bytes) to dir: their literal prefixes beyond
  // dir and its slash must begin rel.
  bool may_match_relative(const char* rel, size_t rel_len, size_t dir_len,
                          unsigned long long mask) const;
  // True if files directly inside dir could be captured (some glob's directory part
  // matches dir, or a '*' of its last component spans dir: "/ck/*" holds /ck/sub/f),
  // so a directory listing must ask the forwarder for its names.
  bool dir_may_hold(const char* dir) const;

 private:
  char buf_[kSpecBytes] = {};
  const char* patterns_[kMaxPatterns] = {};
  size_t prefix_len_[kMaxPatterns] = {};  // literal prefix: patterns_[i][0, prefix_len_[i])
  size_t suffix_at_[kMaxPatterns] = {};   // literal suffix: patterns_[i] + suffix_at_[i]
  size_t count_ = 0;
  char stage_prefix_[PATH_MAX] = {};  // "<stage root>/ckptfwd-"
  char store_[PATH_MAX] = {};
};

// Length of path if it is absolute and already normal (what normalize_path would return
// unchanged: no empty, "." or ".." component, no trailing '/'), else 0.
size_t normal_abs_length(const char* path);
// Length of path if it is a non-empty relative path whose components are all plain
// names (joined to a normal directory it gives a normal path), else 0.
size_t normal_rel_length(const char* path);

// True if some component of path is exactly ".ckptfwd" (a store directory).
bool has_store_component(const char* path);
// True for ROMIO's hidden shared-file-pointer files (".NAME.shfp.<id>").
bool is_romio_shared_fp(const char* path);

// 64-bit FNV-1a of a path: stable inode numbers for synthesized stat/dirent entries.
unsigned long long path_hash(const char* path);

}  // namespace ckptfwd::interpose
