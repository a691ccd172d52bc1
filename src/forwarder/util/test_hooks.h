// Points where in-process unit tests run code of their own inside the forwarder, to hold
// one of its threads at a chosen moment (races no request sequence could reach). The
// forwarder never sets them; an unset hook costs one test of an empty std::function.
//
// Process-wide rather than per forwarder instance: they are a test's instrument, not
// part of what a forwarder owns (core.h). A test sets a hook before the threads it races
// act and clears it after they are done (clear_test_hooks, which the unit-test fixtures
// call when a test ends), so hooks are read without a lock.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace ckptfwd::fwd {

struct BatchFile;  // pipeline/pipeline.h

struct TestHooks {
  // The committer and the name-space verbs (Service::append_unlocked), just before each
  // MANIFEST append, without the state lock (to observe that the lock is free over the
  // append and its fdatasync).
  std::function<void()> before_manifest_append;
  // The batcher, with each batch it wrote to a container, before the commit and without
  // the state lock (to hold a batch in flight).
  std::function<void(const std::vector<BatchFile>&)> after_batch_written;
  // An fsync's snapshot, between taking the staged file and linking or copying it,
  // without the state lock (to race a drop of the open version against it).
  std::function<void()> during_snapshot;
  // A SYNC (Service::hash_if_synced) or the batcher (settle_unchanged, after a CLOSE),
  // after hashing a staged file to tell whether it is unchanged since its last fsync,
  // before the state lock is taken again (to race requests against the hash).
  std::function<void()> during_synced_hash;
  // The pipeline, with the staged path of each fsync snapshot of a batch it reads in place
  // (pipeline/in_place.h), called for all of them once the chunks holding the first bytes
  // its checks walk are encoded, before the walk reads a byte (to change a file then): for
  // one file of at most 8 MiB in one range of one stream (FsyncInPlaceTest's), after it
  // was encoded whole. Without the state lock.
  std::function<void(const std::string&)> after_in_place_encode;
  // A client session's after_reply with fates to release, before it takes the state lock
  // (to open one of the paths again first).
  std::function<void()> before_release_after_reply;
  // Rendezvous::open, with the group directory, right after its mkdir (to make it vanish
  // for a while, as a distributed file system's client may show it).
  std::function<void(const std::string&)> after_rendezvous_mkdir;
  // Every client request, with its verb, as its session thread starts on it (before it
  // waits for other sessions' leased OPENs, pipelined_sessions.h).
  std::function<void(const std::string&)> at_request;
  // Before each write of the lease journal (lease_journal_writer.h): true makes it fail
  // (ENOSPC), as in a full staging directory.
  std::function<bool()> fail_journal_write;
  // Every write of replies to a client, with how many replies it carries.
  std::function<void(int)> at_reply_write;
  // A leased OPEN (wire/lease.h), before it is acted on (to hold it while another
  // session's request arrives).
  std::function<void()> before_leased_open;
  // A write OPEN copying the path's current bytes into its new version (lock not held),
  // with the path.
  std::function<void(const std::string&)> during_starting_copy;
};

TestHooks& test_hooks();
// Unsets every hook.
void clear_test_hooks();

}  // namespace ckptfwd::fwd
