// One MANIFEST line: its field encoding, its line checksum and its chain value (the
// record format is described in manifest.h). Shared by the appender (manifest_append.cc)
// and the replay (catalog.cc); no I/O here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::manifest_record {

// '%', tab, newline, CR -> %25 %09 %0A %0D; everything else as is.
std::string pct_encode(const std::string& s);
// Any %XX decodes (tolerant of writers that escape more than they must); a stray '%' fails.
bool pct_decode(const std::string& s, std::string& out);

std::string hex64(uint64_t v);                          // 16 lower-case hex digits
bool parse_hex64(const std::string& s, uint64_t& out);  // exactly 16 hex digits
std::string octal(uint32_t v);
bool parse_u64(const std::string& s, uint64_t& out);
bool parse_i64(const std::string& s, int64_t& out);
bool parse_octal(const std::string& s, uint32_t& out);

// The chain value of a record whose encoded fields (joined by tabs) are body, appended
// after a record whose line checksum is prev (0 for the first record of a MANIFEST):
// xxh64 of body seeded with prev. Each line checksum covers that line's chain value, so a
// record is bound to every record before it.
uint64_t chain_of(const std::string& body, uint64_t prev);

// The complete line ('\n' included) of a record with these (unencoded) fields, chained to
// prev. *checksum receives its line checksum: the next record's prev.
std::string encode_line(const std::vector<std::string>& fields, uint64_t prev, uint64_t* checksum);

struct DecodedLine {
  enum class Status {
    kOk,
    kNoChecksum,   // no "\t#<16 hex>" at the end: torn or foreign
    kBadChecksum,  // the line checksum does not match: corrupt
    kBadEncoding,  // checksum fine, a field's percent-encoding is not
  };
  Status status = Status::kNoChecksum;
  uint64_t checksum = 0;            // the "#" value (also when it does not match)
  std::vector<std::string> fields;  // decoded, without the chain field
  bool chained = false;             // the record carries "@<chain>" (newer format)
  uint64_t chain = 0;
  std::string body;  // encoded fields without the chain field: what chain_of hashes
};

// line without its '\n'. For a kBadChecksum line the fields are still decoded as far as
// possible (only to name the files a corrupt record probably held, never to apply it).
DecodedLine decode_line(const std::string& line);

}  // namespace ckptfwd::manifest_record
