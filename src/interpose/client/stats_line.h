// The one stats line a process with fallbacks appends to CKPTFWD_STATS_FILE at exit:
// {"source":"client","pid":..,"rank":..,"fallbacks":..,"reason":"..."}. Written by hand
// into a fixed buffer (the library carries no JSON library), so that any reason text, a
// path of any bytes included, still makes a line every JSON reader accepts (`ckptfwd
// stats --file` reads it with nlohmann-json, which rejects invalid UTF-8).
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

// Writes the line with its newline into buf; returns its length, 0 if cap < 128. A reason
// too long for buf is cut (at a character boundary). In the reason, '"' and '\' are
// escaped, control characters become spaces, valid UTF-8 sequences are kept and any other
// byte becomes '?'.
size_t format_client_stats_line(char* buf, size_t cap, int pid, int rank, long fallbacks,
                                const char* reason);

// Length of the valid UTF-8 sequence at p (at most avail bytes), 0 if there is none
// (Unicode Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(const unsigned char* p, size_t avail);

}  // namespace ckptfwd::interpose
