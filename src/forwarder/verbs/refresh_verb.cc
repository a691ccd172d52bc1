// REFRESH: the staged copy of a file shared across nodes takes in what the other nodes
// committed. MPI's consistency rule for a shared file (sync-barrier-sync: every process
// calls MPI_File_sync, they synchronize, and after the next MPI_File_sync each one sees the
// others' writes) cannot hold by itself here: each node writes into its own staged copy,
// and another node's bytes reach this node only through the store. The MPI_File_sync
// wrapper therefore, once every rank of this node has synced (their overlays are committed,
// as are those of the other nodes that synced before the application's barrier), asks the
// forwarder to rewrite the staged copy with the store's content of the path: the base and
// every node's overlays, this node's own ones included, so its own bytes are unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "forwarder/staging/staging.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/verbs/service.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::fwd {

namespace {
// Copies [0, size of src) of src over dst byte for byte (holes of src read as zeros and
// are written as zeros: dst's old bytes there must not show through). Bytes of dst past
// that stay.
bool overwrite_prefix(int src, int dst, std::string* err) {
  std::vector<char> buf(1 << 20);
  for (off_t pos = 0;;) {
    ssize_t n = ::pread(src, buf.data(), buf.size(), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = std::string("read: ") + strerror(errno);
      return false;
    }
    if (n == 0) return true;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(dst, buf.data() + done, static_cast<size_t>(n - done), pos + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        *err = std::string("write: ") + strerror(w < 0 ? errno : EIO);
        return false;
      }
      done += w;
    }
    pos += n;
  }
}

// Writes the store's content of e over staged (whose fds the application's processes
// hold, so the inode stays): restored into a temporary file first, so a failed restore
// leaves the staged bytes as they were. The staged file never shrinks: bytes past the
// store's size are this node's, not yet handed over.
bool rewrite_staged(const std::string& store, const CatalogEntry& e, const std::string& staged,
                    const std::string& tmp, std::string* err) {
  int t = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (t < 0) {
    *err = "cannot create " + tmp + ": " + strerror(errno);
    return false;
  }
  ::unlink(tmp.c_str());  // the fd keeps it while needed
  bool ok = materialize_entry(store, e, t, err);
  int s = ok ? ::open(staged.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
  if (ok && s < 0) {
    *err = "cannot open staged " + staged + ": " + strerror(errno);
    ok = false;
  }
  if (ok) ok = overwrite_prefix(t, s, err);
  if (s >= 0) ::close(s);
  ::close(t);
  return ok;
}
}  // namespace

Reply Service::refresh(const std::string& path) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  bool preparing = false;
  Version* v = s.open_for_write(path, &preparing);
  if (!v || !v->partial) return reply_ok();  // nothing staged here to bring up to date
  if (v->extents_unknown) {
    // Its commit takes every data byte of the staged file as this node's: other nodes'
    // bytes copied in would go back to the store as if written here, possibly over newer.
    LOG_WARN(
        "%s (shared across nodes): this node's extents are unknown, so other nodes' "
        "writes are not brought into its staged copy at MPI_File_sync",
        path.c_str());
    return reply_ok();
  }
  std::string store = store_for(c_.cfg, path);
  const CatalogEntry* found = s.catalogs.find(store, path);
  if (!found) return reply_ok();  // no node committed anything yet
  CatalogEntry e = *found;
  std::string staged = v->data_path;
  std::string tmp = c_.session_dir + "/refresh." + std::to_string(v->vid) + ".tmp";
  // Every process of this node that has the file open is inside MPI_File_sync (the
  // wrapper's node barrier), so nobody writes the staged file meanwhile.
  lk.unlock();
  std::string err;
  if (!rewrite_staged(store, e, staged, tmp, &err)) {
    LOG_ERROR(
        "cannot bring other nodes' writes of %s into its staged copy: %s. Fix: run "
        "`ckptfwd verify %s`",
        path.c_str(), err.c_str(), store.c_str());
    c_.stats.errors++;
    return reply_err(EIO);
  }
  c_.stats.refreshes++;
  LOG_DEBUG("refreshed staged %s of %s from store %s", staged.c_str(), path.c_str(), store.c_str());
  return reply_ok();
}

}  // namespace ckptfwd::fwd
