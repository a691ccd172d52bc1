// Checked wrappers around the POSIX calls the writer uses: any failure prints the call, the
// path and errno's text, and exits 1, so a test sees a clear reason instead of bad bytes.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>

namespace ckpt_writer {

[[noreturn]] void die(const char* op, const std::string& path);
int xopen(const std::string& path, int flags, mode_t mode = 0644);
void xwrite_all(int fd, const void* buf, size_t n, const std::string& path);
void xpwrite_all(int fd, const void* buf, size_t n, off_t off, const std::string& path);
void xwritev_all(int fd, const struct iovec* iov, int cnt, const std::string& path);
void xclose(int fd, const std::string& path);
std::string join(const std::string& dir, const std::string& name);

}  // namespace ckpt_writer
