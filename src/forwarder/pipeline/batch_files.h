// Opening the files of a batch for its encoding (pipeline.cc).
#pragma once
#include <sys/stat.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "forwarder/pipeline/in_place.h"
#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/mapped_file.h"
#include "forwarder/util/worker_pool.h"
#include "store/container/container.h"

namespace ckptfwd::fwd {

// The files of a batch as opened for its encoding (open_batch_files): their mappings, the
// container entries and merge inputs made of them, the extents each file's hash covers,
// and for the in-place files (BatchFile.in_place) what tells whether they changed while
// they were read (in_place.h).
struct OpenedFiles {
  explicit OpenedFiles(size_t n)
      : maps(n), watched(n, 0), guards(n), identity(n), entries(n), inputs(n), hashed(n) {}

  std::vector<MappedFile> maps;
  // In-place files: watched from before their first read, their mappings guarded.
  ModifyWatches watches;
  std::vector<char> watched;
  std::vector<std::unique_ptr<BusGuard>> guards;
  std::vector<struct stat> identity;
  bool any_in_place = false;
  std::vector<FileEntry> entries;
  std::vector<MergeInput> inputs;
  std::vector<Extents> hashed;
};

// Maps every file of the batch (a live snapshot that is not read in place into private
// memory) and makes its entry, merge input and hashed extents; the in-place files are
// watched before the first of them is read. An in-place file that cannot be watched goes
// into *changed (to be copied). False with *err when a file cannot be read.
bool open_batch_files(const std::vector<BatchFile>& files, WorkerPool& pool, OpenedFiles& o,
                      BatchResult& out, std::vector<size_t>* changed, std::string* err);

}  // namespace ckptfwd::fwd
