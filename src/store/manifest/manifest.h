// The store's manifest: an append-only journal STORE/MANIFEST of commits, renames and
// unlinks; the catalog is its replay. One record per line, tab separated, fields
// percent-encoded ('%', tab, newline, CR -> %25 %09 %0A %0D). A record is appended with
// one O_APPEND write then fdatasync (src/store/manifest/manifest_append.cc).
//
// Record kinds (fields after the verb):
//   commit  <container file name>  <n>  { <path> <file index> <size> <mode octal> <mtime_ns> }*n
//           <container size>  <container index xxh64 hex>
//   overlay (same fields as commit)
//   create  (same fields as commit) a new file (nothing of that name existed where and when
//           the writer opened it). Applied as a commit when the path has no live entry at
//           that point of the replay, else stacked on it as an overlay: the same new file
//           written with plain POSIX calls by ranks of several nodes (N-1 pwrite, no MPI-IO)
//           keeps every node's bytes, whichever commits first. Its container file holds the
//           bytes written as ranges over zeros, and its hash is the whole-file hash (holes
//           as zeros), valid both ways (Layer::whole_hash).
//   rename  <old path> <new path>
//   unlink  <path>
//   chmod   <path>  <mode octal>       (permission bits changed after the commit)
//   drop    <container file name>      (garbage-collected: CKPTFWD_KEEP; see Catalog::garbage)
// Every line then ends in
//   \t@<chain hex>\t#<line checksum hex>
// line checksum: xxh64 (seed 0) of everything before "\t#".
// chain: xxh64 of the record's encoded fields (verb to last field, tab separated, without
//   the chain field) seeded with the line checksum of the previous valid record (0 for the
//   first record). Every record is thereby bound to all records before it.
// Container identity (commit, overlay): the container's size in bytes and the xxh64 of its
//   index, as its trailer records it (container.h, ContainerIdentity). Readers refuse a
//   container whose identity differs (a container copied or renamed over another's name).
//
// What replay (Catalog::load) and ckptfwd verify tell from this:
// - a torn or corrupt line (no or bad line checksum) is skipped and reported, with the
//   paths it probably named (Catalog::uncertain);
// - a record whose chain does not follow from the previous valid record is reported (it is
//   still applied): a line before it was deleted, lines were reordered, or it was inserted.
//   Truncation at a record boundary leaves a consistent chain: the tail file and the
//   read-only mark of containers whose record was durable tell it (store/manifest/manifest_end.h).
// - records of the older format (before chains: no "@" field, commit/overlay without the
//   container identity) are read as before and counted as unchained; an unchained record
//   after a chained one is reported (an older ckptfwd appended, or a line was inserted).
// The chain and checksums are xxh64: they catch accidents (truncation, editing, files
// mixed up), not an attacker who can write the store.
//
// Overlays (a shared file written from several nodes): each node commits its version of the
// file as an overlay, a container file whose ranges are exactly the bytes that node's ranks
// wrote; bytes outside them mean "unchanged", not zeros, and its size is that node's size of
// the file. The live content of a path is its latest commit (the base; there may be none)
// with every later overlay applied in manifest order: each overlay's ranges are written
// over it and the file size is the largest of the base's and the overlays' sizes. A commit
// replaces the base and drops the overlays; rename, unlink and chmod act on the whole stack.
// src/store/manifest/materialize.h turns such an entry into bytes.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/container/container.h"
#include "store/manifest/store_homes.h"

