// The library's side of read links: a read-only open served without a request.
#include <fcntl.h>
#include <string.h>

#include "interpose/setup/state.h"
#include "interpose/track/activity_clock.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"
#include "wire/read_link.h"

namespace ckptfwd::interpose {

bool find_read_link(const char* norm, int flags, OpenReply& r) {
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) return false;
  if (t_real_path_absent != norm || !g_settings.session_ok || !read_links_on()) return false;
  activity::Word* gen = namespace_word();
  if (!gen) return false;
  char name[PATH_MAX];
  if (!wire::read_link_name(g_settings.session.dir, norm, gen->load(std::memory_order_seq_cst),
                            name, sizeof(name)))
    return false;
  int saved = errno;
  struct stat st;
  // The session directory is ours and closed to others (checked at connect): nobody else
  // can have put a file there.
  bool found = real::lstat()(name, &st) == 0 && S_ISREG(st.st_mode);
  errno = saved;
  if (!found) return false;
  r.status = Status::kOk;
  r.err = 0;
  r.vid = 0;
  r.budget = -1;
  r.extents = false;
  r.shared = false;
  r.view_mode = static_cast<unsigned>(st.st_mode & 07777);
  memcpy(r.staged, name, strlen(name) + 1);
  return true;
}

}  // namespace ckptfwd::interpose
