// Reading a container's chunks without the page cache (O_DIRECT), for restores.
//
// A restart reads each chunk of a container once and decodes it; through the page cache
// every stored byte is first copied into newly allocated cache pages and then again into
// the reader's buffer, and the pages stay, taking node memory from the application that is
// restarting. A profile of a 512 MiB restart through the forwarder spent 24% of its
// samples in that second copy alone. Containers are written past the page cache too
// (direct_append.h), so there is rarely a cached copy to miss.
//
// DirectRange reads a chunk's range, widened to whole aligned blocks, into an aligned
// buffer with O_DIRECT and points at the chunk's bytes inside it. A small range (less
// than kMinDirectBytes: read-ahead serves it better) is read through the caller's
// buffered descriptor, and so is every range once the file system refused O_DIRECT (tmpfs
// before Linux 6.6, some network file systems: EINVAL at open or read) or a direct read
// went short: the same bytes either way.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ckptfwd {

// A growable buffer aligned for direct reads; keeps its memory for the next read.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  // Room for n bytes (contents not kept). False if out of memory.
  bool reserve(size_t n);
  uint8_t* data() { return p_; }

 private:
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

class DirectRange {
 public:
  static constexpr size_t kAlign = 4096;                // offset, length and address
  static constexpr size_t kMinDirectBytes = 256 << 10;  // smaller ranges: buffered

  DirectRange() = default;
  ~DirectRange();
  DirectRange(const DirectRange&) = delete;
  DirectRange& operator=(const DirectRange&) = delete;

  // Opens path for direct reads beside the caller's buffered descriptor; with on false, or
  // where O_DIRECT is refused, every read goes through the buffered descriptor.
  void open(const char* path, bool on);
  // Bytes [off, off + n) of the file: *data points at them in buf (direct read) or buf
  // holds them from its start (buffered read through buffered_fd). False with errno on
  // a read error or a range past the end of the file.
  bool read(int buffered_fd, uint64_t off, size_t n, AlignedBuffer& buf,
            const uint8_t** data) const;
  // Whether ranges are read with O_DIRECT now (false once it fell back).
  bool direct() const { return usable_.load(std::memory_order_relaxed); }

 private:
  int fd_ = -1;
  mutable std::atomic<bool> usable_{false};
};

// The process-wide default of ContainerReader: whether it reads large chunks with
// O_DIRECT (CKPTFWD_DIRECT_READ; the forwarder and the CLI set it from their Config).
void set_direct_read_default(bool on);
bool direct_read_default();

}  // namespace ckptfwd
