// ckptfwd-launch FORWARDER: the preload library's early start of a forwarder (see
// interpose/client/client.h, start_forwarder_early), in a program of its own.
//
// The library must not leave a child of the application behind (a wait() of the
// application would find it), so it waits for the process it spawns to exit. Spawning
// `ckptfwd-forwarder --daemon` and waiting for that process to fork away costs the
// application the forwarder's exec, dynamic linking and start of its allocator (9-10 ms on
// the 2-core test machine). This program costs the exec of a small binary and one fork:
// its child runs `FORWARDER --daemon`, it exits at once. The forwarder, an orphan from its
// first instruction, forks no more (forwarder/daemon/daemonize.h: an election descriptor
// means the starter has detached it).
//
// Descriptors and environment are passed on as they come: the library opened 0-2 and the
// election lock (3, CKPTFWD_ELECTION_FD) for the forwarder and removed LD_PRELOAD.
// Exit status: 0 once the child is forked, 2 for a bad command line, 1 if fork fails. A
// forwarder that cannot start is nobody's to report here: the application's first captured
// call starts one again and says why.
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2 || !argv[1][0]) {
    fputs("usage: ckptfwd-launch PATH/ckptfwd-forwarder (run by libckptfwd.so)\n", stderr);
    return 2;
  }
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) return 0;
  char daemon_flag[] = "--daemon";
  char* args[] = {argv[1], daemon_flag, nullptr};
  execv(argv[1], args);
  _exit(127);
}
