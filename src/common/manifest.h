// The store's manifest: an append-only journal STORE/MANIFEST of commits, renames and
// unlinks; the catalog is its replay. One record per line, tab separated, fields
// percent-encoded ('%', tab, newline, CR -> %25 %09 %0A %0D), ending in "\t#<xxh64 hex>" of
// everything before it. A record is appended with one O_APPEND write then fdatasync.
// A torn or corrupt line (bad checksum) is skipped on replay and reported.
//   commit  <container file name>  <n>  { <path> <file index> <size> <mode octal> <mtime_ns> }*n
//   rename  <old path> <new path>
//   unlink  <path>
//   chmod   <path>  <mode octal>       (permission bits changed after the commit)
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ckptfwd {

struct CatalogEntry {
  std::string path;
  std::string container;  // file name inside the store directory
  uint32_t file_index = 0;
  uint64_t size = 0;
  uint32_t mode = 0644;
  int64_t mtime_ns = 0;
};

namespace manifest {
// Creates the store directory (0700 if new) when missing.
bool ensure_store(const std::string& store_dir, std::string* err);
bool append_commit(const std::string& store_dir, const std::string& container,
                   const std::vector<CatalogEntry>& files, std::string* err);
bool append_rename(const std::string& store_dir, const std::string& from, const std::string& to,
                   std::string* err);
bool append_unlink(const std::string& store_dir, const std::string& path, std::string* err);
bool append_chmod(const std::string& store_dir, const std::string& path, uint32_t mode,
                  std::string* err);
}  // namespace manifest

class Catalog {
 public:
  // Replays STORE/MANIFEST. A missing manifest is an empty catalog (true).
  bool load(const std::string& store_dir, std::string* err);
  // Newest committed version of path, or nullptr.
  const CatalogEntry* find(const std::string& path) const;
  const std::map<std::string, CatalogEntry>& entries() const { return live_; }
  // Every container named by any record (live or superseded).
  const std::vector<std::string>& containers() const { return containers_; }
  // Lines skipped for a bad checksum or syntax, each "MANIFEST:<line>: reason".
  const std::vector<std::string>& problems() const { return problems_; }
  // Applies a record in memory (used by load and by the forwarder to stay in sync).
  void apply_commit(const std::string& container, const std::vector<CatalogEntry>& files);
  void apply_rename(const std::string& from, const std::string& to);
  void apply_unlink(const std::string& path);
  // Sets the mode of path's live entry (no-op if path is not live).
  void apply_chmod(const std::string& path, uint32_t mode);

 private:
  std::map<std::string, CatalogEntry> live_;
  std::vector<std::string> containers_;
  std::vector<std::string> problems_;
};

}  // namespace ckptfwd
