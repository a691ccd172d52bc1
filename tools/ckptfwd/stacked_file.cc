#include "stacked_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/config.h"
#include "schema/infer.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::cli {

StackedFile::~StackedFile() {
  if (data_ && size_) munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) close(fd_);
  if (!name_.empty()) unlink(name_.c_str());
}

bool StackedFile::open(const CatalogEntry& e, ContainerCache& cache, std::string* err) {
  const char* env = getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/tmp";
  name_ = dir + "/ckptfwd-stacked.XXXXXX";
  fd_ = mkostemp(name_.data(), O_CLOEXEC);
  if (fd_ < 0) {
    name_.clear();
    *err = "cannot make a temporary file in " + dir + " to stack the layers of " + e.path + ": " +
           strerror(errno) + " (set TMPDIR to a writable directory)";
    return false;
  }
  ContainerSource source = [&](const std::string& name, std::string* why) {
    return cache.get(name, why);
  };
  std::string why;
  if (!materialize_entry(e, source, fd_, &why, true)) {
    *err = e.path + ": " + why;
    return false;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    *err = "cannot stat the stacked copy of " + e.path + ": " + strerror(errno);
    return false;
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      *err = "cannot map the stacked copy of " + e.path + ": " + strerror(errno);
      size_ = 0;
      return false;
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  auto add_layer = [&](const std::string& container, uint32_t index) {
    std::string ignored;
    ContainerReader* r = container.empty() ? nullptr : cache.get(container, &ignored);
    if (!r || index >= r->files().size()) return;
    layers_.push_back({r, index});
    for (const ViewShape& v : r->files()[index].views) {
      bool seen = false;
      for (const ViewShape& w : views_) seen = seen || w == v;
      if (!seen) views_.push_back(v);
    }
  };
  add_layer(e.container, e.file_index);
  for (const Layer& l : e.overlays) add_layer(l.container, l.file_index);
  return true;
}

bool StackedFile::lossy(codec::LossyRecord* out) const {
  if (!lossy_known_) {
    codec::LossyRecord merged;
    bool any = false;
    for (const auto& [r, index] : layers_) {
      codec::LossyRecord rec;
      if (r->span_lossy(index, 0, r->files()[index].size, &rec))
        codec::merge_lossy(rec, &merged, &any);
    }
    if (any) lossy_ = merged;
    lossy_known_ = true;
  }
  if (lossy_) *out = *lossy_;
  return lossy_.has_value();
}

bool StackedFile::infer(const std::string& path, VariableMap& out, std::string* note,
                        std::string* err) {
  Config cfg;
  if (!Config::load(cfg, err)) return false;
  schema::Inferrer inferrer;
  if (!inferrer.configure(cfg, err)) return false;
  // The HDF5 helper (another process) opens the file by its name (libhdf5 resolves a
  // /proc/PID/fd link to the deleted name and fails): named until inferred.
  out = inferrer.infer(path, name_, data_, size_, {}, note, -1, views_);
  unlink(name_.c_str());
  name_.clear();
  return true;
}

}  // namespace ckptfwd::cli
