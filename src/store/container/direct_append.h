// Appending a large file to the store without the page cache (O_DIRECT), for containers.
//
// A container is written once, front to back, fsync'd, and not read again by the process
// that wrote it. Through the page cache every byte is first copied into newly allocated
// cache pages, written back later, and the final fsync waits for whatever writeback has
// not done yet; the pages then stay and take node memory from the application. Measured on
// the test machine (1.3 GB from tmpfs to the store's disk, `dd bs=8M`): 1.0-2.8 s buffered
// with fsync, 0.81-0.96 s with O_DIRECT; a profile of a 2 GiB fsync through the forwarder
// spent 43% of its samples copying into cache pages.
//
// DirectAppender collects what is appended in an aligned buffer and writes every full
// buffer with O_DIRECT; the tail (less than a buffer: the rest of the last chunk, the
// index and trailer) goes through the page cache after finish(). A file smaller than one
// buffer is written buffered only. Where the file system refuses O_DIRECT (tmpfs before
// Linux 6.6, some network file systems: EINVAL) or a direct write goes short, it goes on
// buffered, losing nothing. The buffers (kBufferBytes each) are kept for the next file, so
// their pages are faulted in once per process, not once per container.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ckptfwd {

class DirectAppender {
 public:
  static constexpr size_t kAlign = 4096;            // offset, length and address of direct writes
  static constexpr size_t kBufferBytes = 8u << 20;  // one direct write

  // fd: open for writing, empty, its offset at 0; it is written with write() only.
  // direct false: everything goes through the page cache (write() as it comes).
  DirectAppender(int fd, bool direct);
  ~DirectAppender();  // gives the buffer back (for the next file)
  DirectAppender(const DirectAppender&) = delete;
  DirectAppender& operator=(const DirectAppender&) = delete;

  // Appends n bytes. False with errno set on a write error.
  bool append(const void* p, size_t n);
  // Writes what is buffered and clears O_DIRECT: after it the file holds every byte
  // appended and may be written like any other (the container's version patch). False
  // with errno set on a write error.
  bool finish();
  // Whether whole buffers are written with O_DIRECT now (false once it fell back).
  bool direct() const { return direct_; }
  // Bytes written with O_DIRECT so far (tests, stats).
  uint64_t direct_bytes() const { return direct_bytes_; }

 private:
  bool flush_full();
  bool write_buffered(const uint8_t* p, size_t n);

  int fd_;
  bool direct_;
  bool o_direct_set_ = false;  // O_DIRECT is on fd_
  uint8_t* buf_ = nullptr;
  size_t used_ = 0;
  uint64_t direct_bytes_ = 0;
};

}  // namespace ckptfwd