namespace ckptfwd {

// One overlay applied on top of a path's base.
struct Layer {
  std::string container;  // file name inside the store directory
  uint32_t file_index = 0;
  uint64_t size = 0;       // that node's size of the file
  ContainerIdentity id{};  // of container, from its overlay record (unknown: older format)
  // From a `create` record stacked on an existing file: its FileEntry.hash is the
  // whole-file hash (holes as zeros), not an overlay hash (container.h).
  bool whole_hash = false;
  bool operator==(const Layer&) const = default;
};

struct CatalogEntry {
  std::string path;
  std::string container;  // base: file name inside the store; "" when only overlays exist
  uint32_t file_index = 0;
  // Effective size: the largest of base_size and the overlays' sizes. What append_commit
  // and apply_commit take as the committed file's size.
  uint64_t size = 0;
  uint32_t mode = 0644;
  int64_t mtime_ns = 0;
  uint64_t base_size = 0;         // size of the base file (set by apply_commit; 0 without base)
  std::vector<Layer> overlays{};  // in manifest order; empty for a plain commit
  ContainerIdentity base_id{};    // of container, from its commit record (unknown: older format)
};

// Adds the containers e's bytes come from (its base, if any, and each overlay) to out.
void add_containers_of(const CatalogEntry& e, std::set<std::string>& out);

namespace manifest {
// Creates the store directory (0700 if new) when missing.
bool ensure_store(const std::string& store_dir, std::string* err);
// id: the container's identity (ContainerWriter::identity() after its commit).
bool append_commit(const std::string& store_dir, const std::string& container,
                   const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                   std::string* err);
// Same, reading the identity from STORE/container (which must exist and be complete).
bool append_commit(const std::string& store_dir, const std::string& container,
                   const std::vector<CatalogEntry>& files, std::string* err);
bool append_rename(const std::string& store_dir, const std::string& from, const std::string& to,
                   std::string* err);
bool append_unlink(const std::string& store_dir, const std::string& path, std::string* err);
bool append_chmod(const std::string& store_dir, const std::string& path, uint32_t mode,
                  std::string* err);
// files[i].size is that node's size of the file; file_index its entry in the container.
bool append_overlay(const std::string& store_dir, const std::string& container,
                    const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                    std::string* err);
bool append_overlay(const std::string& store_dir, const std::string& container,
                    const std::vector<CatalogEntry>& files, std::string* err);
// files: new files (the `create` record above).
bool append_create(const std::string& store_dir, const std::string& container,
                   const ContainerIdentity& id, const std::vector<CatalogEntry>& files,
                   std::string* err);
// STORE/MANIFEST.tail, "<size> <line checksum hex>\n": the MANIFEST's size and its last
// record's line checksum after the latest append, written (temp + rename) once the append
// is durable. A chain cannot tell records cut off the end of the MANIFEST; the tail can:
// a MANIFEST shorter than that size, or whose record ending there has another checksum,
// lost records (check_tail). A crash between an append and its tail, or two appenders
// racing, leave the tail behind the MANIFEST, never ahead of it: that is consistent.
void write_tail(const std::string& store_dir, uint64_t size, uint64_t checksum);
// True when the MANIFEST is consistent with its end mark (end_mark.h) and its tail (or
// there is neither); else false with *problem naming the file and what is wrong.
// On a file system whose clients may lag (view_may_lag), a MANIFEST that looks shorter or
// different is looked at again for kTailCatchUp first: such a client may see the mark or
// the tail before the MANIFEST's growth.
bool check_tail(const std::string& store_dir, std::string* problem);
inline constexpr std::chrono::seconds kTailCatchUp{3};
// One `drop` record per container, in one append. Appended BEFORE the container files are
// deleted: a crash in between leaves unnamed files (harmless), never a record naming a
// missing one.
bool append_drops(const std::string& store_dir, const std::vector<std::string>& containers,
                  std::string* err);

// One appender for many processes. On a distributed file system a client sees another
// client's appends late, so two clients appending to one MANIFEST chain records to stale
// ends. A forwarder group (forwarder/group/) therefore hands its records to one member,
// its leader, which appends them all: set_append_route makes every append of this process
// go to route(ctx, store, records, known_end, &end, &err) first:
//   kDone: the records are durable in store's MANIFEST, which is end bytes long after them;
//   kFailed: the appender refused them (*err);
//   kNotRouted: no appender to hand them to (this process leads): appended here as
//   without a route. (An appender that does not answer: the route appends them here
//   itself, unless_there, see append_here.)
// known_end is appended_end(store): the appender waits until it sees that much.
using Records = std::vector<std::vector<std::string>>;  // each record's fields
enum class Routed { kDone, kFailed, kNotRouted };
using AppendRoute = Routed (*)(void* ctx, const std::string& store, const Records& records,
                               uint64_t known_end, uint64_t* end, std::string* err);
void set_append_route(AppendRoute route, void* ctx);  // nullptr: none
// Appends records (each chained to the one before) to store's MANIFEST from this process,
// once this client sees at least known_end bytes of it (waiting up to kCatchUpLimit).
// *end (when not null): the MANIFEST's size after them. unless_there: records that are
// already there, one after the other, after byte known_end are not appended again (an
// appender they were handed to died before it answered; their fields are unique enough:
// a container name, or the same change to the same path).
bool append_here(const std::string& store_dir, const Records& records, uint64_t known_end,
                 uint64_t* end, std::string* err, bool unless_there = false);
inline constexpr std::chrono::seconds kCatchUpLimit{10};
// The largest size of store's MANIFEST after an append of this process, routed or not (0:
// none): a view of the MANIFEST shorter than that is older than this process's records.
uint64_t appended_end(const std::string& store_dir);
}  // namespace manifest

class Catalog {
 public:
  // Replays STORE/MANIFEST. A missing manifest is an empty catalog (true). Paths are read
  // as STORE/HOMES maps them (store_homes.h): a store moved with its run directory lists
  // its files where they are now.
  bool load(const std::string& store_dir, std::string* err);
  // Whether load may infer the former capture directory of a store without HOMES (true by
  // default). False for a store the user placed (CKPTFWD_STORE): a directory named
  // .ckptfwd there is no capture directory's.
  void infer_moves(bool on) { infer_ = on; }
  // The moves applied to the MANIFEST's paths (from HOMES, or inferred); empty when none.
  const std::vector<store_homes::Move>& moves() const { return moves_; }
  // The former capture directory inferred for a store with no HOMES ("" when none was).
  const std::string& inferred_former() const { return inferred_former_; }
  // The store's capture directory (store_homes::capture_dir; "" for a store elsewhere).
  const std::string& capture_dir() const { return cap_; }
  // Live paths outside the capture directory after the moves (a store in its default
  // place should have none: its run directory moved and no former place could be told).
  // None for a store the user placed (HOMES says so, or infer_moves(false)).
  std::vector<std::string> outside_capture_dir() const;
  // The same catalog from STORE/MANIFEST.snap and the records after it, when the snapshot
  // fits the MANIFEST (catalog_snapshot.h); else load(). What a forwarder's first look
  // at a store with a long history costs: its live files and the newer records.
  bool load_from_snapshot(const std::string& store_dir, std::string* err);
  // This catalog as a snapshot (catalog_snapshot.h); "" when it cannot be one (changed in
  // memory, its replay did not stop after a valid record, or it replayed a torn line).
  std::string snapshot_text() const;
  // The state a snapshot holds; false (the catalog then empty or partial: load it again)
  // when the text is not a complete, well-formed snapshot.
  bool restore_snapshot(const std::string& text);
  // The MANIFEST offset and size of the snapshot this catalog was loaded from or wrote
  // last (0: none).
  uint64_t snapshot_offset() const { return snap_offset_; }
  uint64_t snapshot_bytes() const { return snap_bytes_; }
  void note_snapshot(uint64_t offset, uint64_t bytes) {
    snap_offset_ = offset;
    snap_bytes_ = bytes;
  }
  // Replays only the records appended to STORE/MANIFEST since the last load or
  // load_appended (the bytes after the last complete line replayed), so a long-lived
  // reader keeps up with appends without replaying the whole journal each time. An
  // incomplete last line is left for the next call. Returns false when the file cannot
  // simply be continued (another file now, shorter than what was replayed, or the first
  // new record does not chain to the last one replayed: the MANIFEST was rewritten):
  // the caller then load()s it whole. problems() etc. gain what the new records bring.
  bool load_appended(const std::string& store_dir, std::string* err);
  // Bytes of STORE/MANIFEST replayed as complete lines so far.
  uint64_t replayed_bytes() const { return replayed_; }
  // How many apply_* calls changed this catalog outside a replay since the last load():
  // a catalog changed in memory is no longer the replay of its MANIFEST, so continuing
  // its replay would apply those records twice (forwarder/state/catalog_cache.cc).
  uint64_t local_changes() const { return local_changes_; }
  // Newest committed version of path, or nullptr.
  const CatalogEntry* find(const std::string& path) const;
  const std::map<std::string, CatalogEntry>& entries() const { return live_; }
  // Every container named by any record (live or superseded).
  const std::vector<std::string>& containers() const { return containers_; }
  // Lines skipped for a bad checksum or syntax and breaks of the chain, each
  // "MANIFEST:<line>: reason".
  const std::vector<std::string>& problems() const { return problems_; }
  // Paths named by a skipped (torn or corrupt) record that no later record settled (a
  // commit, unlink or rename onto them): their live entry, if any, is not their newest
  // version. path -> "MANIFEST:<line>: reason".
  const std::map<std::string, std::string>& uncertain() const { return uncertain_; }
  // Every path a skipped record named, settled since or not (its history has a gap: the
  // versions `ls --versions` counts back may be off by the ones it held).
  const std::map<std::string, std::string>& skipped() const { return skipped_; }
  // Skipped records from which no path could be read ("MANIFEST:<line>: reason"): the
  // files they recorded are unknown.
  const std::vector<std::string>& unreadable() const { return unreadable_; }
  // Lines where the chain does not follow ("MANIFEST:<line>: reason"); also in problems().
  const std::vector<std::string>& chain_breaks() const { return chain_breaks_; }
  // Records of the older format (no chain field), and chained records, replayed.
  size_t unchained_records() const { return unchained_; }
  size_t chained_records() const { return chained_; }
  // The identity the MANIFEST recorded for container (unknown when only older-format
  // records name it, or none does).
  ContainerIdentity identity_of(const std::string& container) const;
  // Applies a record in memory (used by load and by the forwarder to stay in sync).
  void apply_commit(const std::string& container, const std::vector<CatalogEntry>& files,
                    const ContainerIdentity& id = {});
  void apply_rename(const std::string& from, const std::string& to);
  void apply_unlink(const std::string& path);
  // Sets the mode of path's live entry (no-op if path is not live).
  void apply_chmod(const std::string& path, uint32_t mode);
  // Stacks each file on its path's live entry (see "Overlays" above). A path with no live
  // entry gets one with an empty base and the overlay's mode and mtime; on an existing
  // entry the mode stays and the mtime becomes the later of the two.
  // A `create` record: per file, apply_commit when path has no live entry, else stacked
  // on it like apply_overlay (with Layer::whole_hash).
  void apply_create(const std::string& container, const std::vector<CatalogEntry>& files,
                    const ContainerIdentity& id = {});
  void apply_overlay(const std::string& container, const std::vector<CatalogEntry>& files,
                     const ContainerIdentity& id = {});
  // The container was deleted: superseded versions in it are forgotten. A live file still
  // in it (a hand-edited or hostile manifest) keeps its entry and is reported as a
  // problem: restoring it will fail with a clear error.
  void apply_drop(const std::string& container);
  // CKPTFWD_KEEP: how many committed versions of each path to keep, the live one included
  // (0, the default: all; nothing is ever garbage). Set before load: the catalog then
  // remembers the newest keep-1 superseded versions of each path (a path's versions: what
  // its commits, renames onto it and its unlink replaced; the overlays stacked on a version
  // belong to it).
  void keep_versions(int keep) { keep_ = keep > 0 ? keep : 0; }
  // The superseded versions kept (keep_versions above, set before load), per path, oldest
  // first: what `ckptfwd ls --versions` lists and `restore --version` gives back.
  const std::map<std::string, std::vector<CatalogEntry>>& history() const { return history_; }
  // The containers that hold nothing of the live files nor of the kept superseded versions.
  std::vector<std::string> garbage() const;
  // Whether any overlay record named file file_index of container (live or superseded):
  // its FileEntry.hash then covers only its ranges (see container.h).
  bool is_overlay(const std::string& container, uint32_t file_index) const {
    return overlay_files_.count({container, file_index}) > 0;
  }

