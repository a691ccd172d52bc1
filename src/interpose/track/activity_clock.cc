#include "interpose/track/activity_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/client/notices.h"
#include "interpose/setup/state.h"
#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {

std::atomic<activity::Clock*> g_activity{nullptr};
std::atomic<void*> g_activity_page{nullptr};
std::atomic<unsigned long long> g_activity_noted{0};

namespace {
std::atomic<ino_t> g_mapped_ino{0};

// Maps the file unless the one mapped (when mapped) has the same inode.
void map_unless_same(bool check_inode) {
  if (!g_settings.session_ok) return;
  if (g_activity.load() && !check_inode) return;
  int saved = errno;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof(path), "%s/%s", g_settings.session.dir, activity::kFileName);
  int fd = n > 0 && static_cast<size_t>(n) < sizeof(path)
               ? real::open()(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
               : -1;
  if (fd >= 0) {
    struct stat st {};
    void* base = MAP_FAILED;
    if (real::fstat()(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        st.st_size >= static_cast<off_t>(activity::kBytes) &&
        !(g_activity.load() && g_mapped_ino.load() == st.st_ino))
      base = mmap(nullptr, activity::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    real::close()(fd);
    if (base != MAP_FAILED) {
      activity::Clock* clock = activity::clock_of(base);
      if (clock) {
        // A file replaced (a new session directory): the old mapping is left in place,
        // never unmapped, since another thread may be storing to it right now.
        g_mapped_ino.store(st.st_ino);
        g_activity_page.store(base);
        notices_from_start();  // (after: a print racing it reads the new page's word)
        g_activity.store(clock);
      } else {
        munmap(base, activity::kBytes);
      }
    }
  }
  errno = saved;
}
}  // namespace

void map_activity_clock() { map_unless_same(false); }
void remap_activity_clock() { map_unless_same(true); }

}  // namespace ckptfwd::interpose
