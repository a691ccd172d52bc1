// The container: one file on the store per batch and writer. `ckptfwd restore` needs
// nothing but the container to give every file back.
//
// Layout (all integers little endian):
//   header   "CKFWDC01" | u32 format_version(6) | u32 flags(0)
//            (version 1: without dtype hints per file; version 2: without variable
//            maps per file; version 3: without reference chunks; version 4: content
//            hashes XXH64 instead of XXH3; version 5: without variables' placements;
//            all still read)
//   chunks   compressed chunk bytes, back to back
//   index    streams, then files (see StreamInfo, FileEntry; encoding in container_format.cc)
//   trailer  u64 index_offset | u64 index_len | u64 xxh64(index) | "CKFWDEND"
// A container in a store is made read-only once the MANIFEST record naming it is durable
// (store/manifest/manifest_end.h): its bytes never change after that; the file's mode tells a
// container of a record cut off the MANIFEST's end from a writer's leftover.
// Every chunk carries its codec id, raw and compressed sizes, the content hash
// (store/container/content_hash.h) of its compressed bytes (to locate corruption without
// decompressing) and of its raw bytes.
// A reference chunk (codec CodecId::kRef, version 4 on; store/container/chunk_ref.h) stores instead
// of bytes the name of an equal chunk in another container of the same store directory (file name,
// that container's identity, stream and chunk index); its raw size and raw hash are the referenced
// chunk's. The reader resolves it by opening that container next to this one (once per reader, at
// most 64 of them), checks its identity, that the chunk there is not itself a reference (depth 1)
// and the raw hash of what it decodes: a missing, replaced or corrupt referenced container is an
// error naming both containers. So a container with references restores only from its store, beside
// the containers it names; CKPTFWD_KEEP keeps a referenced container while a kept one refers to it.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/view_shape.h"
#include "store/container/chunk_encode.h"
#include "store/container/content_hash.h"
#include "store/container/variable_map.h"