 private:
  void note_container(const std::string& container, const ContainerIdentity& id);
  bool load_once(const std::string& store_dir, std::string* err);
  // The store's place, and its HOMES, before a replay: cap_, moves_, aliases_ and the flags.
  void read_homes(const std::string& store_dir);
  // The former capture directory to infer after a load without moves, or "".
  std::string former_home() const;
  // former_home() when it is a move; "" when none, or when it is another path to this
  // very store (then an alias).
  std::string moved_from(const std::string& store_dir);
  // Each path field (after the verb, starting with '/') as the moves read it.
  void map_paths(std::vector<std::string>& f) const;
  std::vector<store_homes::Move> moves_;
  std::vector<std::string> aliases_;  // former places that are other paths to this store
  std::string cap_, inferred_former_;
  bool homes_present_ = false, user_placed_ = false;
  bool infer_ = true;
  // Replays one line (without '\n') numbered lineno; prev is the line checksum of the last
  // valid record, updated when this one is valid.
  void replay_line(const std::string& line, size_t lineno, bool torn, uint64_t& prev,
                   uint64_t& prev_line_sum);
  void apply_fields(const std::vector<std::string>& f, bool chained, size_t lineno);
  void note_skipped(const std::vector<std::string>& f, const std::string& where);
  void settle(const std::string& path) { uncertain_.erase(path); }
  // The live entry of path (if any) becomes its newest superseded version.
  void retire(const std::string& path);
  std::map<std::string, CatalogEntry> live_;
  std::map<std::string, std::vector<CatalogEntry>> history_;
  std::map<std::string, std::string> skipped_;  // oldest first, keep_-1 at most
  int keep_ = 0;
  std::set<std::pair<std::string, uint32_t>> overlay_files_;
  std::vector<std::string> containers_;
  std::map<std::string, ContainerIdentity> identities_;
  std::vector<std::string> problems_;
  std::map<std::string, std::string> uncertain_;
  std::vector<std::string> unreadable_;
  std::vector<std::string> chain_breaks_;
  size_t unchained_ = 0, chained_ = 0;
  // Where a continued replay (load_appended) picks up.
  uint64_t replayed_ = 0;  // bytes of complete lines replayed
  uint64_t prev_ = 0, prev_line_sum_ = 0;
  size_t lineno_ = 0;
  unsigned long long dev_ = 0, ino_ = 0;  // the MANIFEST file replayed
  bool replaying_ = false;
  uint64_t local_changes_ = 0;
  uint64_t snap_offset_ = 0, snap_bytes_ = 0;
  // A torn last line was replayed (and reported): a later replay may read it whole, so
  // this catalog's problems are not those of a replay of the MANIFEST it reaches then.
  bool saw_torn_ = false;
  void note_local_change() {
    if (!replaying_) ++local_changes_;
  }
};

}  // namespace ckptfwd
