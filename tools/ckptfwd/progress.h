// A progress bar on stderr, only when stderr is a terminal (restore, verify): the share
// of bytes done (of items when there are no bytes), "3/8 files, 12.0 MiB".
#pragma once
#include <cstddef>
#include <string>

namespace ckptfwd::cli {

class Progress {
 public:
  // verb: "restoring"; unit: "files".
  Progress(std::string verb, std::string unit, size_t items, unsigned long long bytes);
  void update(size_t done, unsigned long long bytes_done);
  // Ends the bar's line (before anything else is printed on stderr).
  void finish();

 private:
  bool on_;
  std::string verb_, unit_;
  size_t items_;
  unsigned long long bytes_;
};

}  // namespace ckptfwd::cli
