// The bytes of a staged file as the pipeline reads them: a read-only mapping, or a private
// copy read once (an fsync snapshot, which must not change while it is committed).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ckptfwd::fwd {

class WorkerPool;  // worker_pool.h

// A read-only mapping of a whole file (empty files map nothing), or a private copy.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  // Maps the first `size` bytes (clamped to the file's actual size).
  bool open(const std::string& path, uint64_t size, std::string* err);
  // Reads the first `size` bytes (at most kCopyMax; clamped to what the file holds when
  // they are read) into memory of this object and hashes what it read (read_hash(), also
  // when the file was cut meanwhile): for a small file not read in place, instead of
  // open() or read_private(). A mapping costs it three system calls more (mmap, madvise,
  // munmap), and each munmap makes every other thread of the forwarder flush its TLB; a
  // batch of small files paid that once per file. False with *err.
  bool copy_small(const std::string& path, uint64_t size, std::string* err);
  static constexpr uint64_t kCopyMax = 64u << 10;
  // Reads the first `size` bytes (clamped to what the file holds when they are read) into
  // private memory, in 2 MiB slices on the workers of pool (this thread alone without
  // one): bytes that stay as they were read while the file goes on being written (or is
  // truncated, which would fault a mapping). The memory comes from, and goes back to,
  // the warm regions (warm_memory.h) when one fits.
  //
  // It also takes the content hash (content_hash.h) of the bytes read (read_hash()), each slice
  // hashed in file order as soon as it and the slices before it are in, mostly by the thread that
  // just read it while its bytes are still in that core's cache: hashed afterwards from
  // memory, a 64 MiB snapshot cost a pass of about 15 ms of one core on the test machine
  // (XXH64 ran at 4.4 GB/s from memory and 16 GB/s from cache there).
  bool read_private(const std::string& path, uint64_t size, WorkerPool* pool, std::string* err);
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // True after read_private or copy_small: the bytes live only in this object's memory.
  bool is_private() const { return mapped_ != 0 || copy_ != nullptr; }
  // The content hash of [data(), data() + size()) when read_private (every slice read whole)
  // or copy_small took it; nullopt after open() or a private read cut short by a writer.
  const std::optional<uint64_t>& read_hash() const { return read_hash_; }
  // Gives back the pages of [p, p+n) (clipped to the mapping; nothing outside it is ever
  // touched): the bytes stay in the staged file and are read again on the next access.
  // The pages of a tmpfs file mapped count in the process's RSS; without this a batch
  // larger than memory would hold all of it resident until the mapping goes away.
  // No-op on private memory, which holds the only copy of its bytes.
  void release(const uint8_t* p, uint64_t n) const;

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mapped_ = 0;              // read_private: the length of its private memory (else 0)
  std::unique_ptr<uint8_t[]> copy_;  // copy_small: the file's bytes
  std::optional<uint64_t> read_hash_;
};

// Maps the pages of [p, p+n) (widened to whole pages) in one system call
// (MADV_POPULATE_READ) before they are read, instead of a page fault every few pages: a
// batch read in place walks its staged files up to three times, and on the test machine
// this took the in-place checks of a 512 MiB fsync from 163-175 ms to 132-157 ms and the
// encoding of a 512 MiB batch of closed files from 352-377 ms to 333-351 ms. Pages the
// kernel cannot give (past the end of a file cut meanwhile) are left to the read that
// follows, whose SIGBUS the in-place guard catches; on memory that is mapped already it
// costs a page-table walk.
void populate_for_read(const uint8_t* p, uint64_t n);

}  // namespace ckptfwd::fwd
