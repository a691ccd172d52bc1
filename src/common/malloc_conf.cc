// jemalloc's settings for the programs linked with it (ckptfwd_use_jemalloc in the top
// CMakeLists.txt: the forwarder, the CLI, the ratio benchmark's driver), read at their
// start; a MALLOC_CONF in the environment still overrides them. With glibc's malloc (no
// jemalloc found, or a sanitizer build) the symbol is unused.
//
// narenas:2: jemalloc gives each thread one of 4 arenas per core by default, and each
// keeps the chunk buffers freed into it (megabytes each) resident for its decay time
// (10 s). Two batches in flight (an fsync's and a bulk one) then held ~100 MiB more
// than the same work in one batch: 4 ranks fsyncing 96 MiB each peaked at 261-288 MiB
// (3 of 5 runs under load), 144-190 MiB with two arenas, at the same CPU time. Purging
// at once instead (dirty_decay_ms:0) cost 50 % more CPU per fsync'd batch.
//
// thp:always: jemalloc asks for transparent huge pages on its memory (MADV_HUGEPAGE, where
// the kernel allows it). A forwarder's first batch faults in the codec contexts and
// buffers of each compression thread (megabytes each), and a restore decodes every chunk
// into fresh memory; on the test machine (a VM) the first touch of 64 MiB took 225 ms in
// 4 KiB pages (14 us a fault), 5 ms in 2 MiB ones. It keeps ~10 MiB more resident
// (docs/internals.md, "The commit pipeline and its memory").
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "narenas:2,thp:always";
}
