// Translations between the ways an application asks for a file (open flags, fopen modes)
// and the way the library opens the forwarder's staged file. Pure logic.
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

// fopen/freopen mode string -> open(2) flags, as glibc does it ("r", "w+", "ab", "wx",
// "re", ...). Returns -1 for a mode glibc would reject (EINVAL).
int fopen_mode_to_flags(const char* mode);

// Flags for opening a staged file on behalf of an application open with app_flags: the
// staged file already exists with the version's starting bytes, so creation, exclusivity,
// truncation and no-follow are dropped; O_DIRECT too (tmpfs rejects it). Access mode,
// O_APPEND, O_CLOEXEC and the rest are kept.
int staged_open_flags(int app_flags);

// Opens that can never be captured: directories and O_PATH handles (also O_TMPFILE,
// which includes O_DIRECTORY).
bool open_is_capturable(int flags);

// True if open(2) reads a mode argument for these flags.
bool open_needs_mode(int flags);

// The mode string for reopening a staged file with fopen/freopen: app mode without 'x'
// (the staged file exists already). Returns false if it does not fit in cap.
bool staged_fopen_mode(const char* mode, char* out, size_t cap);

}  // namespace ckptfwd::interpose
