// The CKPTFWD_ADOPT value exec hands to the new program image (see wrap_exec.cc):
//   <socket fd>;<fd>,<vid>,<budget>,<mode octal>,<path length>:<path>;...
// Paths are length-prefixed, so any byte but NUL may appear in them. Pure logic.
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

struct AdoptRecord {
  int fd = -1;
  unsigned long long vid = 0;
  long long budget = -1;
  unsigned mode = 0;
  const char* path = nullptr;  // points into the parsed string, not NUL-terminated
  size_t path_len = 0;
};

// Writes "<sock>;" into out. Returns the length, or 0 if it does not fit.
size_t format_adopt_head(char* out, size_t cap, int sock);
// Writes one record. Returns the length, or 0 if it does not fit.
size_t format_adopt_record(char* out, size_t cap, const AdoptRecord& r);

// Parses the head; returns the position of the first record or nullptr if malformed.
const char* parse_adopt_head(const char* s, int& sock);
// Parses one record at p (not at the end). Returns the position after it, or nullptr if
// malformed (the caller stops there).
const char* parse_adopt_record(const char* p, AdoptRecord& r);

}  // namespace ckptfwd::interpose
