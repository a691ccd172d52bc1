// The verbs of src/wire/protocol.h, one method each. Called from the per-connection
// threads; every method takes the state lock itself. Replies are lists of fields.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "forwarder/batching/loop_chores.h"
#include "forwarder/core.h"
#include "forwarder/group/group.h"
#include "forwarder/staging/extents.h"
#include "forwarder/util/pipelined_sessions.h"
#include "wire/protocol.h"

namespace ckptfwd::fwd {

using Reply = std::vector<std::string>;

struct ClientCtx {
  uint64_t id = 0;
  long pid = 0;
  int rank = -1;
  // Another node's forwarder (group.h) acting for its writers: never a local process, so
  // no liveness check, and its opens never go to an owner themselves.
  bool peer = false;
  std::set<uint64_t> closed;  // versions this connection closed (WAITALL waits for them)
  // A client session's CLOSE leaves its path's staged fate (wire/fate.h) to after_reply:
  // the unlink is off the application's wait. Others (a peer, tests) release at once.
  bool release_after_reply = false;
  std::vector<std::string> unclaimed;  // paths whose fate after_reply releases
  // Leased opens (wire/lease.h), for a client session (release_after_reply) on its socket
  // fd: a lease made after a reply (lease_made) is handed over in the next write OPEN's or
  // CLOSE's reply (into leases) and used by one OPEN. A lease is made after a CLOSE's or a
  // leased OPEN's reply (the application is between files, or writing one), and after a
  // waited write OPEN's when the client has none: lease_due says the last reply was one of
  // those. Up to kLeasesAhead are in the client's hands: with its CLOSEs unwaited
  // (interpose/track/detached_close.h) the next open's lease then came with a reply the
  // forwarder sent a file earlier, not with the one it is about to send.
  static constexpr size_t kLeasesAhead = 2;
  struct LeaseFiles {
    uint64_t vid = 0;  // 0: none; its staged file exists, "lease" in the journal
  };
  int fd = -1;
  LeaseFiles lease_made;
  std::vector<LeaseFiles> leases;  // handed over, not used yet (oldest first)
  // The vids of leases put into replies not sent yet (withdraw_lease takes only those).
  std::vector<uint64_t> leases_unsent;
  bool lease_due = false;
  bool wants_leases = false;  // HELLO pid rank "lease=": the library opens on leases
  // Its entry among the sessions that pipeline (set with its first lease).
  PipelinedSessions::Entry* pipelined = nullptr;
  // The namespace generation read as its read-only OPEN arrived, before that waited for
  // other sessions' leased OPENs (the read link it may publish: wire/read_link.h).
  uint64_t read_gen = 0;
};

// OPEN path flags mode lease=<vid> (wire/lease.h): a request its client does not wait for.
bool is_leased_open(const wire::Fields& f);
// That, or a CLOSE ending in "nowait" (wire/lease.h): the client sent it and went on.
bool is_unwaited(const wire::Fields& f);

Reply reply_ok(std::vector<std::string> more = {});
Reply reply_err(int err);
Reply reply_pass();

class Service : public LoopChores, public group::PeerHandler {
 public:
  explicit Service(Core& core) : c_(core) {}
  // The job's forwarder group (nullptr: none; every path is this node's own).
  // With a group, this process's MANIFEST records go to its leader (route_append).
  void set_group(group::Group* g);

  // Parses one request and runs its verb. Malformed requests get ERR EINVAL.
  Reply handle(ClientCtx& cl, const wire::Fields& f);
  // After handle()'s reply went out: what the verb left for then (the fates of paths
  // whose last writer closed, unless a version of one was opened for writing since).
  void after_reply(ClientCtx& cl);
  // Before replies go out on a session thread (which defers its journal records,
  // lease_journal_writer.h): what they rely on is written. False when it could not be.
  bool before_replies() { return c_.state.journal.flush(); }
  // A lease r would hand over (one of cl.leases_unsent) taken out of it and dropped: its
  // "lease" could not be written (lease_journal_writer.h).
  void withdraw_lease(ClientCtx& cl, Reply& r);

