// Where `ckptfwd export` puts the array: an mmap of a temporary file beside OUT (renamed
// over OUT once complete, or handed to the .h5 writer), or memory written to stdout.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::cli {

class ExportOutput {
 public:
  ~ExportOutput();
  // size bytes for OUT (to: a path, or "-" for stdout). False with *err.
  bool open(const std::string& to, uint64_t size, std::string* err);
  uint8_t* data() { return map_ ? static_cast<uint8_t*>(map_) : mem_.data(); }
  // Makes the bytes OUT: renamed over it (left to writeback, as restore leaves its files),
  // or written to stdout.
  bool commit(std::string* err);
  // The temporary file holding the bytes (the mapping is the page cache's, so another
  // process reads them as written), for another writer to read; removed
  // with this object. Not for "-".
  bool temp_file(std::string* path, std::string* err);

 private:
  std::string to_, tmp_;
  int fd_ = -1;
  void* map_ = nullptr;
  uint64_t size_ = 0;
  std::vector<uint8_t> mem_;
};

}  // namespace ckptfwd::cli
