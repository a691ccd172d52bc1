// A file several nodes wrote (a catalog entry with overlays), made whole for reading its
// variables. No stored map describes it: each layer's container holds one node's bytes, and
// the forwarder that wrote a layer never saw the others. So its bytes are stacked as a
// restore stacks them (store/manifest/materialize.h, every hash checked) into a temporary
// file, and its map is inferred there by the inference the forwarder runs on a
// sealed version (schema/infer.h: schemas, HDF5 and netCDF headers, ...), given the MPI-IO
// views every layer recorded; the file is unlinked once inferred (the HDF5 helper opens
// it by name) and read through its mapping. Reading a variable of it decodes the whole
// file once.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store.h"

namespace ckptfwd::cli {

class StackedFile {
 public:
  ~StackedFile();
  // Stacks e's layers from cache's containers into a file under $TMPDIR (or /tmp), only
  // this user's (0600), removed by infer() or the destructor. False with *err
  // naming the layer that failed, or the temporary directory that could not take it.
  bool open(const CatalogEntry& e, ContainerCache& cache, std::string* err);
  // The inferred map (source "" when nothing describes the file); *note as Inferrer::infer
  // gives it. False with *err when the configuration (a schema) cannot be loaded.
  bool infer(const std::string& path, VariableMap& out, std::string* note, std::string* err);
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool counted = false;  // its size was counted in a command's decoded bytes
  // Whether any layer's bytes were stored lossy: true with their merged record (read
  // from the layers' chunk headers the first time it is asked).
  bool lossy(codec::LossyRecord* out) const;

 private:
  std::vector<ViewShape> views_;
  std::vector<std::pair<const ContainerReader*, uint32_t>> layers_;  // (reader, file index)
  mutable std::optional<codec::LossyRecord> lossy_;
  mutable bool lossy_known_ = false;
  std::string name_;  // the temporary file's name until inferred, then unlinked
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace ckptfwd::cli
