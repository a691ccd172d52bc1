#include "forwarder/pipeline/in_place.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <mutex>

namespace ckptfwd::fwd {

ModifyWatches::ModifyWatches() { fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

ModifyWatches::~ModifyWatches() {
  if (fd_ >= 0) ::close(fd_);
}

bool ModifyWatches::add(size_t i, const std::string& path) {
  if (fd_ < 0) return false;
  int wd = inotify_add_watch(fd_, path.c_str(), IN_MODIFY);
  if (wd < 0) return false;
  items_[wd].push_back(i);
  return true;
}

void ModifyWatches::read_events() {
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing (more) pending
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      if (e->mask & IN_Q_OVERFLOW) overflowed_ = true;
      if (auto it = items_.find(e->wd); it != items_.end())
        fired_.insert(it->second.begin(), it->second.end());
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
}

bool ModifyWatches::fired(size_t i) {
  if (fd_ < 0) return true;
  read_events();
  return overflowed_ || fired_.count(i) > 0;
}

namespace {
// One process's maps: does a line name (dev, ino) with perms "?w?s"? *unknown when the
// maps cannot be read (another user's process, /proc hidden).
bool maps_write_shared(long pid, dev_t dev, ino_t ino, bool* unknown) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
  FILE* f = fopen(path, "re");
  if (!f) {
    *unknown = errno != ENOENT && errno != ESRCH;  // gone: maps nothing
    return false;
  }
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof(line), f)) {
    unsigned long lo, hi, off, inode;
    unsigned maj, min;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off, &maj, &min, &inode) != 7)
      continue;
    found = perms[1] == 'w' && perms[3] == 's' && inode == ino && maj == major(dev) &&
            min == minor(dev);
  }
  fclose(f);
  return found;
}
}  // namespace

bool mapped_writable_by(const std::vector<long>& pids, dev_t dev, ino_t ino) {
  for (long pid : pids) {
    bool unknown = false;
    if (maps_write_shared(pid, dev, ino, &unknown) || unknown) return true;
  }
  return false;
}

namespace {
constexpr int kGuardSlots = 64;
struct GuardSlot {
  std::atomic<uintptr_t> lo{0}, hi{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> used{false};
};
GuardSlot g_guards[kGuardSlots];
struct sigaction g_previous_bus;
uintptr_t g_page = 4096;

void on_bus(int sig, siginfo_t* si, void* uc) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(si->si_addr);
  for (GuardSlot& g : g_guards) {
    const uintptr_t lo = g.lo.load(std::memory_order_acquire);
    const uintptr_t hi = g.hi.load(std::memory_order_acquire);
    if (!lo || at < lo || at >= hi) continue;
    // The file was cut below this page: zeros in its place, so the read goes on and the
    // caller, seeing faulted(), throws the bytes away.
    void* page = reinterpret_cast<void*>(at / g_page * g_page);
    if (mmap(page, g_page, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
        MAP_FAILED) {
      g.faulted.store(true, std::memory_order_release);
      return;
    }
  }
  // Not a guarded read: what was there before (the crash handler), else the default.
  if ((g_previous_bus.sa_flags & SA_SIGINFO) && g_previous_bus.sa_sigaction) {
    g_previous_bus.sa_sigaction(sig, si, uc);
  } else if (g_previous_bus.sa_handler != SIG_DFL && g_previous_bus.sa_handler != SIG_IGN) {
    g_previous_bus.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void install_bus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<uintptr_t>(page);
    struct sigaction sa {};
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous_bus);
  });
}
}  // namespace

BusGuard::BusGuard(const void* p, size_t n) {
  if (!p || !n) return;
  install_bus_handler();
  for (int i = 0; i < kGuardSlots; ++i) {
    bool expected = false;
    if (!g_guards[i].used.compare_exchange_strong(expected, true)) continue;
    g_guards[i].faulted.store(false, std::memory_order_relaxed);
    g_guards[i].hi.store(reinterpret_cast<uintptr_t>(p) + n, std::memory_order_release);
    g_guards[i].lo.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
    slot_ = i;
    return;
  }
}

BusGuard::~BusGuard() {
  if (slot_ < 0) return;
  g_guards[slot_].lo.store(0, std::memory_order_release);
  g_guards[slot_].hi.store(0, std::memory_order_release);
  g_guards[slot_].used.store(false, std::memory_order_release);
}

bool BusGuard::faulted() const {
  return slot_ >= 0 && g_guards[slot_].faulted.load(std::memory_order_acquire);
}

}  // namespace ckptfwd::fwd
