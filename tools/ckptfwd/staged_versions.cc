#include "staged_versions.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/lease_journal.h"
#include "common/staged_meta.h"
#include "wire/lease.h"
#include "wire/setting_value.h"

extern char** environ;

namespace ckptfwd::cli {

namespace {

// "v<digits>.meta"
bool is_meta_name(const char* n) {
  if (n[0] != 'v' || !isdigit(static_cast<unsigned char>(n[1]))) return false;
  const char* p = n + 1;
  while (isdigit(static_cast<unsigned char>(*p))) ++p;
  return strcmp(p, ".meta") == 0;
}

std::string abs_against_cwd(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof(cwd)) ? std::string(cwd) + "/" + p : p;
}

std::string forwarder_binary() {
  if (const char* f = wire::setting_value("CKPTFWD_FORWARDER"); f && *f) return f;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "ckptfwd-forwarder";
  std::string s(self, static_cast<size_t>(n));
  return s.substr(0, s.rfind('/')) + "/ckptfwd-forwarder";
}

// This process's environment as the forwarder's (see start_forwarder).
std::vector<std::string> forwarder_env() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    if (eq == std::string::npos || key == "LD_PRELOAD") continue;
    std::string val = kv.substr(eq + 1);
    if (key == "CKPTFWD_CAPTURE") val = absolute_globs(val);
    for (const char* k : kForwarderPathSettings)
      if (key == k && !path_setting_keeps(k, val.c_str())) val = abs_against_cwd(val);
    env.push_back(key + "=" + val);
  }
  return env;
}

}  // namespace

std::string absolute_globs(const std::string& globs) {
  std::string out;
  size_t b = 0;
  for (;;) {
    size_t e = globs.find(':', b);
    std::string g = globs.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!g.empty()) {
      if (!out.empty()) out += ':';
      out += abs_against_cwd(g);
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::vector<StagedVersion> closed_staged_versions(const std::string& dir) {
  std::vector<StagedVersion> out;
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* de = readdir(d)) {
    if (!is_meta_name(de->d_name)) continue;
    std::string meta = dir + "/" + de->d_name;
    std::string data = meta.substr(0, meta.size() - 5) + ".data";
    struct stat ms, ds;
    if (lstat(meta.c_str(), &ms) != 0 || !S_ISREG(ms.st_mode) || ms.st_size == 0 ||
        lstat(data.c_str(), &ds) != 0)
      continue;  // empty: an OPEN that never replied; no data: committed meanwhile
    // A lease's (wire/lease.h): a version not closed, whose client writes the real path.
    if (wire::is_lease_meta_file(meta.c_str())) continue;
    VersionMeta m;
    if (read_meta_file(meta, m, nullptr) && !m.closed) continue;
    out.push_back({meta, m.path});  // closed, or unreadable: either way not committed
  }
  closedir(d);
  // Leased versions are described in the journal instead (common/lease_journal.h), where
  // they have no .meta of their own.
  for (const auto& [vid, text] : journal_descriptions(dir)) {
    const std::string stem = dir + "/v" + std::to_string(vid);
    struct stat ms, ds;
    if (lstat((stem + ".data").c_str(), &ds) != 0 || lstat((stem + ".meta").c_str(), &ms) == 0)
      continue;
    if (text == wire::kLeaseMeta) continue;  // not closed: its client writes the real path
    VersionMeta m;
    if (!parse_meta(text, m) || m.closed)  // closed, or unreadable: either way not committed
      out.push_back({dir + "/journal.* (v" + std::to_string(vid) + ")", m.path});
  }
  return out;
}

bool start_forwarder(const SessionPaths& sp, std::string* why) {
  const char* cap = wire::setting_value("CKPTFWD_CAPTURE");
  const char* store = wire::setting_value("CKPTFWD_STORE");
  if ((!cap || !*cap) && (!store || !*store)) {
    *why =
        "neither CKPTFWD_CAPTURE nor CKPTFWD_STORE is set, and which store a staged file "
        "goes to depends on them: run ckptfwd drain with the job's settings";
    return false;
  }
  std::string bin = forwarder_binary();
  if (access(bin.c_str(), X_OK) != 0) {
    *why = "cannot run " + bin + " (" + strerror(errno) + "; set CKPTFWD_FORWARDER)";
    return false;
  }
  // The election lock, as the library takes it: one forwarder per session.
  int lock = open(sp.lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) {
    *why = std::string("cannot take the election lock ") + sp.lock + ": " + strerror(errno);
    if (lock >= 0) close(lock);
    return false;
  }
  std::vector<std::string> env = forwarder_env();
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {bin.data(), const_cast<char*>("--daemon"), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  if (rc == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  close(lock);
  if (rc != 0) {
    *why = "cannot start " + bin + ": " + strerror(rc);
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = bin + " --daemon failed (status " +
           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
           "; its message is above or in CKPTFWD_LOG)";
    return false;
  }
  return true;
}

}  // namespace ckptfwd::cli
