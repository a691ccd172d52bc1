// read_blocks (var_read.h): the blocks of two files, placed in a global array, read in
// slabs of one row or whole, on one thread or two, give the same array, each byte where
// its placement says, and the same decoded bytes.
#include <gtest/gtest.h>

#include "core_test_util.h"
#include "var_read.h"

namespace ckptfwd::cli {
namespace {

// Two files of a [4][3][5] float64 block each (rows 0-3 and 4-7 of a [8][3][5] array),
// after a 16-byte header; the values are their global element numbers.
std::string write_store(const std::string& path) {
  ContainerWriter w;
  std::string err;
  if (!w.open(path, &err)) return err;
  for (int f = 0; f < 2; ++f) {
    std::vector<uint8_t> content(16 + 60 * 8, 0xee);
    for (int k = 0; k < 60; ++k) {
      const double v = f * 60 + k;
      memcpy(content.data() + 16 + 8 * k, &v, 8);
    }
    // Small chunks: a slab spans several of them.
    const uint32_t s = w.add_stream("agnostic" + std::to_string(f), "bytes", "agnostic");
    for (size_t at = 0; at < content.size(); at += 100)
      if (!w.append_chunk(s,
                          encode_chunk(content.data() + at,
                                       std::min<size_t>(100, content.size() - at), "zstd", 1),
                          &err))
        return err;
    FileEntry fe;
    fe.path = "/ckpt/r" + std::to_string(f);
    fe.rank = f;
    fe.size = content.size();
    fe.hash = content_hash(content.data(), content.size());
    fe.ranges.push_back({0, content.size(), s, 0});
    Variable v;
    v.name = "T";
    v.dtype = "F64LE";
    v.elem_size = 8;
    v.shape = {4, 3, 5};
    v.key = var_key(v.name, v.dtype, 3);
    v.extents.push_back(VarExtent{16, 480, {0, 0, 0}, {4, 3, 5}, false});
    v.global_shape = {8, 3, 5};
    v.global_start = {uint64_t(4 * f), 0, 0};
    fe.vars.vars.push_back(v);
    fe.vars.source = "schema";
    w.add_file(std::move(fe));
  }
  return w.commit(&err) ? "" : err;
}

TEST(VarRead, SlabsAndThreadsGiveTheSameArray) {
  test::TempDir d;
  ASSERT_EQ(write_store(d / "c.ckc"), "");
  for (unsigned threads : {1u, 2u})
    for (uint64_t slab : {uint64_t{1}, uint64_t{120}, kSlabBytes}) {
      ContainerReader r;
      std::string err;
      ASSERT_TRUE(r.open(d / "c.ckc", &err)) << err;
      std::vector<HeldVar> held;
      for (uint32_t f = 0; f < 2; ++f)
        held.push_back({"/ckpt/r" + std::to_string(f), &r, f, int32_t(f),
                        &r.files()[f].vars.vars[0], nullptr});
      Assembly plan;
      ASSERT_EQ(plan_assembly(
                    {{{4, 3, 5}, {8, 3, 5}, {0, 0, 0}}, {{4, 3, 5}, {8, 3, 5}, {4, 0, 0}}}, plan),
                "");
      ASSERT_TRUE(plan.assembled);
      std::vector<double> a(120, -1);
      BlockReads reads;
      ASSERT_TRUE(read_blocks(held, plan, 8, reinterpret_cast<uint8_t*>(a.data()), &reads, &err,
                              threads, slab))
          << err;
      for (int k = 0; k < 120; ++k) ASSERT_EQ(a[k], k) << "threads " << threads << " slab " << slab;
      // The chunks holding the variables: all but the header's first (its bytes 0..99
      // hold 84 of the first block's), i.e. every chunk, once.
      EXPECT_EQ(reads.decoded, 2 * 496u) << "threads " << threads << " slab " << slab;
      EXPECT_FALSE(reads.any_lossy);
    }
}

}  // namespace
}  // namespace ckptfwd::cli
