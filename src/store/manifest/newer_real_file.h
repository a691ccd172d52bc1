// Newest wins, whatever wrote it. A captured path may have both a version in the store and
// a file of its own on the file system: written directly after the store's version by a
// process that could not stage it (its forwarder unreachable or unable to start, a bad
// setting, CKPTFWD_DISABLE, a refused session directory) or that ran without the library.
// Reads through the library, and `ckptfwd restore`, must then give the file, not the
// store's older bytes. The two are ordered by modification time: the store's version by
// the mtime it was captured with (CatalogEntry::mtime_ns, its last write into staging),
// the file by its own.
//
// What this order can get wrong, and why it is still the right one: the two clocks are
// the staging node's and the file system's (a parallel file system's server or client):
// a direct write within their skew (milliseconds under NTP) of the store version's last
// write, or within the file system's timestamp granularity, counts as older; so does a
// file whose mtime was set back (touch -d, cp -p). A store version wins ties. Nothing
// else written after a checkpoint is at its path: captured files never reach it.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace ckptfwd {

// True when path is a regular file (not followed through a symlink) whose modification
// time is later than version_mtime_ns. False for a missing file, anything else, or an
// unknown version time (0: records of older formats, where the store keeps winning).
// *file_mtime_ns gets the file's time when true (for messages).
bool real_file_is_newer(const std::string& path, int64_t version_mtime_ns,
                        int64_t* file_mtime_ns = nullptr);
// The same for a file already looked at (stat, or fstat of an open descriptor, so that
// what is read is what was checked).
bool stat_is_newer(const struct stat& st, int64_t version_mtime_ns,
                   int64_t* file_mtime_ns = nullptr);

}  // namespace ckptfwd
