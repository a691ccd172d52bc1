#include "progress.h"

#include <unistd.h>

#include <cstdio>

#include "store.h"

namespace ckptfwd::cli {

Progress::Progress(std::string verb, std::string unit, size_t items, unsigned long long bytes)
    : on_(isatty(STDERR_FILENO)),
      verb_(std::move(verb)),
      unit_(std::move(unit)),
      items_(items),
      bytes_(bytes) {}

void Progress::update(size_t done, unsigned long long bytes_done) {
  if (!on_) return;
  const int width = 30;
  double frac = bytes_ ? static_cast<double>(bytes_done) / static_cast<double>(bytes_)
                       : (items_ ? static_cast<double>(done) / static_cast<double>(items_) : 1);
  int fill = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.resize(width, ' ');
  fprintf(stderr, "\r%s [%s] %zu/%zu %s, %s   ", verb_.c_str(), bar.c_str(), done, items_,
          unit_.c_str(), human_bytes(bytes_done).c_str());
  fflush(stderr);
}

void Progress::finish() {
  if (on_) fputs("\n", stderr);
  on_ = false;
}

}  // namespace ckptfwd::cli
