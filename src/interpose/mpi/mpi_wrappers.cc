// MPI wrappers of libckptfwd-mpich.so (MPICH ABI: MPICH, Intel MPI, Cray MPICH, MVAPICH).
// The data of MPI-IO keeps flowing through ROMIO's own POSIX calls into the staged file
// (the libc wrappers of the same library); what the MPI layer adds is:
//  - MPI_Finalize: wait until everything this process closed is committed, while the job
//    is still alive (as the exit wait of interpose/client/exit_wait.h does at exit).
//  - MPI_File_open/MPI_File_delete of a captured path: the "ufs:" prefix, so a ROMIO built
//    with Lustre/GPFS drivers uses its generic POSIX driver on the staged file.
//  - MPI_Init/MPI_Init_thread: the rank from MPI_COMM_WORLD when the launcher set none.
//  - MPI_File_open of a captured file whose communicator spans several nodes: the opens
//    ROMIO makes inside are marked shared across nodes (each node commits exactly the
//    bytes its ranks wrote), and data sieving and collective buffering of writes are
//    turned off for it: both write back bytes this node did not produce (stale copies of
//    other nodes' data). On node-local staging they buy nothing anyway.
//  - MPI_File_set_view with a numeric etype (MPI_DOUBLE, MPI_INT, ...): the write variants
//    of that file set the thread's current dtype around the real call, so the bytes ROMIO
//    writes are recorded as dtype hints of the version (hint_log.h); a subarray or darray
//    filetype (view_decode.h) adds the global array the file holds from the view's
//    displacement on, recorded with them (base/view_shape.h).
// Both the MPI_ and PMPI_ names are defined; each calls the next PMPI_ definition.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <atomic>

#include "base/dtype.h"
#include "interpose/client/client.h"
#include "interpose/mpi/etype_map.h"
#include "interpose/mpi/view_decode.h"
#include "interpose/setup/state.h"
#include "interpose/track/open_context.h"
#include "interpose/track/write_context.h"

using namespace ckptfwd::interpose;
using ckptfwd::kMaxViewDims;
using ckptfwd::ViewShape;
namespace wire = ckptfwd::wire;

namespace {

// Resolves PMPI_<name> from the MPI library loaded after us; aborts with a clear message
// if there is none (the MPICH library was preloaded into a program without MPICH).
void* next_pmpi(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    log_msg(
        "FATAL: %s not found: libckptfwd-mpich.so needs an MPICH-ABI MPI library; "
        "preload libckptfwd.so for other MPIs or programs without MPI",
        name);
    abort();
  }
  return p;
}

#define MPICALL(name, params, args)                              \
  using name##_fn = int(*) params;                               \
  name##_fn real_##name() {                                      \
    static std::atomic<name##_fn> fn{nullptr};                   \
    name##_fn f = fn.load(std::memory_order_acquire);            \
    if (!f) {                                                    \
      f = reinterpret_cast<name##_fn>(next_pmpi("PMPI_" #name)); \
      fn.store(f, std::memory_order_release);                    \
    }                                                            \
    return f;                                                    \
  }
#define MPIWRITE MPICALL
#include "interpose/mpi/mpi_calls.def"
#undef MPIWRITE
#undef MPICALL

// The MPI types of mpi.h (MPI_Comm as int, MPI_COMM_WORLD as a constant) are MPICH's.
// With another MPI underneath (Open MPI's libmpi also defines PMPI_ names) nothing that
// depends on them may run: the wrappers then only pass through and keep the commit wait.
// MPIR_Err_create_code is exported by every MPICH derivative (MPICH, Intel MPI, Cray MPICH,
// MVAPICH) and by no other MPI.
bool mpich_abi() {
  static const bool yes = dlsym(RTLD_DEFAULT, "MPIR_Err_create_code") != nullptr;
  return yes;
}

