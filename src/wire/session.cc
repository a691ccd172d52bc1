#include "wire/session.h"

#include <limits.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "wire/setting_value.h"

namespace ckptfwd {

static const char* env_or(const char* a, const char* b, const char* c, const char* dflt) {
  for (const char* name : {a, b, c}) {
    const char* v = !name                               ? nullptr
                    : strncmp(name, "CKPTFWD_", 8) == 0 ? wire::setting_value(name)
                                                        : getenv(name);
    if (v && *v) return v;
  }
  return dflt;
}

// Job and node ids become part of a file name: keep them to a safe alphabet.
static void sanitize_into(char* out, size_t cap, const char* in) {
  size_t n = 0;
  for (; *in && n + 1 < cap; ++in) {
    char c = *in;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    out[n++] = ok ? c : '_';
  }
  out[n] = '\0';
}

unsigned capture_digest(const char* spec, const char* base) {
  uint32_t h = 2166136261u;  // FNV-1a, 32 bits
  auto mix = [&h](const char* s, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(s[i]);
      h *= 16777619u;
    }
  };
  bool any = false;
  for (const char* p = spec; p && *p;) {
    const char* e = strchr(p, ':');
    size_t len = e ? static_cast<size_t>(e - p) : strlen(p);
    char raw[PATH_MAX], norm[PATH_MAX];
    // As the library's capture set takes them (interpose/setup/capture.cc): empty entries
    // skipped, each made absolute and normalised.
    if (len > 0 && len < sizeof(raw)) {
      memcpy(raw, p, len);
      raw[len] = '\0';
      if (normalize_path(raw, base, norm, sizeof(norm))) {
        if (any) mix(":", 1);
        mix(norm, strlen(norm));
        any = true;
      }
    }
    if (!e) break;
    p = e + 1;
  }
  return any ? h : 0;
}

void job_identity_from(const char* const values[kJobIdSources], const char* capture,
                       const char* base, char* out, size_t cap) {
  if (cap == 0) return;
  for (size_t i = 0; i < kJobIdSources; ++i)
    if (values[i] && *values[i]) return sanitize_into(out, cap, values[i]);
  unsigned digest = capture_digest(capture, base);
  char local[32];
  if (digest)
    snprintf(local, sizeof(local), "local-%08x", digest);
  else
    snprintf(local, sizeof(local), "0");
  sanitize_into(out, cap, local);
}

// job_identity with capture standing for CKPTFWD_CAPTURE. An element of an LSF job array
// (LSB_JOBINDEX not 0) is "<LSB_JOBID>.<index>": its elements share LSB_JOBID.
static void job_identity_for(const char* capture, char* out, size_t cap) {
  const char* values[kJobIdSources];
  char lsf[96];
  const char* index = getenv("LSB_JOBINDEX");
  for (size_t i = 0; i < kJobIdSources; ++i) {
    values[i] = strncmp(kJobIdVariables[i], "CKPTFWD_", 8) == 0
                    ? wire::setting_value(kJobIdVariables[i])
                    : getenv(kJobIdVariables[i]);
    if (!strcmp(kJobIdVariables[i], "LSB_JOBID") && values[i] && *values[i] && index && *index &&
        strcmp(index, "0") != 0) {
      int n = snprintf(lsf, sizeof(lsf), "%s.%s", values[i], index);
      if (n > 0 && static_cast<size_t>(n) < sizeof(lsf)) values[i] = lsf;
    }
  }
  job_identity_from(values, capture, nullptr, out, cap);
}

void job_identity(char* out, size_t cap) {
  job_identity_for(wire::setting_value("CKPTFWD_CAPTURE"), out, cap);
}

void node_identity_from(const char* node_id, const char* slurmd_nodename, const char* host,
                        char* out, size_t cap) {
  if (cap == 0) return;
  if (!host || !*host) host = "localhost";
  const char* name = host;
  char both[512];
  size_t label = strcspn(host, ".");
  if (node_id && *node_id) {
    name = node_id;
  } else if (slurmd_nodename && *slurmd_nodename) {
    size_t n = strlen(slurmd_nodename);
    bool names_this_host =
        !strcmp(slurmd_nodename, host) || (n == label && !strncmp(slurmd_nodename, host, n));
    // Otherwise "<slurm node>.<host label>": the host part keeps two hosts apart.
    if (!names_this_host)
      snprintf(both, sizeof(both), "%s.%.*s", slurmd_nodename, static_cast<int>(label), host);
    name = names_this_host ? slurmd_nodename : both;
  }
  sanitize_into(out, cap, name);
}

