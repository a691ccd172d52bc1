// STORE/MANIFEST.tail: what the MANIFEST looked like after the latest append (manifest.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "store/manifest/end_mark.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::manifest {

void write_tail(const std::string& store_dir, uint64_t size, uint64_t checksum) {
  std::string path = store_dir + "/MANIFEST.tail", tmp = path + ".tmp." + std::to_string(getpid());
  std::string refused;
  int fd = open_owned(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600, &refused);
  if (fd < 0) return;  // only verify's truncation check is weaker without it
  char line[64];
  int n = snprintf(line, sizeof(line), "%" PRIu64 " %s\n", size,
                   manifest_record::hex64(checksum).c_str());
  bool ok = n > 0 && ::write(fd, line, static_cast<size_t>(n)) == n;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

namespace {

// Whether MANIFEST (mpath) ends, at byte size, with the record whose checksum is want;
// else *problem says how it does not.
bool tail_matches(const std::string& mpath, const std::string& path, uint64_t size, uint64_t want,
                  std::string* problem) {
  int fd = ::open(mpath.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) refresh_attributes(fd);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    *problem = mpath + ": missing, but " + path + " says an append left it " +
               std::to_string(size) + " bytes long";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) < size) {
    ::close(fd);
    *problem = mpath + ": " + std::to_string(st.st_size) + " bytes, but its latest append left " +
               "it " + std::to_string(size) + " bytes long: records were cut off its end";
    return false;
  }
  // The record that ended at byte `size` must be the one appended there.
  uint64_t from = size > (1u << 20) ? size - (1u << 20) : 0;
  std::string text(static_cast<size_t>(size - from), '\0');
  bool read_ok = ::pread(fd, text.data(), text.size(), static_cast<off_t>(from)) ==
                 static_cast<ssize_t>(text.size());
  ::close(fd);
  bool same = false;
  if (read_ok && !text.empty() && text.back() == '\n') {
    size_t b = text.rfind('\n', text.size() - 2);
    b = b == std::string::npos ? 0 : b + 1;
    manifest_record::DecodedLine d =
        manifest_record::decode_line(text.substr(b, text.size() - 1 - b));
    same = d.status != manifest_record::DecodedLine::Status::kNoChecksum && d.checksum == want;
  }
  if (!same)
    *problem = mpath + ": the record that ended at byte " + std::to_string(size) +
               " is not the one appended there (the MANIFEST was cut and rewritten)";
  return same;
}

// Whether the MANIFEST is at least as long as its end mark says (end_mark.h); else
// *problem says it is not.
bool reaches_mark(const std::string& mpath, uint64_t mark, std::string* problem) {
  int fd = ::open(mpath.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return true;  // no MANIFEST, no mark (the mark is its xattr)
  refresh_attributes(fd);
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= mark;
  ::close(fd);
  if (!ok)
    *problem = mpath + ": " + std::to_string(st.st_size) + " bytes, but its latest append left " +
               "it " + std::to_string(mark) + " bytes long (its " + kEndMarkXattr +
               "): records were cut off its end";
  return ok;
}

// Looks again every 50 ms until holds(&finding) or until passes; then *problem (when not
// null) is the last finding.
template <class Holds>
bool settles(Holds&& holds, std::chrono::steady_clock::time_point until, std::string* problem) {
  for (;;) {
    std::string found;
    if (holds(&found)) return true;
    if (std::chrono::steady_clock::now() >= until) {
      if (problem) *problem = found;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

bool check_tail(const std::string& store_dir, std::string* problem) {
  // On a file system whose clients may lag, this client may see the mark or the tail (a
  // new file, renamed in by the appender) before the MANIFEST's growth: a shorter or
  // different end is only told once it stays so for kTailCatchUp.
  const std::string mpath = store_dir + "/MANIFEST";
  const auto until = std::chrono::steady_clock::now() +
                     (view_may_lag(store_dir) ? kTailCatchUp : std::chrono::seconds{0});
  if (const uint64_t mark = end_mark(store_dir);
      mark &&
      !settles([&](std::string* f) { return reaches_mark(mpath, mark, f); }, until, problem))
    return false;
  std::string path = store_dir + "/MANIFEST.tail";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return true;  // a store from before tails, or never appended to
  char buf[128] = {};
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  unsigned long long size = 0;
  char hex[32] = {};
  uint64_t want = 0;
  if (n <= 0 || sscanf(buf, "%llu %31s", &size, hex) != 2 ||
      !manifest_record::parse_hex64(hex, want)) {
    if (problem) *problem = path + ": unreadable (expected '<size> <checksum>')";
    return false;
  }
  return settles([&](std::string* f) { return tail_matches(mpath, path, size, want, f); }, until,
                 problem);
}

}  // namespace ckptfwd::manifest
