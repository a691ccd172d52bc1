// Dtype hints of a version (base/dtype.h): which bytes of the file are arrays of which
// element type, as the library learnt them (MPI-IO file views) and handed them over in
// hints files at CLOSE/SYNC. Only a compression aid: a bad hints file is logged and
// ignored, never a reason to fail a version.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/view_shape.h"
#include "forwarder/staging/extents.h"
#include "store/container/container.h"

namespace ckptfwd::fwd {

// Sorted by file_off, disjoint, adjacent hints of one dtype coalesced.
using Hints = std::vector<DtypeHint>;

// Hints files larger than this are refused (4 M records; keeps a runaway file from
// holding the forwarder's memory).
inline constexpr uint64_t kMaxHintsFileBytes = uint64_t{64} << 20;

// Reads a hints file (17-byte records, dtype.h) into records, in file order, and the views
// among them (base/view_shape.h) into views (when given; else they are skipped). Every
// record must have a valid non-zero code, len > 0 and end <= kMaxExtentEnd, every view a
// header and its dimensions as view_bytes accepts them, and the file a whole number of
// records. False with *err naming the file and the problem (records and views untouched).
bool read_hints_file(const std::string& path, std::vector<DtypeHint>& records, std::string* err,
                     std::vector<ViewShape>* views = nullptr);
// Writes h and views (0600, O_EXCL) to path. False with *err.
bool write_hints_file(const std::string& path, const Hints& h, std::string* err,
                      const std::vector<ViewShape>& views = {});
// Adds the views of add that views does not hold yet (every rank of a collective write
// hands over the same view).
void views_merge(std::vector<ViewShape>& views, const std::vector<ViewShape>& add);

// Applies records in order onto set: where they overlap, later records win.
void hints_apply(Hints& set, const std::vector<DtypeHint>& records);
// Cut to [0, size).
Hints hints_clip(const Hints& h, uint64_t size);
// Only the parts inside e (an overlay's ranges).
Hints hints_within(const Hints& h, const Extents& e);
uint64_t hints_bytes(const Hints& h);

// "h<vid>.<pid>.<seq>": a hints file of version vid in a session dir (digits only, no '/').
bool is_hints_file_name(const std::string& name, uint64_t vid);
// Parses any hints file name: its vid and seq. False if it is not one.
bool parse_hints_file_name(const std::string& name, uint64_t& vid, uint64_t& seq);
std::string hints_file_name(uint64_t vid, long pid, uint64_t seq);

}  // namespace ckptfwd::fwd