void node_identity(char* out, size_t cap) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  node_identity_from(wire::setting_value("CKPTFWD_NODE_ID"), getenv("SLURMD_NODENAME"), host, out,
                     cap);
}

bool staged_file(const char* dir, unsigned long long vid, const char* ext, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/v%llu.%s", dir, vid, ext);
  return n > 0 && static_cast<size_t>(n) < cap;
}

bool session_paths(SessionPaths& p, const char* capture) {
  // Absolute and normalised: the forwarder works in `/` and must derive the same names as
  // the library (a relative root used to put its socket elsewhere, stalling every open).
  const char* root = env_or("CKPTFWD_STAGE_DIR", nullptr, nullptr, "/dev/shm");
  if (!normalize_path(root, nullptr, p.stage_root, sizeof(p.stage_root))) return false;
  char* job = p.job;
  job_identity_for(capture ? capture : wire::setting_value("CKPTFWD_CAPTURE"), job, sizeof(p.job));
  node_identity(p.node, sizeof(p.node));
  int n = snprintf(p.dir, sizeof(p.dir), "%s/ckptfwd-%u-%s-%s", p.stage_root,
                   static_cast<unsigned>(getuid()), job, p.node);
  if (n < 0 || static_cast<size_t>(n) >= sizeof(p.dir)) return false;
  // sun_path is 108 bytes; keep the socket name short and check it fits there.
  n = snprintf(p.socket, sizeof(p.socket), "%s/sock", p.dir);
  if (n < 0 || n >= 108) return false;
  n = snprintf(p.lock, sizeof(p.lock), "%s/lock", p.dir);
  return n > 0 && static_cast<size_t>(n) < sizeof(p.lock);
}

namespace {
// The value of the first of these variables that holds a number; -1 if none does.
int first_rank_of(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = getenv(name);
    if (v && *v >= '0' && *v <= '9') return atoi(v);
  }
  return -1;
}
}  // namespace

int rank_from_env() {
  return first_rank_of({"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"});
}

bool launched_as_mpi_rank() {
  return first_rank_of({"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"}) >= 0;
}

bool path_setting_keeps(const char* name, const char* value) {
  return strcmp(name, "CKPTFWD_LOG") == 0 &&
         (strcmp(value, "stderr") == 0 || strcmp(value, "syslog") == 0);
}

bool normalize_path(const char* path, const char* base, char* out, size_t cap) {
  char tmp[PATH_MAX * 2];
  if (path[0] == '/') {
    if (strlen(path) >= sizeof(tmp)) return false;
    strcpy(tmp, path);
  } else {
    char cwd[PATH_MAX];
    if (!base) {
      if (!getcwd(cwd, sizeof(cwd))) return false;
      base = cwd;
    }
    int n = snprintf(tmp, sizeof(tmp), "%s/%s", base, path);
    if (n < 0 || static_cast<size_t>(n) >= sizeof(tmp)) return false;
  }
  // Walk components, keeping a stack of component start offsets in out.
  size_t len = 0;
  size_t starts[PATH_MAX / 2];
  size_t depth = 0;
  const char* p = tmp;
  while (*p) {
    while (*p == '/') ++p;
    if (!*p) break;
    const char* e = p;
    while (*e && *e != '/') ++e;
    size_t clen = static_cast<size_t>(e - p);
    if (clen == 1 && p[0] == '.') {
      // skip
    } else if (clen == 2 && p[0] == '.' && p[1] == '.') {
      if (depth > 0) len = starts[--depth];
    } else {
      if (len + 1 + clen + 1 > cap || depth >= sizeof(starts) / sizeof(starts[0])) return false;
      starts[depth++] = len;
      out[len++] = '/';
      memcpy(out + len, p, clen);
      len += clen;
    }
    p = e;
  }
  if (len == 0) {
    if (cap < 2) return false;
    out[len++] = '/';
  }
  out[len] = '\0';
  return true;
}

}  // namespace ckptfwd
