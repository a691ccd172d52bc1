// The bodies of the group's messages that carry lists (frame.h carries them as bytes):
//   APPEND  MANIFEST records: per record u32 field count, then each field u32 length, bytes
//   MERGE   extents: u64 begin, u64 end per extent (then the extents' bytes, streamed)
// Little endian. The decoders take bytes another forwarder sent: every count and length is
// checked against what is there, and a list that does not fill its body exactly is refused.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd::fwd::group {

using RecordFields = std::vector<std::vector<std::string>>;
using ExtentPairs = std::vector<std::pair<uint64_t, uint64_t>>;  // [begin, end)

inline constexpr uint32_t kMaxRecordFields = 1u << 20;

std::string encode_records(const RecordFields& records);
// n records, exactly filling body. False on anything else.
bool decode_records(const std::string& body, uint64_t n, RecordFields& out);

std::string encode_extents(const ExtentPairs& extents);
// n extents from the first 16n bytes of body (the caller has checked body holds them),
// each begin < end <= max_end; *bytes: the sum of their lengths. False on a bad extent.
bool decode_extents(const std::string& body, uint64_t n, uint64_t max_end, ExtentPairs& out,
                    uint64_t* bytes);

}  // namespace ckptfwd::fwd::group