  // shared: OPEN ... "shared" (protocol.h): the version is partial.
  Reply open(ClientCtx& cl, const std::string& path, int flags, unsigned mode, bool shared = false);
  // OPEN path flags mode lease=<vid> (wire/lease.h): the version of path in the staged
  // file of cl's lease vid, its fate claimed by the client already.
  // seen_new: the client found no file at path, in a directory that exists (wire/lease.h).
  Reply open_leased(ClientCtx& cl, const std::string& path, int flags, unsigned mode, uint64_t vid,
                    bool seen_new);
  // ext: the client's extents file for a shared version ("" if none). hints: the
  // client's dtype hints file (the base name after "hints=", "" if none). blocked_ns: the
  // time the client's calls on the version took ("blocked=", ckpt_cost.h); the time the
  // request waits here is added to it. whole: "whole=<end>" instead of an extents file
  // (the client wrote [0, end) and nothing else); -1 when not given.
  Reply close(ClientCtx& cl, uint64_t vid, uint64_t size, const std::string& ext = "",
              const std::string& hints = "", int64_t blocked_ns = 0, int64_t whole = -1);
  Reply sync(ClientCtx& cl, uint64_t vid, const std::string& ext = "",
             const std::string& hints = "", int64_t blocked_ns = 0);
  Reply waitall(ClientCtx& cl);
  Reply abandon(ClientCtx& cl, uint64_t vid);
  // from_peer: asked by another node's forwarder (the group's STAT), answered from here.
  Reply stat(const std::string& path, bool from_peer = false);
  // from_peer (RENAME, UNLINK): another node's forwarder asks this node, the path's owner
  // (remote_names.cc), which does it here. *acted: a version or a store entry of the path
  // was there (the answer otherwise is PASS: the real file's).
  Reply rename(const std::string& from, const std::string& to, bool from_peer = false,
               bool* acted = nullptr);
  Reply unlink(const std::string& path, bool from_peer = false);
  Reply list(const std::string& dir);
  Reply chmod(const std::string& path, uint32_t mode);
  // REFRESH (refresh_verb.cc): path's open partial version takes in the store's content.
  Reply refresh(const std::string& path);
  // The counters; with vars, the per-variable lines instead (var_stats.h).
  Reply stats(bool vars = false);
  Reply drain();
  // The connection went away: its still-open versions are closed as they are (a killed
  // rank leaves the partial file a direct write would have left).
  // A process that is still alive keeps its references (Version::orphans).
  void disconnect(ClientCtx& cl);
  // Releases the references of processes that are gone (lock held): versions nobody holds
  // any more are closed as written, as at a disconnect. Returns when to look again
  // (time_point::max() when no version is held by a process without a connection).
  // *closed_some: it closed versions, which need a new pick.
  Clock::time_point reap_orphans(bool* closed_some) override;
  // Exit drain: seals everything now and waits until nothing is closed or committing.
  // Returns 0 or EIO if some version failed.
  int drain_all();

  // The batcher (lock held through lk, released while hashing): every closed version
  // settle_or_defer_unchanged left for it is hashed; one that holds its fsync snapshot's
  // bytes is forgotten (the snapshot stands), any other goes on to be committed.
  void settle_unchanged(std::unique_lock<std::mutex>& lk) override;

  // The owner's side of the group (remote_verbs.cc): another node's requests for the
  // paths this node owns. ATTACH opens a version for the peer's writers and sends its
  // bytes, MERGE takes the bytes they wrote (and closes or fsyncs it for them), READ
  // sends the newest bytes, WAIT answers once a version is committed; UNLINK, RENAME and
  // SUPERSEDE change the name space of its paths, NAMES lists them (remote_names.cc).
  bool serve_peer(const std::string& node, int sock, const group::Frame& head,
                  uint64_t body_len) override;
  void peer_gone(const std::string& node) override;
  // Read links only while this forwarder is alone in its group (read_links.h).
  void group_changed(bool alone) override {
    c_.links.set_on(alone && c_.cfg.read_links);
    c_.links.set_alone(alone);
  }

