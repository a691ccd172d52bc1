#include "forwarder/util/yield_gate.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ckptfwd::fwd {

YieldGate::~YieldGate() {
  if (map_) munmap(map_, activity::kBytes);
}

bool YieldGate::attach(const std::string& session_dir, std::string* err) {
  const std::string path = session_dir + "/" + activity::kFileName;
  auto fail = [&](const char* what) {
    if (err) *err = path + ": " + what + (errno ? std::string(": ") + strerror(errno) : "");
    return false;
  };
  errno = 0;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot open");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return fail("not a regular file of ours");
  }
  // A file of an earlier forwarder of this session keeps its magic and its word (the
  // libraries map it); a new, short or foreign one is written whole with write(2), never
  // through the mapping: on a full tmpfs that fails with ENOSPC here, where a store into
  // a hole of a mapping would kill the process with SIGBUS.
  uint64_t magic = 0;
  if (st.st_size < static_cast<off_t>(activity::kBytes) ||
      pread(fd, &magic, sizeof(magic), 0) != static_cast<ssize_t>(sizeof(magic)) ||
      magic != activity::kMagic) {
    char page[activity::kBytes] = {};
    memcpy(page, &activity::kMagic, sizeof(activity::kMagic));
    if (pwrite(fd, page, sizeof(page), 0) != static_cast<ssize_t>(sizeof(page))) {
      close(fd);
      return fail("cannot write");
    }
  }
  void* base = mmap(nullptr, activity::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return fail("cannot map");
  map_ = base;
  clock_ = activity::clock_of(base);
  return true;
}

void YieldGate::note_write(int64_t now_ns) {
  int64_t seen = opened_ns_.load(std::memory_order_relaxed);
  while (seen < now_ns && !opened_ns_.compare_exchange_weak(seen, now_ns)) {
  }
}

// The latest write the node's processes reported: a time in the future (another clock, a
// hostile value) counts as none.
int64_t YieldGate::latest_write(int64_t now_ns) const {
  int64_t latest = opened_ns_.load(std::memory_order_relaxed);
  if (clock_) {
    uint64_t w = clock_->load(std::memory_order_relaxed);
    if (w <= static_cast<uint64_t>(now_ns)) latest = std::max(latest, static_cast<int64_t>(w));
  }
  return latest > now_ns ? 0 : latest;
}

int64_t YieldGate::hold_ns(int64_t now_ns) {
  if (max_hold_ns_ <= 0) return 0;
  const int64_t latest = latest_write(now_ns);
  const bool writing = latest > 0 && now_ns - latest < kQuietNs;
  std::lock_guard lk(mu_);
  // The time since the last answer was held (spent) or not (refilled).
  const int64_t dt = last_ns_ > 0 && now_ns > last_ns_ ? now_ns - last_ns_ : 0;
  budget_ns_ = std::clamp(budget_ns_ + (holding_ ? -dt : dt), int64_t{0}, max_hold_ns_);
  if (now_ns > last_ns_) last_ns_ = now_ns;
  holding_ = writing && budget_ns_ > 0 && !(demand_ && demand_());
  return holding_ ? std::min(budget_ns_, latest + kQuietNs - now_ns) : 0;
}

}  // namespace ckptfwd::fwd
