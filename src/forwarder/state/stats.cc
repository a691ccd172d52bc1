#include "forwarder/state/stats.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/release.h"
#include "forwarder/util/log.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

Stats::Stats() : start_ns(monotonic_ns()) {}

void Stats::set_node(const char* name) { snprintf(node, sizeof(node), "%s", name); }
void Stats::set_job(const char* name) { snprintf(job, sizeof(job), "%s", name); }

uint64_t peak_rss_bytes() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

namespace {
// A tiny bounded appender that never allocates (usable inside a signal handler).
struct Out {
  char* buf;
  size_t cap, n = 0;
  bool ok = true;
  void str(const char* s) {
    size_t l = strlen(s);
    if (n + l >= cap) {
      ok = false;
      return;
    }
    memcpy(buf + n, s, l);
    n += l;
  }
  void u64(uint64_t v) {
    char tmp[24];
    int i = 0;
    do {
      tmp[i++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    char rev[24];
    for (int j = 0; j < i; ++j) rev[j] = tmp[i - 1 - j];
    rev[i] = '\0';
    str(rev);
  }
  // Fixed point with `digits` decimals from an integer scaled by 10^digits.
  void fixed(uint64_t scaled, int digits) {
    uint64_t div = 1;
    for (int i = 0; i < digits; ++i) div *= 10;
    u64(scaled / div);
    str(".");
    uint64_t frac = scaled % div;
    char tmp[24];
    for (int i = digits - 1; i >= 0; --i) {
      tmp[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    tmp[digits] = '\0';
    str(tmp);
  }
  void key(const char* k) {
    str(",\"");
    str(k);
    str("\":");
  }
};

// A stats field: its JSON key and the counter it shows.
struct Field {
  const char* key;
  const std::atomic<uint64_t>* value;
};

// The counters of s, each as ,"name":value.
void write_counters(const Stats& s, Out& o) {
  const Field ints[] = {{"files_captured", &s.files_captured},
                        {"bytes_captured", &s.bytes_captured},
                        {"files_committed", &s.files_committed},
                        {"bytes_committed", &s.bytes_committed},
                        {"bytes_typed", &s.bytes_typed},
                        {"files_mapped", &s.files_mapped},
                        {"bytes_mapped", &s.bytes_mapped},
                        {"infer_failures", &s.infer_failures},
                        {"bytes_deduped", &s.bytes_deduped},
                        {"bytes_referenced", &s.bytes_referenced},
                        {"typed_bytes_in", &s.typed_bytes_in},
                        {"typed_bytes_out", &s.typed_bytes_out},
                        {"bytes_stored", &s.bytes_stored},
                        {"containers_written", &s.containers_written},
                        {"fallbacks", &s.fallbacks},
                        {"errors", &s.errors},
                        {"restores", &s.restores},
                        {"bytes_restored", &s.bytes_restored},
                        {"views_prefetched", &s.views_prefetched},
                        {"read_opens", &s.read_opens},
                        {"read_links", &s.read_links},
                        {"refreshes", &s.refreshes},
                        {"fsync_in_place", &s.fsync_in_place},
                        {"fsync_copies", &s.fsync_copies},
                        {"fsync_batches_beside", &s.fsync_batches_beside},
                        {"reopens_in_place", &s.reopens_in_place},
                        {"leased_opens", &s.leased_opens},
                        {"closes_unwaited", &s.closes_unwaited},
                        {"containers_removed", &s.containers_removed},
                        {"pending_versions", &s.pending_versions},
                        {"waves_sealed", &s.waves_sealed},
                        {"waves_split", &s.waves_split},
                        {"checkpoints_measured", &s.checkpoints_measured},
                        {"ckpt_bytes", &s.ckpt_bytes}};
  for (const Field& f : ints) {
    o.key(f.key);
    o.u64(f.value->load());
  }
}

// The ratios (3 decimals), the phase times (seconds, 6 decimals), the peak RSS and the
// uptime of s.
void write_rates_and_times(const Stats& s, Out& o) {
  uint64_t stored = s.bytes_stored.load(), committed = s.bytes_committed.load();
  o.key("ratio");
  // committed/stored with 3 decimals; 0 before anything was stored.
  unsigned __int128 r = stored ? (static_cast<unsigned __int128>(committed) * 1000) / stored : 0;
  o.fixed(static_cast<uint64_t>(r), 3);
  uint64_t sealed = s.waves_sealed.load(), split = s.waves_split.load();
  o.key("split_rate");
  // waves_split/waves_sealed with 3 decimals; 0 before a wave was sealed.
  o.fixed(sealed ? split * 1000 / sealed : 0, 3);
  // Nanoseconds, shown as seconds with 6 decimals (whole microseconds).
  const Field times[] = {
      {"time_infer_s", &s.infer_ns},          {"time_typed_encode_s", &s.typed_encode_ns},
      {"time_compress_s", &s.compress_ns},    {"time_write_s", &s.write_ns},
      {"time_commit_s", &s.commit_ns},        {"time_hash_s", &s.hash_ns},
      {"ckpt_blocked_s", &s.ckpt_blocked_ns}, {"ckpt_durable_s", &s.ckpt_durable_ns},
      {"time_yield_s", &s.yield_ns}};
  for (const Field& f : times) {
    o.key(f.key);
    o.fixed(f.value->load() / 1000, 6);
  }
  o.key("peak_rss_bytes");
  o.u64(peak_rss_bytes());
  o.key("uptime_s");
  int64_t up = monotonic_ns() - s.start_ns;
  o.fixed(static_cast<uint64_t>(up > 0 ? up : 0) / 1000000, 3);
}
}  // namespace

size_t Stats::format_json(char* buf, size_t cap) const {
  Out o{buf, cap};
  o.str("{\"source\":\"forwarder\"");
  if (node[0]) {
    // Needs no escaping: a node identity is sanitised to [A-Za-z0-9._-].
    o.str(",\"node\":\"");
    o.str(node);
    o.str("\"");
  }
  if (job[0]) {  // (sanitised as the node identity)
    o.str(",\"job\":\"");
    o.str(job);
    o.str("\"");
  }
  o.str(",\"version\":\"");
  o.str(release_version());
  o.str("\"");
  o.str(",\"pid\":");
  o.u64(static_cast<uint64_t>(getpid()));
  write_counters(*this, o);
  write_rates_and_times(*this, o);
  o.str("}");
  if (!o.ok) return 0;
  buf[o.n] = '\0';
  return o.n;
}

std::string Stats::to_json() const {
  char buf[2048];
  size_t n = format_json(buf, sizeof(buf));
  return std::string(buf, n);
}

void append_stats_line(const std::string& file, const std::string& json) {
  std::string line = json + "\n";
  int fd = 2;
  if (!file.empty()) {
    // Never through a symbolic link, never into another user's file: either may be
    // planted where CKPTFWD_STATS_FILE names a directory others can write (/tmp).
    std::string refused;
    fd = open_owned(file, O_WRONLY | O_APPEND | O_CREAT, 0600, &refused);
    if (fd < 0) {
      LOG_WARN(
          "cannot append stats to %s: %s. Fix: set CKPTFWD_STATS_FILE to a writable file of "
          "yours",
          file.c_str(), refused.empty() ? strerror(errno) : refused.c_str());
      return;
    }
  }
  ssize_t w = write(fd, line.data(), line.size());
  (void)w;
  if (fd != 2) close(fd);
}

}  // namespace ckptfwd::fwd
