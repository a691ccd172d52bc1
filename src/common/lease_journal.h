// The journal of leased versions' descriptions: the files journal.<n> in a session
// directory (wire/session.h), which stand in for the .meta of every version opened on a
// lease (wire/lease.h). The forwarder appends to it (forwarder/staging/
// lease_journal_writer.h); its recovery (forwarder/daemon/recovery.cc) and `ckptfwd
// drain` (tools/ckptfwd/staged_versions.cc) read it through journal_descriptions.
//
// Why a journal: a .meta per small file cost the forwarder's session thread, which a
// script writing many small files waits for, four system calls (a create and a write at
// the lease, a pwrite and a close at its CLOSE) and the commit thread an unlink. A journal
// takes one write for every record made while a session answers the requests it found
// queued, and one for the versions a batch commits.
//
// Records, appended whole in one write(2) each (several records may share one):
//   M <vid> <len>\n<len bytes>    vid's description: a .meta's text (common/staged_meta.h,
//                                 at most kMaxText bytes) or wire::kLeaseMeta ("lease":
//                                 handed over, not closed yet)
//   F <vid>\n                     vid is gone: committed, dropped, or its lease unused
// vid: decimal, 1..2^63. The last record of a vid counts, the files taken in order of n.
// A forwarder killed during a write leaves a prefix of it: a record cut short at the end
// of a file is no record (the reply that relied on it was never sent). Bytes that make no
// record elsewhere (a file damaged by hand) are passed over up to the next line that
// starts one, and counted.
//
// A vid's description stands for its .meta only while its data file (v<vid>.data) is
// there and it has no .meta of its own (the .meta wins: a recovery writes one from the
// journal before it removes the journal).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptfwd {

inline constexpr size_t kMaxJournalText = 4096;  // a .meta is at most a page

// "M <vid> <len>\n<text>" and "F <vid>\n".
std::string journal_description(uint64_t vid, std::string_view text);
std::string journal_gone(uint64_t vid);

// Applies the records of bytes, in order, to last: a description sets vid's, a gone
// record sets nullopt. Returns how many stretches of bytes made no record (a record cut
// short at the end is not one of them).
size_t parse_journal(std::string_view bytes, std::map<uint64_t, std::optional<std::string>>& last);

// The journal files of session directory dir (journal.<n>, regular files), as full paths,
// oldest first.
std::vector<std::string> journal_files(const std::string& dir);
// "journal.<n>"
std::string journal_file_name(uint64_t n);

// The descriptions the journals of dir hold (vids whose last record is gone left out),
// read never through a symbolic link. *bad (when given): stretches that made no record.
std::map<uint64_t, std::string> journal_descriptions(const std::string& dir, size_t* bad = nullptr);

}  // namespace ckptfwd
