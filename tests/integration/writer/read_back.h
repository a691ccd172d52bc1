// Read-back modes: what a restarting application does with its checkpoint files.
#pragma once
#include <string>
#include <vector>

namespace ckpt_writer {

// Reads path four ways (read, pread, fread, mmap) and checks all four agree with each other
// and with stat()'s size. Prints "<name> <size> <digest>" on stdout. Returns false (after
// printing what disagreed to stderr) if they do not agree or a call fails.
bool digest_file(const std::string& dir, const std::string& name);
// Prints the names in dir (opendir/readdir), sorted, skipping dot-entries (the library's
// store directory .ckptfwd lives there and a direct run has none).
bool list_dir(const std::string& dir);

}  // namespace ckpt_writer
