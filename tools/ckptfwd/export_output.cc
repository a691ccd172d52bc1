#include "export_output.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ckptfwd::cli {

ExportOutput::~ExportOutput() {
  if (map_) munmap(map_, size_);
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

bool ExportOutput::open(const std::string& to, uint64_t size, std::string* err) {
  to_ = to;
  size_ = size;
  if (to == "-") {
    mem_.assign(size, 0);
    return true;
  }
  tmp_ = to + ".tmp.XXXXXX";
  fd_ = mkstemp(tmp_.data());
  if (fd_ < 0) {
    *err = "cannot create " + tmp_ + ": " + strerror(errno);
    tmp_.clear();
    return false;
  }
  (void)fchmod(fd_, 0644);  // mkstemp makes 0600; the array is data like any export
  if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    *err = "cannot size " + tmp_ + ": " + strerror(errno);
    return false;
  }
  map_ = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    *err = "cannot map " + tmp_ + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool ExportOutput::commit(std::string* err) {
  if (to_ == "-") {
    if (fwrite(mem_.data(), 1, mem_.size(), stdout) != mem_.size() || fflush(stdout) != 0) {
      *err = std::string("cannot write to stdout: ") + strerror(errno);
      return false;
    }
    return true;
  }
  // Not synced to disk: like a restore, the export leaves its bytes to writeback (the
  // rename only makes the file appear complete); a sync here made export wait for
  // every dirty page of the file system.
  if (rename(tmp_.c_str(), to_.c_str()) != 0) {
    *err = "cannot rename " + tmp_ + " to " + to_ + ": " + strerror(errno);
    return false;
  }
  tmp_.clear();
  return true;
}

bool ExportOutput::temp_file(std::string* path, std::string* err) {
  if (tmp_.empty()) {
    *err = "no temporary file for " + to_;
    return false;
  }
  *path = tmp_;
  return true;
}

}  // namespace ckptfwd::cli