// Waits until every version this process handed over is committed on the store.
void wait_for_commits(const char* where) {
  if (!intercepting() || !client_closed_any()) return;
  Busy busy;
  int saved = errno;
  const char* req[] = {wire::kWaitAll};
  Result r = call(req, 1);
  if (r.status == Status::kErr)
    log_msg("ERROR: at %s, checkpoint files of rank %d are NOT committed to the store: %s", where,
            g_settings.rank, strerror(r.err));
  errno = saved;
}

void learn_rank() {
  if (g_settings.rank >= 0 || !mpich_abi()) return;
  int rank = -1;
  using rank_fn = int (*)(MPI_Comm, int*);
  auto comm_rank = reinterpret_cast<rank_fn>(dlsym(RTLD_NEXT, "PMPI_Comm_rank"));
  if (comm_rank && comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) g_settings.rank = rank;
}

// The name to pass to ROMIO for filename: "ufs:<path>" when the path (after any ROMIO
// prefix such as "lustre:", which ROMIO would honour on the staged file) is captured, with
// its normalized captured path in norm; otherwise filename unchanged (norm untouched).
// A prefix is "xxx:" before the first '/', as ROMIO parses it (two letters at least, so
// "C:" style names stay names).
const char* with_ufs_prefix(const char* filename, char* buf, size_t cap, char* norm) {
  if (!filename || !mpich_abi() || !intercepting()) return filename;
  const char* path = filename;
  const char* colon = strchr(filename, ':');
  const char* slash = strchr(filename, '/');
  if (colon && colon > filename + 1 && (!slash || colon < slash)) path = colon + 1;
  if (!captured_path(AT_FDCWD, path, norm)) return filename;
  int n = snprintf(buf, cap, "ufs:%s", path);
  return (n > 0 && static_cast<size_t>(n) < cap) ? buf : filename;
}

int do_Init(int* argc, char*** argv) {
  int rc = real_Init()(argc, argv);
  if (rc == MPI_SUCCESS) learn_rank();
  return rc;
}

int do_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = real_Init_thread()(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) learn_rank();
  return rc;
}

int do_Finalize() {
  wait_for_commits("MPI_Finalize");
  return real_Finalize()();
}

template <class Fn>
Fn next_fn(const char* name) {
  return reinterpret_cast<Fn>(next_pmpi(name));
}