 private:
  Reply open_write(ClientCtx& cl, const std::string& path, int flags, unsigned mode, bool shared);
  // Leases (lease_verbs.cc). After a reply: a lease made for cl if it may have one and
  // has none. In a write OPEN's or CLOSE's OK reply r: the lease made, handed over. At a
  // disconnect: cl's unused lease files removed. Lock not held.
  void make_lease(ClientCtx& cl);
  void hand_over_lease(ClientCtx& cl, Reply& r);
  void drop_leases(ClientCtx& cl);
  // from_peer: a READ of another node (its owner lookup is done).
  // gen: the namespace generation read before anything that decides the answer (a read
  // link of it is published: wire/read_link.h); from_peer publishes none.
  Reply open_read(const std::string& path, bool from_peer = false, uint64_t gen = 0);
  // handle() without the generation's raises around it.
  Reply handle_request(ClientCtx& cl, const wire::Fields& f);
  // The writer's side of the group (remote_verbs.cc). A write open of a path another
  // node owns: a local version that starts from the owner's bytes (Version::owner_addr),
  // or nullopt to go on as before (this node owns it, or there is no group or owner to
  // reach). Lock held through lk, released while asking.
  // leased: the vid of a leased OPEN (wire/lease.h), whose staged file exists and is
  // being written: the copy is made in it only when the owner's bytes are none (O_TRUNC),
  // and a version of path another opener here holds is not joined (EBUSY).
  std::optional<Reply> open_at_owner(std::unique_lock<std::mutex>& lk, ClientCtx& cl,
                                     const std::string& path, int flags, unsigned mode,
                                     uint64_t leased = 0);
  // A read open of a path another node owns: its bytes in a read view, or nullopt to read
  // here. Lock not held.
  std::optional<Reply> read_at_owner(const std::string& path);
  // A stat of a path another node owns: its newest version's size, mode and time, or
  // nullopt to answer here. Lock not held.
  std::optional<Reply> stat_at_owner(const std::string& path);
  // The three above ask the owner once (the _once forms); an owner that cannot be reached
  // (*unreachable: its address, and why) may have died: asked again, through the leader,
  // which knows (group.h), for as long as the group waits for a dead owner's next forwarder.
  struct Unreachable {
    std::string addr, why;  // addr "": the owner answered (or there is none)
  };
  std::optional<Reply> open_at_owner_once(std::unique_lock<std::mutex>& lk, ClientCtx& cl,
                                          const std::string& path, int flags, unsigned mode,
                                          Unreachable* unreachable, uint64_t leased = 0);
  // Forgets vid but leaves its staged file (a leased one its client still writes, and
  // copies to the real path when its CLOSE finds no version). Lock held.
  void forget_leased(uint64_t vid);
  std::optional<Reply> read_at_owner_once(const std::string& path, Unreachable* unreachable);
  std::optional<Reply> stat_at_owner_once(const std::string& path, Unreachable* unreachable);
  // fallback: what this node does with path when the owner stays unreachable (logged).
  std::optional<Reply> ask_owner_again(
      const std::string& path, const char* fallback,
      const std::function<std::optional<Reply>(Unreachable*)>& once);
  // An UNLINK or RENAME (request) of path, which another node owns, done there
  // (remote_names.cc): the reply here, or nullopt to do it here; asked again as the three
  // above. Lock not held.
  std::optional<Reply> done_at_owner(const std::string& path, const char* fallback,
                                     std::vector<std::string> request);
  // A rename onto path here: this node owns path from now on, and the node that owned it
  // drops its versions (asked before the rename is recorded). Lock not held.
  void take_name(const std::string& path);
  // Drops the versions of path this node would commit itself (not the copies that hand
  // their bytes to another node's version): another node unlinked it. Lock not held.
  void drop_own_versions(const std::string& path);
  // One request to owner, answered with no body; false (and *unreachable) when it could
  // not be reached.
  bool ask_peer(const group::Owner& owner, std::vector<std::string> fields, group::Frame& reply,
                Unreachable* unreachable, uint64_t max_body = 0);
  // Adds the names other nodes' staged files in dir have (those not on the store yet are
  // only there). Lock not held.
  void names_at_owners(const std::string& dir, std::set<std::string>& names);
  // Hands what the writers of owner-backed version vid wrote to its owner (the lock
  // released meanwhile): final (its last CLOSE) closes the owner's version and forgets
  // this one; else (an fsync) the owner commits them before answering. 0, or an errno;
  // -1 when the owner could not be reached (the caller commits it here instead).
  int hand_to_owner(std::unique_lock<std::mutex>& lk, uint64_t vid, bool final);
  // The ClientCtx that stands for node's writers here (made on first use).
  ClientCtx& peer_ctx(const std::string& node);
  // Waits while this node hands a version of path to its owner (the lock released
  // meanwhile): the owner has those bytes afterwards. Then path's newest version here.
  Version* await_hand_over(std::unique_lock<std::mutex>& lk, const std::string& path);
  // The owner-side verbs of serve_peer.
  bool peer_attach(ClientCtx& cl, int sock, const group::Frame& head);
  bool peer_merge(ClientCtx& cl, int sock, const group::Frame& head, uint64_t body_len);
  bool peer_read(int sock, const group::Frame& head);
  bool peer_stat(int sock, const group::Frame& head);
  bool peer_wait(int sock, const group::Frame& head);
  bool peer_unlink(int sock, const group::Frame& head);
  bool peer_rename(int sock, const group::Frame& head);
  bool peer_supersede(int sock, const group::Frame& head);
  bool peer_names(int sock, const group::Frame& head);
  // The leader's side of the single MANIFEST appender (store/manifest/manifest.h): a
  // member's records appended here.
  bool peer_append(int sock, const group::Frame& head, uint64_t body_len);
  // manifest::AppendRoute of a member: its records handed to the leader.
  static manifest::Routed route_append(void* self, const std::string& store,
                                       const manifest::Records& records, uint64_t known_end,
                                       uint64_t* end, std::string* err);
  // The versions of other nodes' owners that closes here handed over (this node's vid ->
  // owner address and vid): WAITALL waits for their commit there. Lock held.
  struct HandedOver {
    std::string addr;
    uint64_t vid = 0;
  };
  std::map<uint64_t, HandedOver> handed_;
  // Waits (lock released) for the owners' commits of what cl's closes handed over.
  int wait_owners(std::unique_lock<std::mutex>& lk, const std::vector<uint64_t>& vids);
  // Where a new write version's starting bytes come from (open_write): the newest staged
  // version of the path, the store's live version, the real file, or nothing (a new file).
  struct WriteSource {
    enum class Kind { kNone, kStaged, kCatalog, kReal } kind = Kind::kNone;
    std::string store;  // store_for the path, set by the caller
    // Set by the caller: a leased open's client found no file at the path and a directory
    // where its directory is (wire/lease.h), so neither is looked at again.
    bool seen_new = false;
    std::string path;      // the file to copy (kStaged: its staged file; kReal: the path)
    CatalogEntry cat;      // kCatalog
    uint32_t mode = 0;     // the source's
    bool created = false;  // kStaged: a new file not committed yet
    // kStaged, partial or created: what the new version inherits (it supersedes the
    // source, so it must commit those bytes too; a created source makes it a new file).
    bool partial = false, extents_unknown = false, on_store = false;
    Extents extents;
  };
  // open_write's first step (lock held through lk, released while waiting): waits for a
  // version another node closed and has not committed yet (close-to-open; not for a shared
  // open) and for the first opener of a version being prepared; then the version of path
  // still open for writing, to join, or nullptr.
  Version* await_joinable(std::unique_lock<std::mutex>& lk, const std::string& path, bool shared);
  // When path's fate was claimed by a client's leased open whose OPEN has not come yet:
  // waits for it (lock released meanwhile, at most kLeasedOpenWaits ms) and returns its
  // version to join; nullptr otherwise.
  static constexpr int kLeasedOpenWaits = 200;
  Version* await_leased_open(std::unique_lock<std::mutex>& lk, const std::string& path);
  // Fills src (its store set) with path's newest bytes: staged, on the store or the real
  // file. A reply when path is a directory (EISDIR) or not a regular file (PASS). Lock held.
  std::optional<Reply> find_write_source(const std::string& path, WriteSource& src);
  // The reply refusing a write open of path from src under these flags (EIO when the store
  // may hold a newer version than src, ENOENT, EEXIST, ENOTDIR as a direct open would), or
  // nullopt to go on. Lock held.
  std::optional<Reply> refuse_write_open(const std::string& path, int flags, bool shared,
                                         const WriteSource& src);
  // The new version of path for client cl, held by it, with src's mode (req_mode for a new
  // file) and what it inherits of src (whose extents it takes). copy: it starts from src's
  // bytes. Lock held.
  // vid: a leased one (0: a new one).
  Version& add_write_version(ClientCtx& cl, const std::string& path, unsigned req_mode, bool shared,
                             bool copy, WriteSource& src, uint64_t vid = 0);
  // The staged file or .meta of new version vid could not be made (errno e, err): closes
  // fd and src_fd (when >= 0), forgets vid and answers PASS for a new file (made direct)
  // or e. Lock held.
  Reply staging_failed(const std::string& path, uint64_t vid, bool exists, int e, int fd,
                       int src_fd, const std::string& err);
  // Copies src's bytes (from src_fd, or restored from the store) into v's staged file fd,
  // lk released meanwhile (v is hidden from readers and joiners until then; only its vid is
  // used after), then writes its .meta. nullopt when done; else the error reply, with fd
  // and src_fd closed and the version forgotten.
  std::optional<Reply> copy_starting_bytes(std::unique_lock<std::mutex>& lk,
                                           const std::string& path, Version& v,
                                           const WriteSource& src, int fd, int src_fd);
  // Claims path's fate for staging (wire/fate.h): true, logged, when some process of the
  // job writes it directly, so this OPEN is answered PASS too. Lock held.
  bool written_directly(const std::string& path, long pid);
  // Another OPEN for writing of a path whose version v is still open (lock held).
  Reply join_write(ClientCtx& cl, Version& v, int flags, bool shared);
  // The closed version of path an OPEN (without O_TRUNC, not shared) by the process on cl
  // may reopen in place (reopen_in_place), or null. Lock held.
  Version* reopenable(const ClientCtx& cl, const std::string& path);
  // Reopens v for the process on cl: its staged file, with the bytes it closed, is written
  // on (no copy); v is open again and commits once closed again (lock held). A version
  // closed moments ago by the same process, not picked into a batch, never fsynced, never
  // shared with another process, named in no other node's close-to-open journal, while
  // no wait is in progress: the process's own exit wait covers it anyway, nobody else
  // waits for it, and if the process dies the file is kept as written, as a direct one
  // would be.
  Reply reopen_in_place(ClientCtx& cl, Version& v, int flags);
  // How far a staged file may grow (-1: no limit). Lock held.
  long long stage_budget();
  // path may have a newer version than the catalog's in a record cut off the end of
  // store's MANIFEST (CatalogCache::lost_version, as of the last get(store)): logged with
  // the fix and counted as an error; the caller answers EIO.
  bool lost_on_store(const std::string& store, const std::string& path);
  // The store's live version of path, or nullptr when there is none or the file at path
  // itself was written after it (store/manifest/newer_real_file.h: the file is the newest, and the
  // caller answers PASS so the library uses it). Logged once per path. Lock held.
  const CatalogEntry* store_version(const std::string& store, const std::string& path);
  // Waits (lock held through lk) until each vid is committed or dropped (0), or fails a
  // commit attempt that started after the wait began (EIO). Failed versions are requeued.
  int wait_committed(std::unique_lock<std::mutex>& lk, const std::vector<uint64_t>& vids);
  // A whole-file hash of an open version's staged file, taken without the state lock
  // (hash_if_synced), and what the version and its file were when it was taken.
  struct SyncedHash {
    uint64_t vid = 0, joins = 0;  // Version::joins then
    uint64_t size = 0;            // the staged file's size and mtime then
    int64_t mtime_ns = 0;
    bool ok = false;  // the file was read whole
    uint64_t hash = 0;
  };
  // v was just closed (mark_closed). A partial version that changed nothing is forgotten
  // (unchanged_partial); a whole one whose size, mode and mtime are those of its last
  // fsync snapshot, which the catalog still names, may hold exactly its bytes: it waits
  // as closed for the batcher to hash its staged file (settle_unchanged), and the CLOSE
  // is answered without that whole-file read. True when v needs nothing more here; false:
  // it is an ordinary closed version (count it as captured).
  bool settle_or_defer_unchanged(Version& v);
  // The checks of matches_synced that read nothing: v's last fsync snapshot is committed
  // with this size, v's mode and this mtime, and the catalog still names it. Lock held.
  bool synced_record_stands(const Version& v, uint64_t size, int64_t mtime_ns);
  // If v (open) may be unchanged since its last fsync (synced_record_stands with its
  // staged file's size and mtime now), hashes that file without the state lock: unlocks
  // lk, hashes it with pread (a writer may cut it meanwhile) and locks again. v may be
  // gone then: callers find it again by vid and look at everything anew. nullopt (the
  // lock kept) when it cannot be unchanged.
  std::optional<SyncedHash> hash_if_synced(std::unique_lock<std::mutex>& lk, Version& v);
  // v's staged file, with this size and mtime, holds exactly the bytes its last fsync
  // snapshot committed, and the catalog still names that snapshot (not for partial
  // versions), as hashed tells: a hash_if_synced of v taken since the last writer joined
  // it, of a file of this size and mtime. Reads nothing. Lock held.
  bool matches_synced(const Version& v, uint64_t size, int64_t mtime_ns,
                      const std::optional<SyncedHash>& hashed);
  // v (partial, just closed) started from the path's bytes and changed nothing: forgotten.
  bool unchanged_partial(Version& v);
  // CLOSE of a partial or new version: its extents file, a whole prefix (>= 0), or
  // neither (extents unknown then). Lock held; the caller rewrites the .meta after it.
  void take_extents(Version& v, const std::string& ext, int64_t whole);
  // A closed snapshot of still-open version v (fsync mid-write): a second name of its
  // staged file (Version::live_source), or a copy where none can be made; its vid, 0 on
  // failure, or kSnapshotSuperseded when the path was unlinked or replaced meanwhile
  // (an fsync then has nothing to make durable, as if that had happened before it).
  static constexpr uint64_t kSnapshotSuperseded = UINT64_MAX;
  uint64_t snapshot(std::unique_lock<std::mutex>& lk, uint64_t vid);
  // snapshot's steps. The snapshot version of open version v, not ready and without its
  // staged file yet: it takes what v has handed over so far (extents, hints) and v's
  // order (v, still written, stays the newest of its path). Lock held.
  Version& add_snapshot_of(Version& v);
  // What make_snapshot_file made of a snapshot's staged file.
  struct SnapshotFile {
    bool live = false;   // a second name of the open version's staged file
    bool small = false;  // at most Config.snapshot_read_max bytes: read into memory
    bool ok = false;     // made (linked or copied); else err says why
    std::string err;
  };
  // The staged file dst_path of a snapshot of open version vid (its application path
  // app_path, its staged file src_path, opened as src, -1 if that failed): a second name
  // of it, or a copy where none can be made or a process of writers maps it shared and
  // writable. Lock not held.
  SnapshotFile make_snapshot_file(uint64_t vid, const std::string& app_path, int src,
                                  const std::string& src_path, const std::string& dst_path,
                                  const std::vector<long>& writers);
  // Lock held again after make_snapshot_file: snapshot svid of vid made ready and closed
  // (writers: who may write its file while it is read in place), and what snapshot()
  // returns: svid, 0 when it failed (forgotten), or kSnapshotSuperseded when it or vid was
  // dropped meanwhile.
  uint64_t finish_snapshot(uint64_t vid, uint64_t svid, const SnapshotFile& file,
                           std::vector<long> writers);
  // Close-to-open across nodes (pending_journal.h): v, just closed, is noted as not on
  // the store yet; an open here of a path another node closed waits for its commit.
  // Not noted for a path this node owns in the group. A CLOSE that noted one answers no
  // earlier than the journal counts it (await_noted; lk released meanwhile).
  void note_pending(Version& v);
  void await_noted(std::unique_lock<std::mutex>& lk);
  // RENAME's work, under its manifest turn (lk held); *acted as for rename().
  Reply rename_in_turn(std::unique_lock<std::mutex>& lk, const std::string& from,
                       const std::string& to, bool* acted);
  // UNLINK's work here; *acted as for rename().
  Reply unlink_here(const std::string& path, bool* acted);
  // PASS when a real file exists at path too (the library then does the call on it),
  // else OK.
  static Reply done_or_pass(const std::string& path);
  void await_other_nodes(std::unique_lock<std::mutex>& lk, const std::string& path);
  // Waits (lk released meanwhile) while a record of this forwarder is in flight to store
  // (manifest_turn.h): its catalog is frozen then, so a version another node committed just
  // before would not show, and a lookup would take an older version, or none (ENOENT), for
  // the newest. Before the lookups that answer readers (read opens, stat); a turn lasts
  // one append. Write opens do not wait (their OPEN during a RENAME's record is part of
  // that verb's contract: forwarder_commit_lock_test.cc).
  void await_own_records(std::unique_lock<std::mutex>& lk, const std::string& store);
  // Closes vid, which no process holds any more (pid: the last one), as written. Lock held.
  void close_unheld(uint64_t vid, long pid);
  // Runs append (a MANIFEST record of a name-space verb: write + fdatasync) with the
  // state lock released and takes it again. The caller holds the turn of the record's
  // store (manifest_turn.h): no other record goes in meanwhile and the cached catalog
  // stays as it was, but versions may be opened, closed or dropped meanwhile, so what the
  // caller found before must be looked at again after it.
  bool append_unlocked(std::unique_lock<std::mutex>& lk,
                       const std::function<bool(std::string*)>& append, std::string* err);
  // Stages catalog entry e of store as a new closed version of path (cross-store rename).
  bool stage_from_catalog(std::unique_lock<std::mutex>& lk, const std::string& store,
                          const CatalogEntry& e, const std::string& path);

  Core& c_;
  group::Group* group_ = nullptr;
  // Owners' addresses that stayed unreachable for a whole wait, and when (ask_owner_again).
  std::map<std::string, Clock::time_point> gave_up_on_;
  std::map<std::string, ClientCtx> peers_;  // a ClientCtx per peer node (lock held)
  PipelinedSessions pipelined_;             // the sessions given a lease
};

}  // namespace ckptfwd::fwd