namespace ckptfwd {

struct ChunkRef;  // store/container/chunk_ref.h

// What a MANIFEST commit or overlay record says about its container, so that a reader can
// tell the container it opens is the one the record was written for (a container copied
// or renamed over another one's name has another size or another index): its size in
// bytes and the xxh64 of its index, as the trailer records it. size 0 means unknown (a
// record of the older format, before records carried it): a container is never empty.
struct ContainerIdentity {
  uint64_t size = 0;
  uint64_t index_hash = 0;
  bool known() const { return size != 0; }
  bool operator==(const ContainerIdentity&) const = default;
};

// "<size> bytes, index xxh64 <hex>", for messages.
std::string describe(const ContainerIdentity& id);

// Reads only the header and trailer of the container at path (no index parsing): what a
// writer of a MANIFEST record needs when it did not write the container itself.
bool read_container_identity(const std::string& path, ContainerIdentity& out, std::string* err);

struct ChunkInfo {
  uint8_t codec = 0;  // CodecId
  uint32_t raw_size = 0;
  uint32_t comp_size = 0;
  uint64_t offset = 0;     // absolute offset in the container
  uint64_t raw_hash = 0;   // content hash of the raw bytes (the container's kind, content_hash.h)
  uint64_t comp_hash = 0;  // content hash of the stored bytes
};

struct StreamInfo {
  std::string key;        // variable key, e.g. "fields/Temperature_F32LE_Array3D" or "agnostic"
  std::string dtype;      // "bytes", "F32LE", ...
  std::string scheme;     // "agnostic", ...
  uint64_t raw_size = 0;  // sum of chunk raw sizes
  std::vector<ChunkInfo> chunks;
};

// A piece of a file: bytes [file_off, file_off+len) are stream bytes [stream_off, +len).
// Bytes of a file covered by no range are zero (holes).
struct FileRange {
  uint64_t file_off = 0;
  uint64_t len = 0;
  uint32_t stream = 0;
  uint64_t stream_off = 0;
};

// Bytes [file_off, file_off+len) of a file are an array of dtype (a DtypeCode of
// base/dtype.h, never kBytes). Only a compression aid: a wrong hint never changes the
// restored bytes.
struct DtypeHint {
  uint64_t file_off = 0;
  uint64_t len = 0;  // > 0
  uint8_t dtype = 0;
  bool operator==(const DtypeHint&) const = default;
};

struct FileEntry {
  std::string path;  // absolute path the application used
  int32_t rank = -1;
  uint64_t size = 0;
  uint32_t mode = 0644;  // permission bits
  int64_t mtime_ns = 0;
  uint64_t version = 0;  // forwarder version id (diagnostics)
  // The content hash (content_hash.h: XXH3 from format version 5, XXH64 before) of the
  // whole file content, holes as zeros (restore_file checks it).
  // For an overlay (a file the MANIFEST names in an "overlay" record, see manifest.h: the
  // extents one node wrote of a shared file; bytes outside its ranges are "unchanged", not
  // zeros) it is instead the hash of the bytes of its ranges concatenated in file order,
  // holes contributing nothing (overlay_file checks that).
  uint64_t hash = 0;
  std::vector<FileRange> ranges;
  // Element types of parts of the file: sorted by file_off, disjoint, within [0, size),
  // valid non-zero codes (the writer refuses anything else; version 1 containers: none).
  std::vector<DtypeHint> hints;
  // Which bytes of the file are which variable (store/container/variable_map.h), as structure
  // inference found them when the version was committed; empty for a file stored agnostic
  // (and in containers of versions 1 and 2). Checked against size like the ranges.
  VariableMap vars;
  // The global arrays of the MPI-IO views the file was written through
  // (base/view_shape.h; format version 6 on), also for an overlay, whose map is empty:
  // with them a reader maps a file several nodes wrote from the stacked layers.
  std::vector<ViewShape> views;
};

class ContainerWriter {
 public:
  ContainerWriter();
  ~ContainerWriter();  // aborts (removes the temporary) if not committed
  // Creates a temporary next to final_path; nothing appears at final_path before commit().
  // direct: whole 8 MiB pieces are written with O_DIRECT where the file system allows it
  // (store/container/direct_append.h), the rest through the page cache.
  bool open(const std::string& final_path, std::string* err, bool direct = true);
  uint32_t add_stream(const std::string& key, const std::string& dtype, const std::string& scheme);
  // Appends the next chunk of stream s (call in stream order; streams may interleave).
  bool append_chunk(uint32_t s, const EncodedChunk& c, std::string* err);
  void add_file(FileEntry f);
  // Writes index and trailer, fsyncs, renames to final_path, fsyncs the directory.
  bool commit(std::string* err);
  void abort();
  uint64_t bytes_written() const;
  // Of them, the bytes written with O_DIRECT (see open()).
  uint64_t direct_bytes() const;
  // After a successful commit(): what its MANIFEST record must carry.
  ContainerIdentity identity() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ContainerReader {
 public:
  ContainerReader();
  ~ContainerReader();
  // Reads and checks header, trailer and index (bounds of every chunk and range checked:
  // a hostile container gets an error, never an out-of-bounds access).
  bool open(const std::string& path, std::string* err);
  const std::vector<StreamInfo>& streams() const;
  const std::vector<FileEntry>& files() const;
  // The size and index checksum of the open container (see ContainerIdentity).
  ContainerIdentity identity() const;
  // The hash its chunks and files are checked with (by its format version).
  HashKind content_hash_kind() const;
  // Threads that decode a file's chunks while it is restored, read or checked (1, the
  // default: the calling thread alone; n > 1 starts n - 1 helpers per file of two or more
  // chunks, see store/container/decode_ahead.h). Set it before use, not while a walk runs.
  void set_decode_threads(unsigned n);
  // fpzip chunks are decoded from a container this process's user owns, after their stored
  // bytes matched their checksum (codec/chain/typed.h: libfpzip's decoder does not survive
  // a hostile stream). false: never (a caller that forges checksums itself, as the fuzz
  // target does). Containers reached through references inherit it.
  void set_fpzip_decode(bool allow);
  // The codec chain chunk i of stream s was stored with, for people: the chain's name for
  // a typed chain ("fixed(e=2)+delta+shuffle+zstd-1"), else the codec's ("zstd", "raw").
  // Reads only the start of the chunk; "?" when it cannot be read or named.
  std::string chunk_chain(size_t s, size_t i) const;
  // How many chunks are references (CodecId::kRef), from the index alone.
  size_t ref_chunks() const;
  // Chunk i of stream s is a reference: what it names (read and parsed, not resolved).
  bool chunk_ref(size_t s, size_t i, ChunkRef& out, std::string* err) const;
  // Adds the file names of the containers this one's reference chunks name (each read and
  // parsed; false with *err when one cannot be).
  bool referenced_containers(std::set<std::string>& out, std::string* err) const;
  // Reconstructs file i and writes it to fd (pwrite from offset 0; holes left as holes
  // and the size set with ftruncate). Checks chunk hashes and the file hash. fresh: fd
  // is empty, so the ftruncate is skipped when the last piece written ends at the size.
  bool restore_file(size_t i, int fd, std::string* err, bool fresh = false);
  // Same into memory.
  bool read_file(size_t i, std::vector<uint8_t>& out, std::string* err);
  // Files fis[k] into fds[k] (each empty, just made), as restore_file does, and into
  // memory as read_file does, in one pass: every chunk they need is decoded once, and
  // its pieces go to every file (container_many.cc). A variable
  // merged across ranks has chunks that hold pieces of several files; restored one after
  // the other, each file decodes them again once the container's decoded chunks outgrow
  // the reader's cache. Each file is checked against its hash; one that fails is restored
  // again alone, so errs[k] holds the error restore_file (read_file) gives, or "". True
  // when every file came out whole.
  bool restore_files(const std::vector<size_t>& fis, const std::vector<int>& fds,
                     std::vector<std::string>& errs);
  bool read_files(const std::vector<size_t>& fis, std::vector<std::vector<uint8_t>>& outs,
                  std::vector<std::string>& errs);
  // For files fis: group[k], the same number for files that share a chunk, directly or
  // through others (numbered from 0 in the order of each group's first file). Files of
  // one group restore best together (restore_files); files of different groups share no
  // decoding.
  std::vector<size_t> chunk_groups(const std::vector<size_t>& fis) const;
  // How many chunks this reader has decoded so far (a chunk its cache held is not counted
  // again): what a restore cost, for tests and reports.
  uint64_t chunks_decoded() const;
  // Bytes [off, off + len) of file i (inside its size) into out, resized to len (holes as
  // zeros), decoding only the chunks that hold them (container_span.cc): one variable of
  // a file without the rest. The file's hash covers the whole file, so each chunk used is
  // checked against its raw hash instead. *decoded (if given) adds the raw bytes of the
  // chunks used that no earlier read_span of this reader used.
  bool read_span(size_t i, uint64_t off, uint64_t len, std::vector<uint8_t>& out, std::string* err,
                 uint64_t* decoded = nullptr);
  // Whether bytes [off, off + len) of file i come from chunks a lossy chain encoded (a
  // variable opted into CKPTFWD_LOSSY): true with *out merged over them (the loosest
  // bound, the largest error; relative if any is), read from the chunks' headers alone.
  bool span_lossy(size_t i, uint64_t off, uint64_t len, codec::LossyRecord* out) const;
  // Applies file i as an overlay onto fd: pwrites only its ranges (chunk hashes checked,
  // holes leave fd's bytes alone), then extends fd to the file's size if fd is shorter
  // (never shrinks). Checks the overlay hash (see FileEntry.hash), or with whole_hash the
  // whole-file hash (a new file stacked as an overlay: the `create` record in manifest.h).
  // On failure some ranges may already be written: the caller discards fd.
  bool overlay_file(size_t i, int fd, std::string* err, bool whole_hash = false);
  // Checks every chunk (stored hash, decompression, raw hash), then that every file whose
  // chunks are sound reassembles to its hash. Each problem is one line naming the
  // container path, the byte offset and what is wrong. True when none.
  // overlay[i] says file i is an overlay (its hash covers its ranges only); files past the
  // end of it are whole files. Without it (a lone container, whose kinds only the MANIFEST
  // knows) a file passes with either kind of hash.
  bool verify(std::vector<std::string>& problems, const std::vector<bool>* overlay = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ckptfwd
