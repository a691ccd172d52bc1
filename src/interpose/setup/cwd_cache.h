// The current directory, kept so that a relative path costs no getcwd() in every wrapped
// call: filled at init, refreshed after each chdir/fchdir the process makes (wrap_cwd.cc)
// and in a forked child. Readers copy it under a sequence count (no lock), so a copy torn
// by a concurrent refresh is never used.
// A vfork child shares our memory but not our working directory: its chdir makes the copy
// untrusted until this process changes directory itself (then every relative path pays
// getcwd, as without the cache). A directory change the library cannot see (glibc's
// own fts or nftw with FTW_CHDIR, which call chdir inside libc) leaves it stale: the
// docs/user-guide.md says so.
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

// Copies the working directory into out (PATH_MAX bytes) and returns its length, or 0
// when no trusted copy is at hand (the caller then asks getcwd).
size_t cwd_copy(char* out, unsigned* generation = nullptr);
// Which copy of the working directory is current: a number that changes with every
// refresh (never 0), or 0 while there is no trusted copy. cwd_copy's *generation says which
// copy it made.
unsigned cwd_generation();
// After the working directory changed in this process (or at init): getcwd into the copy.
void cwd_refresh();
// A process sharing our memory (vfork child) changed its own directory, or a chdir came
// while the library was busy: stop trusting the copy until the next refresh.
void cwd_distrust();
// Forked child: the copy may have been half written by a thread the child does not have.
void cwd_atfork_child();

}  // namespace ckptfwd::interpose
