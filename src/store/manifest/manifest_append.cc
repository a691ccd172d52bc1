// Appending records to STORE/MANIFEST (format in manifest.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "store/manifest/end_mark.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_end.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd {

namespace {

using manifest_record::DecodedLine;

bool fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0 || errno == EINVAL;
  ::close(fd);
  return ok;
}

// The line checksum of the last record replay accepts (its checksum matches), 0 when there
// is none: what the next record chains to. Reads backwards from the end in growing blocks
// until a whole valid line is found, so a long commit record costs one read, not the file.
// A torn tail (no final '\n') is ignored, as replay ignores it.
bool last_valid_checksum(int fd, uint64_t size, uint64_t* out) {
  *out = 0;
  for (uint64_t block = 1 << 16;; block *= 2) {
    uint64_t start = size > block ? size - block : 0;
    std::string text(static_cast<size_t>(size - start), '\0');
    size_t got = 0;
    while (got < text.size()) {
      ssize_t r =
          ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(start + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    size_t end = text.rfind('\n');  // end of the last complete line
    while (end != std::string::npos) {
      size_t nl = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
      if (nl == std::string::npos && start > 0) break;  // the line may begin before the block
      size_t b = nl == std::string::npos ? 0 : nl + 1;
      std::string line = text.substr(b, end - b);
      if (!line.empty()) {
        DecodedLine d = manifest_record::decode_line(line);
        if (d.status == DecodedLine::Status::kOk || d.status == DecodedLine::Status::kBadEncoding) {
          *out = d.checksum;
          return true;
        }
      }
      end = nl;
    }
    if (start == 0) return true;  // no valid record at all
  }
}

// store_dir's MANIFEST (path) opened for appending, or -1 with *err set. O_RDWR, not
// O_WRONLY: the chain and the torn-line check pread the end of the file. open_owned:
// never through a symbolic link, never into another user's file.
int open_for_append(const std::string& store_dir, const std::string& path, std::string* err) {
  std::string refused;
  int fd = open_owned(path, O_RDWR | O_APPEND | O_CREAT, 0600, &refused);
  if (fd >= 0) return fd;
  if (!refused.empty()) {
    if (err) *err = refused;
    return -1;
  }
  if (errno == ENOENT) {
    errno = ENOENT;
    if (err)
      *err = path + ": cannot create the manifest: store directory " + store_dir +
             " does not exist (create it with manifest::ensure_store)";
    return -1;
  }
  if (err) *err = path + ": cannot open the manifest for appending: " + strerror(errno);
  return -1;
}

// Takes the open-file-description write lock on the MANIFEST fd, waiting for it. True
// also where the file system refuses such locks (the append goes ahead unlocked); false
// with errno set on any other failure.
bool lock_for_append(int fd) {
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  int lr;
  do {
    lr = ::fcntl(fd, F_OFD_SETLKW, &lk);
  } while (lr != 0 && errno == EINTR);
  return lr == 0 || errno == EINVAL || errno == ENOLCK || errno == EOPNOTSUPP;
}

// Releases lock_for_append's lock: the record is in place, the next appender may chain
// to it.
void unlock_after_append(int fd) {
  struct flock lk {};
  lk.l_type = F_UNLCK;
  lk.l_whence = SEEK_SET;
  ::fcntl(fd, F_OFD_SETLK, &lk);
}

// rec (whole lines) is durable and the MANIFEST is size bytes long: the tail may say so
// now (its line checksum is that of rec's last line).
void write_tail_after(const std::string& store_dir, const std::string& rec, uint64_t size) {
  size_t b = rec.rfind('\n', rec.size() >= 2 ? rec.size() - 2 : 0);
  b = b == std::string::npos ? 0 : b + 1;
  DecodedLine d = manifest_record::decode_line(rec.substr(b, rec.size() - 1 - b));
  if (d.status == DecodedLine::Status::kOk) manifest::write_tail(store_dir, size, d.checksum);
}

// Appends records with a single O_APPEND write, then fdatasync. make_lines gets the
// checksum of the last valid record and returns the lines to append, chained to it.
// Reading that checksum and writing must not interleave with another appender (the
// forwarder's writer threads, another node's forwarder, the CLI): an open-file-description
// lock on the MANIFEST is held in between. Where the file system refuses such locks the
// append goes ahead unlocked: two racing appenders then chain to the same record and
// verify reports the second as a broken chain, a false alarm but never a silent loss.
// If an earlier append was torn (the file does not end in '\n'), a newline goes first so
// this record still starts a line of its own; the torn line stays behind and replay skips it.
// The largest MANIFEST size after an append of this process, per store (appended_end).
std::mutex g_ends_mu;
std::map<std::string, uint64_t> g_ends;

void note_end(const std::string& store_dir, uint64_t end) {
  std::lock_guard lk(g_ends_mu);
  uint64_t& e = g_ends[store_dir];
  if (end > e) e = end;
}

manifest::AppendRoute g_route = nullptr;
void* g_route_ctx = nullptr;

// Waits until this client shows the MANIFEST open as fd at least want bytes long, or
// until `until`, asking the kernel for fresh attributes every 10 ms; *st: its last fstat.
// False when fstat fails.
bool catch_up(int fd, uint64_t want, std::chrono::steady_clock::time_point until, struct stat* st) {
  while (static_cast<uint64_t>(st->st_size) < want && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    manifest::refresh_attributes(fd);
    if (fstat(fd, st) != 0) return false;
  }
  return true;
}

// Whether records lie, one after the other, among the complete lines of text.
bool records_in(const std::string& text, const manifest::Records& records) {
  std::vector<std::vector<std::string>> lines;
  for (size_t b = 0, e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) {
    DecodedLine d = manifest_record::decode_line(text.substr(b, e - b));
    lines.push_back(d.status == DecodedLine::Status::kOk ? std::move(d.fields)
                                                         : std::vector<std::string>{});
  }
  if (records.empty() || lines.size() < records.size()) return false;
  for (size_t i = 0; i + records.size() <= lines.size(); ++i)
    if (std::equal(records.begin(), records.end(), lines.begin() + static_cast<ptrdiff_t>(i)))
      return true;
  return false;
}

// known_end: the MANIFEST is at least this long (an appender elsewhere said so); a shorter
// view of it on this client is older, and the append waits until it catches up (up to
// kCatchUpLimit), so it never chains to a record older than the last one.
// unless_there: records already in the MANIFEST after known_end (an appender that died
// before it answered had appended them) are not appended again; *end is then its size.
template <class MakeLines>
bool append_lines(const std::string& store_dir, MakeLines&& make_lines, std::string* err,
                  uint64_t known_end = 0, uint64_t* end = nullptr,
                  const manifest::Records* unless_there = nullptr) {
  std::string path = store_dir + "/MANIFEST";
  auto fail = [&](const std::string& what) {
    if (err) *err = path + ": " + what + ": " + strerror(errno);
    return false;
  };
  int fd = open_for_append(store_dir, path, err);
  if (fd < 0) return false;
  auto close_fail = [&](const std::string& what) {
    int e = errno;
    ::close(fd);
    errno = e;
    return fail(what);
  };
  if (!lock_for_append(fd)) return close_fail("cannot lock the manifest");
  manifest::refresh_attributes(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return close_fail("cannot stat");
  // The end the last appender marked: a client whose view may lag shows this one an older
  // size for a while (end_mark.h), and chaining to that end would break the chain. Still
  // short after kTailCatchUp (or at once elsewhere): records were cut off the end, and
  // this one goes after what is left (check_tail reports the cut until then).
  using Clock = std::chrono::steady_clock;
  if (const uint64_t mark = manifest::end_mark(store_dir);
      static_cast<uint64_t>(st.st_size) < mark && manifest::view_may_lag(store_dir) &&
      !catch_up(fd, mark, Clock::now() + manifest::kTailCatchUp, &st))
    return close_fail("cannot stat");
  if (!catch_up(fd, known_end, Clock::now() + manifest::kCatchUpLimit, &st))
    return close_fail("cannot stat");
  if (static_cast<uint64_t>(st.st_size) < known_end) {
    errno = EAGAIN;
    return close_fail("this client sees " + std::to_string(st.st_size) + " bytes of it, " +
                      std::to_string(known_end) +
                      " were written (a stale view that did not catch up)");
  }
  if (unless_there && static_cast<uint64_t>(st.st_size) > known_end) {
    std::string text(static_cast<size_t>(st.st_size - static_cast<off_t>(known_end)), '\0');
    if (::pread(fd, text.data(), text.size(), static_cast<off_t>(known_end)) !=
        static_cast<ssize_t>(text.size()))
      return close_fail("cannot read what was appended after byte " + std::to_string(known_end));
    // (A line known_end cuts decodes as nothing, and matches nothing.)
    if (records_in(text, *unless_there)) {
      unlock_after_append(fd);
      ::close(fd);
      note_end(store_dir, static_cast<uint64_t>(st.st_size));
      if (end) *end = static_cast<uint64_t>(st.st_size);
      return true;
    }
  }
  bool created = st.st_size == 0;
  uint64_t prev = 0;
  if (!last_valid_checksum(fd, static_cast<uint64_t>(st.st_size), &prev))
    return close_fail("cannot read the last record");
  std::string rec = make_lines(prev);
  if (st.st_size > 0) {
    char last = '\n';
    if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') rec.insert(0, "\n");
  }
  ssize_t w;
  do {
    w = ::write(fd, rec.data(), rec.size());
  } while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(rec.size())) {
    if (w >= 0) errno = EIO;
    return close_fail(w < 0 ? "append failed" : "short append (the line is torn; replay skips it)");
  }
  // Under the lock nobody else appends: a size other than ours means a descriptor mix-up
  // let someone else's bytes into the MANIFEST (replay skips foreign lines; say so now).
  struct stat after;
  if (fstat(fd, &after) != 0) return close_fail("cannot stat after the append");
  if (after.st_size != st.st_size + static_cast<off_t>(rec.size())) {
    errno = EIO;
    return close_fail("foreign bytes in the manifest (" + std::to_string(after.st_size) +
                      " bytes after appending " + std::to_string(rec.size()) + " to " +
                      std::to_string(st.st_size) + ")");
  }
  // Durable, then marked, then the next appender may chain to it (end_mark.h).
  if (::fdatasync(fd) != 0) return close_fail("fdatasync failed");
  manifest::set_end_mark(fd, static_cast<uint64_t>(after.st_size));
  unlock_after_append(fd);
  if (::close(fd) != 0) return fail("close failed");
  // A new manifest's directory entry must be durable too.
  if (created && !fsync_dir(store_dir)) return fail("fsync of the store directory failed");
  write_tail_after(store_dir, rec, static_cast<uint64_t>(after.st_size));
  note_end(store_dir, static_cast<uint64_t>(after.st_size));
  if (end) *end = static_cast<uint64_t>(after.st_size);
  return true;
}

// Every append goes through here: to the route's appender when there is one, else (or
// when it cannot be reached) to the MANIFEST from this process.
bool append_records(const std::string& store_dir, const manifest::Records& records,
                    std::string* err) {
  if (g_route) {
    uint64_t end = 0;
    std::string why;
    switch (
        g_route(g_route_ctx, store_dir, records, manifest::appended_end(store_dir), &end, &why)) {
      case manifest::Routed::kDone:
        note_end(store_dir, end);
        return true;
      case manifest::Routed::kFailed:
        if (err) *err = why;
        return false;
      case manifest::Routed::kNotRouted:
        break;
    }
  }
  return manifest::append_here(store_dir, records, 0, nullptr, err);
}

bool append_record(const std::string& store_dir, const std::vector<std::string>& fields,
                   std::string* err) {
  return append_records(store_dir, {fields}, err);
}

// commit and overlay records share one layout: verb, container, n, 5 fields per file,
// then the container's identity.
bool append_files(const char* verb, const std::string& store_dir, const std::string& container,
                  const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                  std::string* err) {
  if (!id.known()) {
    if (err)
      *err = store_dir + "/" + container + ": no container identity for its " + verb +
             " record (internal error)";
    return false;
  }
  std::vector<std::string> f = {verb, container, std::to_string(files.size())};
  for (const CatalogEntry& e : files) {
    f.push_back(e.path);
    f.push_back(std::to_string(e.file_index));
    f.push_back(std::to_string(e.size));
    f.push_back(manifest_record::octal(e.mode));
    f.push_back(std::to_string(e.mtime_ns));
  }
  f.push_back(std::to_string(id.size));
  f.push_back(manifest_record::hex64(id.index_hash));
  if (!append_record(store_dir, f, err)) return false;
  manifest::mark_recorded(store_dir, container);  // its record is durable (manifest_end.h)
  return true;
}

bool identity_on_disk(const std::string& store_dir, const std::string& container,
                      ContainerIdentity& id, std::string* err) {
  std::string why;
  if (read_container_identity(store_dir + "/" + container, id, &why)) return true;
  if (err) *err = "cannot record " + container + " in the MANIFEST: " + why;
  return false;
}

}  // namespace

namespace manifest {

bool ensure_store(const std::string& store_dir, std::string* err) {
  if (store_dir.empty()) {
    if (err) *err = "empty store path (set CKPTFWD_STORE or leave it unset for the default)";
    return false;
  }
  // mkdir -p: create each missing component, 0700 so other users cannot read checkpoints.
  for (size_t pos = 1; pos <= store_dir.size(); ++pos) {
    if (pos != store_dir.size() && store_dir[pos] != '/') continue;
    std::string part = store_dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) == 0 || errno == EEXIST) continue;
    if (err)
      *err = "cannot create store directory " + part + ": " + strerror(errno) +
             " (set CKPTFWD_STORE to a writable directory)";
    return false;
  }
  struct stat st;
  if (::stat(store_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (err) *err = "store " + store_dir + " exists but is not a directory (set CKPTFWD_STORE)";
    return false;
  }
  return true;
}

bool append_commit(const std::string& store_dir, const std::string& container,
                   const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                   std::string* err) {
  return append_files("commit", store_dir, container, id, files, err);
}

bool append_overlay(const std::string& store_dir, const std::string& container,
                    const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                    std::string* err) {
  return append_files("overlay", store_dir, container, id, files, err);
}

bool append_commit(const std::string& store_dir, const std::string& container,
                   const std::vector<CatalogEntry>& files, std::string* err) {
  ContainerIdentity id;
  return identity_on_disk(store_dir, container, id, err) &&
         append_files("commit", store_dir, container, id, files, err);
}

bool append_overlay(const std::string& store_dir, const std::string& container,
                    const std::vector<CatalogEntry>& files, std::string* err) {
  ContainerIdentity id;
  return identity_on_disk(store_dir, container, id, err) &&
         append_files("overlay", store_dir, container, id, files, err);
}

bool append_create(const std::string& store_dir, const std::string& container,
                   const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                   std::string* err) {
  return append_files("create", store_dir, container, id, files, err);
}

bool append_drops(const std::string& store_dir, const std::vector<std::string>& containers,
                  std::string* err) {
  if (containers.empty()) return true;
  Records records;
  for (const std::string& c : containers) records.push_back({"drop", c});
  return append_records(store_dir, records, err);
}

bool append_here(const std::string& store_dir, const Records& records, uint64_t known_end,
                 uint64_t* end, std::string* err, bool unless_there) {
  return append_lines(
      store_dir,
      [&](uint64_t prev) {
        std::string lines;
        for (const std::vector<std::string>& r : records)
          lines += manifest_record::encode_line(r, prev, &prev);
        return lines;
      },
      err, known_end, end, unless_there ? &records : nullptr);
}

void set_append_route(AppendRoute route, void* ctx) {
  g_route_ctx = ctx;
  g_route = route;
}

uint64_t appended_end(const std::string& store_dir) {
  std::lock_guard lk(g_ends_mu);
  auto it = g_ends.find(store_dir);
  return it == g_ends.end() ? 0 : it->second;
}

bool append_rename(const std::string& store_dir, const std::string& from, const std::string& to,
                   std::string* err) {
  return append_record(store_dir, {"rename", from, to}, err);
}

bool append_unlink(const std::string& store_dir, const std::string& path, std::string* err) {
  return append_record(store_dir, {"unlink", path}, err);
}

bool append_chmod(const std::string& store_dir, const std::string& path, uint32_t mode,
                  std::string* err) {
  return append_record(store_dir, {"chmod", path, manifest_record::octal(mode & 07777)}, err);
}

}  // namespace manifest

}  // namespace ckptfwd
