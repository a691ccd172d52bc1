// The library's side of the session's activity word (wire/activity.h): mapped once this
// process reached its forwarder, stored after captured calls, so the forwarder holds back
// its bulk compression while the application writes. Without the word (an older
// forwarder, a session file that is not ours) nothing is stored and nothing else changes.
#pragma once
#include <atomic>

#include "wire/activity.h"

namespace ckptfwd::interpose {

// The mapped word, or null. Set once; inherited by a fork (the same shared file).
extern std::atomic<activity::Clock*> g_activity;
// The mapped page (its other words: wire/activity.h), or null; set before g_activity.
extern std::atomic<void*> g_activity_page;
// When this process last stored it (its own copy: most calls only read this).
extern std::atomic<unsigned long long> g_activity_noted;

// Maps <session dir>/activity if it is not mapped yet: a regular file of this user's, at
// least activity::kBytes, with the magic. Called before a write OPEN; errno kept; never
// fails the caller.
void map_activity_clock();
// The same when mapped already but the file is another one now (a new forwarder's, after
// the session directory was removed): called at every new connection to the forwarder.
void remap_activity_clock();

// A captured call ended at now_ns (CLOCK_MONOTONIC): stored when the last store of this
// process is kStepNs old or more.
inline void note_activity(unsigned long long now_ns) {
  activity::Clock* clock = g_activity.load(std::memory_order_relaxed);
  if (!clock) return;
  unsigned long long last = g_activity_noted.load(std::memory_order_relaxed);
  if (now_ns - last < activity::kStepNs) return;
  g_activity_noted.store(now_ns, std::memory_order_relaxed);
  clock->store(now_ns, std::memory_order_relaxed);
}

// The namespace generation (wire/read_link.h), or null while the page is not mapped.
inline activity::Word* namespace_word() {
  void* page = g_activity_page.load(std::memory_order_acquire);
  return page ? activity::word_at(page, activity::kNamespaceOffset) : nullptr;
}
// Before anything that may change what a read open of a captured path gets: the read
// links made so far are not found any more.
inline void raise_namespace() {
  if (activity::Word* w = namespace_word()) w->fetch_add(1, std::memory_order_seq_cst);
}
// Whether the node's forwarder is alone in its group now (activity::kAloneOffset).
inline bool forwarder_alone() {
  void* page = g_activity_page.load(std::memory_order_acquire);
  return page &&
         activity::word_at(page, activity::kAloneOffset)->load(std::memory_order_acquire) != 0;
}
// Whether the forwarder makes read links now.
inline bool read_links_on() {
  void* page = g_activity_page.load(std::memory_order_acquire);
  return page &&
         activity::word_at(page, activity::kReadLinksOffset)->load(std::memory_order_acquire) != 0;
}

}  // namespace ckptfwd::interpose