uint64_t node_hash() {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the node name the forwarder is found by
  for (const char* p = g_settings.session.node; *p; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return h;
}

using allreduce_fn = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
using barrier_fn = int (*)(MPI_Comm);
using rank_fn = int (*)(MPI_Comm, int*);
using comm_free_fn = int (*)(MPI_Comm*);

// Collective over comm (MPI_File_open is collective, every rank gets here with the same
// captured decision): true when the ranks of comm live on more than one node.
bool spans_nodes(MPI_Comm comm) {
  static auto allreduce = next_fn<allreduce_fn>("PMPI_Allreduce");
  uint64_t h = node_hash();
  uint64_t mine[2] = {h, ~h};
  uint64_t most[2] = {0, 0};
  if (allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) return false;
  return most[0] != ~most[1];  // max(h) != min(h)
}

// Collective over comm: the ranks of comm on this node (by the node the forwarder is
// found by, so CKPTFWD_NODE_ID-simulated nodes split too), or MPI_COMM_NULL. The split
// color is 31 bits of the node hash; a collision of two nodes is detected and the split
// redone with another mix (every rank of comm takes the same decision).
MPI_Comm node_comm_of(MPI_Comm comm) {
  using split_fn = int (*)(MPI_Comm, int, int, MPI_Comm*);
  static auto split = next_fn<split_fn>("PMPI_Comm_split");
  static auto allreduce = next_fn<allreduce_fn>("PMPI_Allreduce");
  static auto comm_free = next_fn<comm_free_fn>("PMPI_Comm_free");
  for (uint64_t attempt = 0; attempt < 4; ++attempt) {
    uint64_t h = (node_hash() ^ (attempt * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    MPI_Comm nc = MPI_COMM_NULL;
    if (split(comm, static_cast<int>(h >> 33), 0, &nc) != MPI_SUCCESS) return MPI_COMM_NULL;
    int collided = spans_nodes(nc) ? 1 : 0, any = 0;
    if (allreduce(&collided, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) any = 1;
    if (!any) return nc;
    comm_free(&nc);
  }
  return MPI_COMM_NULL;
}

// ---- files opened shared across nodes ----
// A registry of their handles, from MPI_File_open to MPI_File_close:
//  - set_view and set_info take hints too (ROMIO applies romio_ds_write, romio_cb_write
//    and romio_cb_read from them), so those of a shared file get the same hints forced off;
//  - MPI_MODE_DELETE_ON_CLOSE is taken out of the open and done by the close wrapper
//    after a barrier: ROMIO's rank 0 deletes without waiting for the other ranks' close,
//    and a node whose overlay commits after that unlink would bring the file back. Every
//    rank's close has committed its node's overlay (close of a shared version waits), so
//    after the barrier the delete is the last word.
//  - MPI_File_sync brings the other nodes' synced writes into this node's staged copy
//    (refresh_node_copy), through node_comm.
struct SharedFile {
  MPI_File fh = MPI_FILE_NULL;
  bool delete_on_close = false;
  MPI_Comm comm = MPI_COMM_NULL;       // a dup of the open's communicator, for the delete
  MPI_Comm node_comm = MPI_COMM_NULL;  // the open's ranks on this node
  char name[PATH_MAX + 8] = {};        // as passed to the real open
  char path[PATH_MAX] = {};            // the captured path
};
constexpr int kMaxShared = 1024;
SharedFile g_shared[kMaxShared];
pthread_mutex_t g_shared_lock = PTHREAD_MUTEX_INITIALIZER;

// Takes over comm and node_comm (freed at close). False if the registry is full.
bool remember_shared(MPI_File fh, bool delete_on_close, MPI_Comm comm, MPI_Comm node_comm,
                     const char* name, const char* path) {
  pthread_mutex_lock(&g_shared_lock);
  bool stored = false;
  for (SharedFile& f : g_shared) {
    if (f.fh != MPI_FILE_NULL) continue;
    f.fh = fh;
    f.delete_on_close = delete_on_close;
    f.comm = comm;
    f.node_comm = node_comm;
    snprintf(f.name, sizeof(f.name), "%s", name);
    snprintf(f.path, sizeof(f.path), "%s", path);
    stored = true;
    break;
  }
  pthread_mutex_unlock(&g_shared_lock);
  return stored;
}

bool registry_has_room() {
  pthread_mutex_lock(&g_shared_lock);
  bool room = false;
  for (const SharedFile& f : g_shared) room = room || f.fh == MPI_FILE_NULL;
  pthread_mutex_unlock(&g_shared_lock);
  return room;
}

bool is_shared(MPI_File fh, SharedFile* copy = nullptr) {
  pthread_mutex_lock(&g_shared_lock);
  bool found = false;
  for (const SharedFile& f : g_shared) {
    if (fh == MPI_FILE_NULL || f.fh != fh) continue;
    if (copy) *copy = f;
    found = true;
    break;
  }
  pthread_mutex_unlock(&g_shared_lock);
  return found;
}

// Removes fh's entry into out. False if fh was not shared.
bool forget_shared(MPI_File fh, SharedFile& out) {
  pthread_mutex_lock(&g_shared_lock);
  bool found = false;
  for (SharedFile& f : g_shared) {
    if (fh == MPI_FILE_NULL || f.fh != fh) continue;
    out = f;
    f = SharedFile{};
    found = true;
    break;
  }
  pthread_mutex_unlock(&g_shared_lock);
  return found;
}

// A copy of info (or a new info) with write sieving and collective buffering off, or
// MPI_INFO_NULL if that failed (the caller then passes info unchanged). Each node holds
// its own staged copy of a file shared across nodes, with only that node's writes until a
// sync: an aggregator must never write or read other nodes' bytes through it. Collective
// reads are turned off too (romio_cb_read): an aggregator would hand its node's zeros to
// ranks on other nodes reading back what they wrote. Read sieving stays: a rank's sieved
// read keeps only the bytes it asked for, from its own node's copy. The user's own
// setting of these hints (info or a ROMIO_HINTS file) is overridden.
MPI_Info without_cross_node_aggregation(MPI_Info info) {
  using info_dup_fn = int (*)(MPI_Info, MPI_Info*);
  using info_create_fn = int (*)(MPI_Info*);
  using info_set_fn = int (*)(MPI_Info, const char*, const char*);
  static auto info_dup = next_fn<info_dup_fn>("PMPI_Info_dup");
  static auto info_create = next_fn<info_create_fn>("PMPI_Info_create");
  static auto info_set = next_fn<info_set_fn>("PMPI_Info_set");
  MPI_Info hints = MPI_INFO_NULL;
  if ((info == MPI_INFO_NULL ? info_create(&hints) : info_dup(info, &hints)) != MPI_SUCCESS)
    return MPI_INFO_NULL;
  info_set(hints, "romio_ds_write", "disable");
  info_set(hints, "romio_cb_write", "disable");
  info_set(hints, "romio_cb_read", "disable");
  return hints;
}

void free_info(MPI_Info* info) {
  using info_free_fn = int (*)(MPI_Info*);
  static auto info_free = next_fn<info_free_fn>("PMPI_Info_free");
  if (*info != MPI_INFO_NULL) info_free(info);
}

// ---- element types of file views ----
// The etype of each file's current view, as a DtypeCode, for files whose view has a
// numeric etype (set_view to an untyped etype or MPI_File_close removes the entry).
// g_typed counts the entries, so programs that never set a typed view pay one atomic load
// per MPI write. Full table: later files get no hints (hints never affect correctness).
struct TypedFile {
  MPI_File fh = MPI_FILE_NULL;
  uint8_t code = 0;
  ViewShape view;  // ndims 0: the filetype tells no global array
};
constexpr int kMaxTyped = 1024;
TypedFile g_typed_files[kMaxTyped];
std::atomic<int> g_typed{0};
pthread_mutex_t g_typed_lock = PTHREAD_MUTEX_INITIALIZER;

void set_etype(MPI_File fh, uint8_t code, const ViewShape* view = nullptr) {
  if (fh == MPI_FILE_NULL || (code == 0 && g_typed.load(std::memory_order_relaxed) == 0)) return;
  pthread_mutex_lock(&g_typed_lock);
  TypedFile* slot = nullptr;
  for (TypedFile& f : g_typed_files) {
    if (f.fh == fh) {
      slot = &f;
      break;
    }
    if (!slot && f.fh == MPI_FILE_NULL && code != 0) slot = &f;
  }
  if (slot && slot->fh == fh) {
    if (code != 0) {
      slot->code = code;
      slot->view = view ? *view : ViewShape{};
    } else {
      *slot = TypedFile{};
      g_typed.fetch_sub(1, std::memory_order_relaxed);
    }
  } else if (slot && code != 0) {
    slot->fh = fh;
    slot->code = code;
    slot->view = view ? *view : ViewShape{};
    g_typed.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_typed_lock);
}

// fh's etype code (0: untyped) and, in *view, its view's global array (ndims 0: none).
uint8_t etype_of(MPI_File fh, ViewShape* view) {
  if (g_typed.load(std::memory_order_relaxed) == 0 || fh == MPI_FILE_NULL) return 0;
  pthread_mutex_lock(&g_typed_lock);
  uint8_t code = 0;
  for (const TypedFile& f : g_typed_files)
    if (f.fh == fh) {
      code = f.code;
      *view = f.view;
      break;
    }
  pthread_mutex_unlock(&g_typed_lock);
  return code;
}

// The global array filetype describes from disp on (view_decode.h), looking through one
// MPI_Type_create_resized with lower bound 0 (as codes wrap a subarray to set its extent).
// Every derived datatype get_contents hands out is freed again.
bool decode_filetype(MPI_Datatype filetype, MPI_Offset disp, uint8_t code, ViewShape* out,
                     int depth = 0) {
  using envelope_fn = int (*)(MPI_Datatype, int*, int*, int*, int*);
  using contents_fn = int (*)(MPI_Datatype, int, int, int, int*, MPI_Aint*, MPI_Datatype*);
  using type_free_fn = int (*)(MPI_Datatype*);
  static auto envelope = next_fn<envelope_fn>("PMPI_Type_get_envelope");
  static auto contents = next_fn<contents_fn>("PMPI_Type_get_contents");
  static auto type_free = next_fn<type_free_fn>("PMPI_Type_free");
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (disp < 0 || envelope(filetype, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED || ni > 4 + 4 * static_cast<int>(kMaxViewDims) || na > 2 ||
      nd != 1)
    return false;
  int ints[4 + 4 * kMaxViewDims];
  MPI_Aint addrs[2] = {0, 0};
  MPI_Datatype old = MPI_DATATYPE_NULL;
  if (contents(filetype, ni, na, nd, ints, addrs, &old) != MPI_SUCCESS) return false;
  int old_ni = 0, old_na = 0, old_nd = 0, old_combiner = 0;
  const bool derived = envelope(old, &old_ni, &old_na, &old_nd, &old_combiner) == MPI_SUCCESS &&
                       old_combiner != MPI_COMBINER_NAMED;
  bool ok = false;
  if (combiner == MPI_COMBINER_RESIZED) {
    ok = depth == 0 && na == 2 && addrs[0] == 0 && derived &&
         decode_filetype(old, disp, code, out, depth + 1);
  } else if (!derived) {
    ok = view_shape_of(combiner, ints, ni, dtype_code_of_etype(old), code,
                       static_cast<uint64_t>(disp), out);
  }
  if (derived) type_free(&old);
  return ok;
}

int set_view_filtered(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char* datarep, MPI_Info info) {
  if (!mpich_abi() || info == MPI_INFO_NULL || !is_shared(fh))
    return real_File_set_view()(fh, disp, etype, filetype, datarep, info);
  MPI_Info hints = without_cross_node_aggregation(info);
  int rc = real_File_set_view()(fh, disp, etype, filetype, datarep,
                                hints != MPI_INFO_NULL ? hints : info);
  free_info(&hints);
  return rc;
}

int do_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char* datarep, MPI_Info info) {
  int rc = set_view_filtered(fh, disp, etype, filetype, datarep, info);
  // "native" only: another datarep converts, and the bytes in the file are not etype's.
  if (rc == MPI_SUCCESS && mpich_abi()) {
    bool native = datarep && strcmp(datarep, "native") == 0;
    const uint8_t code = native ? dtype_code_of_etype(etype) : 0;
    ViewShape view;
    const bool has_view = code && decode_filetype(filetype, disp, code, &view);
    set_etype(fh, code, has_view ? &view : nullptr);
  }
  return rc;
}

int do_File_set_info(MPI_File fh, MPI_Info info) {
  if (!mpich_abi() || info == MPI_INFO_NULL || !is_shared(fh))
    return real_File_set_info()(fh, info);
  MPI_Info hints = without_cross_node_aggregation(info);
  int rc = real_File_set_info()(fh, hints != MPI_INFO_NULL ? hints : info);
  free_info(&hints);
  return rc;
}
void free_comm(MPI_Comm* comm) {
  static auto comm_free = next_fn<comm_free_fn>("PMPI_Comm_free");
  if (*comm != MPI_COMM_NULL) comm_free(comm);
}

// Asks this node's forwarder to bring path's staged copy up to date with the store.
bool refresh_node_copy(const char* path) {
  if (!intercepting()) return true;
  Busy busy;
  int saved = errno;
  const char* req[] = {wire::kRefresh, path};
  Result r = call(req, 2);
  errno = saved;
  if (r.status == Status::kOk) return true;
  log_msg(
      "ERROR: MPI_File_sync of %s (shared across nodes): %s; this node's processes may "
      "read stale bytes where other nodes wrote. See the forwarder's log",
      path, r.status == Status::kErr ? strerror(r.err) : "the forwarder is unreachable");
  return false;
}

// MPI_File_sync of a file shared across nodes. MPI's rule: after sync, barrier, sync, a
// process sees what the others wrote before their first sync. Their bytes are on the
// store by then (each rank's fsync inside the real sync commits its node's overlay), but
// this node's processes read its staged copy: once all of them have synced (so no one
// writes it meanwhile), one asks the forwarder to rewrite it from the store. Every sync
// does it; only the ones after the application's barrier are certain to see everything.
int do_File_sync(MPI_File fh) {
  int rc = real_File_sync()(fh);
  SharedFile shared;
  if (rc != MPI_SUCCESS || !mpich_abi() || !is_shared(fh, &shared) ||
      shared.node_comm == MPI_COMM_NULL)
    return rc;
  static auto barrier = next_fn<barrier_fn>("PMPI_Barrier");
  static auto comm_rank = next_fn<rank_fn>("PMPI_Comm_rank");
  static auto bcast = next_fn<int (*)(void*, int, MPI_Datatype, int, MPI_Comm)>("PMPI_Bcast");
  int rank = -1;
  barrier(shared.node_comm);
  comm_rank(shared.node_comm, &rank);
  int ok = 1;
  if (rank == 0) ok = refresh_node_copy(shared.path) ? 1 : 0;
  bcast(&ok, 1, MPI_INT, 0, shared.node_comm);  // also holds the others until it is done
  return ok ? rc : MPI_ERR_IO;
}

// MPI_File_set_size of a file shared across nodes: ROMIO's rank 0 truncates its node's
// staged copy; the size the store records is the largest of the nodes' sizes, so a shrink
// cannot be expressed (growing works). Said once per process, naming the file, rather
// than silently keeping the larger size. HDF5 only ever grows files this way.
int do_File_set_size(MPI_File fh, MPI_Offset size) {
  SharedFile shared;
  if (!mpich_abi() || !is_shared(fh, &shared)) return real_File_set_size()(fh, size);
  using get_size_fn = int (*)(MPI_File, MPI_Offset*);
  static auto get_size = next_fn<get_size_fn>("PMPI_File_get_size");
  MPI_Offset before = -1;
  if (get_size(fh, &before) != MPI_SUCCESS) before = -1;
  int rc = real_File_set_size()(fh, size);
  static std::atomic<bool> said{false};
  if (rc == MPI_SUCCESS && size < before && !said.exchange(true))
    log_msg(
        "WARNING: MPI_File_set_size shrinks %s (shared across nodes) from %lld to %lld "
        "bytes: ckptfwd keeps the largest size any node wrote, so a restore may be "
        "longer than %lld bytes (zeros or old bytes past it)",
        shared.path, static_cast<long long>(before), static_cast<long long>(size),
        static_cast<long long>(size));
  return rc;
}

int do_File_close(MPI_File* fh) {
  if (fh && mpich_abi()) set_etype(*fh, 0);
  SharedFile shared;
  bool was_shared = fh && mpich_abi() && forget_shared(*fh, shared);
  int rc = real_File_close()(fh);
  if (was_shared) free_comm(&shared.node_comm);
  if (!was_shared || !shared.delete_on_close) return rc;
  static auto barrier = next_fn<barrier_fn>("PMPI_Barrier");
  static auto comm_rank = next_fn<rank_fn>("PMPI_Comm_rank");
  int rank = -1;
  barrier(shared.comm);
  comm_rank(shared.comm, &rank);
  if (rank == 0 && rc == MPI_SUCCESS) real_File_delete()(shared.name, MPI_INFO_NULL);
  barrier(shared.comm);  // as ROMIO: the file is gone on every rank's return
  free_comm(&shared.comm);
  return rc;
}
// ---- end of files shared across nodes ----

int do_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  char buf[PATH_MAX + 8];
  char path[PATH_MAX];
  const char* name = with_ufs_prefix(filename, buf, sizeof(buf), path);
  if (name == filename || !spans_nodes(comm)) return real_File_open()(comm, name, amode, info, fh);

  // Without room to remember the handle, ROMIO keeps its own delete-on-close.
  bool delete_on_close = (amode & MPI_MODE_DELETE_ON_CLOSE) != 0 && registry_has_room();
  MPI_Comm keep = MPI_COMM_NULL;
  if (delete_on_close) {
    using comm_dup_fn = int (*)(MPI_Comm, MPI_Comm*);
    static auto comm_dup = next_fn<comm_dup_fn>("PMPI_Comm_dup");
    if (comm_dup(comm, &keep) == MPI_SUCCESS)
      amode &= ~MPI_MODE_DELETE_ON_CLOSE;  // the close wrapper deletes after a barrier
    else
      delete_on_close = false;
  }
  MPI_Info hints = without_cross_node_aggregation(info);
  OpenContext ctx;
  ctx.shared_across_nodes = true;
  int rc;
  {
    ScopedOpenContext scope(ctx);
    rc = real_File_open()(comm, name, amode, hints != MPI_INFO_NULL ? hints : info, fh);
  }
  free_info(&hints);
  // Collective like the open itself (every rank of comm gets here with the same rc).
  MPI_Comm node_comm = rc == MPI_SUCCESS ? node_comm_of(comm) : MPI_COMM_NULL;
  if (rc == MPI_SUCCESS && remember_shared(*fh, delete_on_close, keep, node_comm, name, path))
    return rc;
  if (rc == MPI_SUCCESS)
    log_msg(
        "more than %d MPI files open across nodes: hints of later set_view/set_info "
        "calls on %s are not filtered and MPI_File_sync does not show other nodes' "
        "writes",
        kMaxShared, filename);
  free_comm(&keep);
  free_comm(&node_comm);
  return rc;
}

int do_File_preallocate(MPI_File fh, MPI_Offset size) {
  ScopedFillOnly fill_only;
  return real_File_preallocate()(fh, size);
}

int do_File_delete(const char* filename, MPI_Info info) {
  char buf[PATH_MAX + 8];
  char path[PATH_MAX];
  return real_File_delete()(with_ufs_prefix(filename, buf, sizeof(buf), path), info);
}

// The write variants (MPIWRITE lines): the real call with the thread's current dtype set
// to the etype of fh's view (0 when untyped: then nothing is recorded), and its view's
// global array when the filetype tells one.
#define MPICALL(name, params, args)
#define MPIWRITE(name, params, args)                            \
  int do_##name params {                                        \
    ViewShape view;                                             \
    const uint8_t code = etype_of(fh, &view);                   \
    ScopedWriteDtype dtype(code, view.ndims ? &view : nullptr); \
    return real_##name() args;                                  \
  }
#include "interpose/mpi/mpi_calls.def"
#undef MPIWRITE
#undef MPICALL

}  // namespace

#define MPICALL(name, params, args)                               \
  CKPTFWD_EXPORT int MPI_##name params { return do_##name args; } \
  CKPTFWD_EXPORT int PMPI_##name params { return do_##name args; }
#define MPIWRITE MPICALL
#include "interpose/mpi/mpi_calls.def"
#undef MPIWRITE
#undef MPICALL
