// GROMACS checkpoint inference (schema/gromacs_checkpoint.h) on files laid out as
// `gmx mdrun` writes them (XDR header, flagged state entries, the rest), and on the fuzz
// seed, a checkpoint written by gmx mdrun 2022. Checkpoints of a run under the library are
// checked by tests/integration/test_gromacs_checkpoint.sh.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "schema/gromacs_checkpoint.h"
#include "schema/infer.h"
#include "store/container/variable_map.h"

namespace ckptfwd::schema {
namespace {

constexpr int kBitBox = 1, kBitThermInt = 6, kBitX = 7, kBitV = 8;

struct Checkpoint {
  int32_t version = 22;
  int32_t atoms = 100;
  uint32_t flags = 1u << kBitBox | 1u << kBitThermInt | 1u << kBitX | 1u << kBitV;
  int flags_after = 8;    // eks, enh, dfh, ED, swap, AWH, pull, modular in version 22
  int32_t real_type = 1;  // float; 2: double
  std::vector<uint8_t> bytes;

  void u32(uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(uint8_t(v >> s));
  }
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
    while (bytes.size() % 4) bytes.push_back(0);
  }
  // [n][type][n values]; reals count up from `base` so each entry's bytes differ.
  void entry(int32_t n, int32_t type, uint32_t base) {
    u32(uint32_t(n));
    u32(uint32_t(type));
    for (int32_t i = 0; i < n; ++i) {
      if (type == 2) u32(0x40000000);
      u32(base + uint32_t(i));
    }
  }
  std::vector<uint8_t> build() {
    bytes.clear();
    u32(171817);
    for (const char* s : {"2022.5", "", "", "", "/usr/bin/gmx", "Tue Dec  1 08:04:17 2026\n"})
      str(s);
    u32(uint32_t(version));
    u32(real_type == 2);
    str("node17");
    u32(uint32_t(atoms));
    for (int i = 0; i < 6; ++i) u32(i == 0);  // ngtc 1, then chains, lambdas, integrator, part
    u32(0);
    u32(100);         // step (i64)
    u32(0x3fc99999);  // time (f64)
    u32(0x9999999a);
    for (int i = 0; i < 5; ++i) u32(1);  // PP ranks, DD cells, PME ranks
    u32(flags);
    for (int i = 0; i < flags_after; ++i) u32(uint32_t(i * 3));
    for (int bit = 0; bit < 32; ++bit) {
      if (!(flags >> bit & 1)) continue;
      if (bit == kBitX || bit == kBitV || bit == 10)
        entry(3 * atoms, real_type, 0x3e000000u + uint32_t(bit) * 0x10000);
      else if (bit == kBitBox)
        entry(9, real_type, 0x40000000u);
      else
        entry(1, 2, 0x40b18fbcu);
    }
    entry(3, 0, 7);  // kinetic energy and the rest: not parsed
    u32(171819);
    return bytes;
  }
};

VariableMap infer_ok(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_TRUE(is_gromacs_checkpoint(f.data(), f.size()));
  EXPECT_TRUE(infer_gromacs_checkpoint(f.data(), f.size(), m, &why)) << why;
  EXPECT_EQ(check_variable_map(m, f.size()), "");
  return m;
}

std::string refused(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_gromacs_checkpoint(f.data(), f.size(), m, &why));
  EXPECT_TRUE(m.empty());
  EXPECT_NE(why, "");
  return why;
}

uint32_t be32(const std::vector<uint8_t>& f, uint64_t at) {
  return uint32_t{f[at]} << 24 | uint32_t{f[at + 1]} << 16 | uint32_t{f[at + 2]} << 8 | f[at + 3];
}

TEST(GromacsCheckpoint, PositionsAndVelocitiesAreAtomsByThree) {
  Checkpoint c;
  const std::vector<uint8_t> f = c.build();
  VariableMap m = infer_ok(f);
  EXPECT_EQ(m.source, "gromacs");
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].key, "gromacs/x_F32BE_Array2D");
  EXPECT_EQ(m.vars[1].key, "gromacs/v_F32BE_Array2D");
  for (const Variable& v : m.vars) {
    EXPECT_EQ(v.shape, (std::vector<uint64_t>{100, 3}));
    ASSERT_EQ(v.extents.size(), 1u);
    EXPECT_EQ(v.extents[0].len, 300u * 4);
    // The extent is the values, after [n][type]: n is read right before them.
    EXPECT_EQ(be32(f, v.extents[0].file_off - 8), 300u);
  }
  EXPECT_EQ(be32(f, m.vars[0].extents[0].file_off), 0x3e000000u + kBitX * 0x10000);
  EXPECT_EQ(be32(f, m.vars[1].extents[0].file_off), 0x3e000000u + kBitV * 0x10000);
}

TEST(GromacsCheckpoint, OtherVersionsWithOtherFlagCountsAreFound) {
  for (int after : {5, 6, 8, 11, 16}) {
    Checkpoint c;
    c.flags_after = after;
    c.version = 17 + after;
    VariableMap m = infer_ok(c.build());
    EXPECT_EQ(m.vars.size(), 2u) << after;
  }
  Checkpoint c;
  c.flags_after = 17;
  EXPECT_NE(refused(c.build()).find("no run of state entries"), std::string::npos);
}

TEST(GromacsCheckpoint, DoublePrecisionIsF64BE) {
  Checkpoint c;
  c.real_type = 2;
  VariableMap m = infer_ok(c.build());
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].dtype, "F64BE");
  EXPECT_EQ(m.vars[0].extents[0].len, 300u * 8);
}

TEST(GromacsCheckpoint, PositionsOnlyAndTheMinimizersDirection) {
  Checkpoint c;
  c.flags = 1u << kBitBox | 1u << kBitX | 1u << 10;
  VariableMap m = infer_ok(c.build());
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].name, "gromacs/x");
  EXPECT_EQ(m.vars[1].name, "gromacs/CGp");
}

TEST(GromacsCheckpoint, FilesThatDoNotFitAreStoredAgnostic) {
  Checkpoint c;
  std::vector<uint8_t> f = c.build();
  EXPECT_NE(refused({f.begin(), f.begin() + 40}).find("cut short"), std::string::npos);
  // Cut inside the positions: no per-atom vector is whole.
  EXPECT_NE(refused({f.begin(), f.end() - 1800}).find("no run of state entries"),
            std::string::npos);
  Checkpoint old;
  old.version = 16;
  EXPECT_NE(refused(old.build()).find("version 16"), std::string::npos);
  Checkpoint none;
  none.atoms = 0;
  EXPECT_NE(refused(none.build()).find("no atoms"), std::string::npos);
  Checkpoint box_only;
  box_only.flags = 1u << kBitBox;
  EXPECT_NE(refused(box_only.build()).find("name no positions"), std::string::npos);
  // Positions that are not 3 x atoms, or not reals.
  Checkpoint wrong;
  std::vector<uint8_t> g = wrong.build();
  VariableMap m = infer_ok(g);
  const uint64_t n_at = m.vars[0].extents[0].file_off - 8;
  g[n_at + 3] ^= 1;
  refused(g);
  g = wrong.build();
  g[n_at + 7] = 0;  // type int
  refused(g);
  // A string longer than GROMACS's 1024 bytes.
  f[7] = 0x10;
  f[6] = 0x04;
  EXPECT_NE(refused(f).find("1024"), std::string::npos);
  std::vector<uint8_t> not_cpt(f);
  not_cpt[3] ^= 1;
  EXPECT_FALSE(is_gromacs_checkpoint(not_cpt.data(), not_cpt.size()));
  EXPECT_FALSE(is_gromacs_checkpoint(not_cpt.data(), 3));
}

TEST(GromacsCheckpoint, HostileCountsNeverReadPastTheEnd) {
  Checkpoint c;
  std::vector<uint8_t> f = c.build();
  VariableMap m = infer_ok(f);
  const uint64_t n_at = m.vars[0].extents[0].file_off - 8;
  for (uint32_t n : {0x7fffffffu, 0x80000000u, 0xffffffffu, 0x55555555u}) {
    std::vector<uint8_t> g(f);
    for (int k = 0; k < 4; ++k) g[n_at + k] = uint8_t(n >> (24 - 8 * k));
    refused(g);
  }
  // Every cut: refused, or (once the positions are whole) a map of the vectors before it.
  const uint64_t x_end = m.vars[0].extents[0].file_off + m.vars[0].extents[0].len;
  for (uint64_t cut = 0; cut < f.size(); cut += 97) {
    const std::vector<uint8_t> g(f.begin(), f.begin() + cut);
    VariableMap c;
    std::string why;
    const bool ok = infer_gromacs_checkpoint(g.data(), g.size(), c, &why);
    EXPECT_EQ(ok, cut >= x_end) << cut << ": " << why;
    if (ok) {
      EXPECT_EQ(check_variable_map(c, g.size()), "") << cut;
    }
  }
}

// gmx mdrun calls fsync on a checkpoint before its last buffer is written: the version
// sealed then ends inside the velocities, and still maps the positions.
TEST(GromacsCheckpoint, ACheckpointStillBeingWrittenMapsTheWholeVectors) {
  Checkpoint c;
  const std::vector<uint8_t> f = c.build();
  const std::vector<uint8_t> g(f.begin(), f.end() - 700);
  VariableMap m = infer_ok(g);
  ASSERT_EQ(m.vars.size(), 1u);
  EXPECT_EQ(m.vars[0].name, "gromacs/x");
  EXPECT_NE(m.detail.find("cut short"), std::string::npos) << m.detail;
  // Cut inside the head of the velocities' entry: the same.
  const uint64_t v_head = m.vars[0].extents[0].file_off + m.vars[0].extents[0].len;
  EXPECT_EQ(infer_ok({f.begin(), f.begin() + v_head + 5}).vars.size(), 1u);
}

TEST(GromacsCheckpoint, AFileWrittenByGmxMdrun) {
  std::ifstream in(std::string(CKPTFWD_SOURCE_DIR) + "/tests/fuzz/seeds/gromacs/water_663.cpt",
                   std::ios::binary);
  ASSERT_TRUE(in) << "the seed checkpoint is missing";
  const std::vector<uint8_t> f{std::istreambuf_iterator<char>(in), {}};
  VariableMap m = infer_ok(f);
  ASSERT_EQ(m.vars.size(), 2u) << m.detail;
  EXPECT_EQ(m.vars[0].key, "gromacs/x_F32BE_Array2D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{663, 3}));
  EXPECT_EQ(m.detail,
            "GROMACS checkpoint version 22, 663 atoms, 2 per-atom vectors of single precision");
}

TEST(GromacsCheckpoint, InferrerUsesItWithoutASchema) {
  Checkpoint c;
  const std::vector<uint8_t> f = c.build();
  Inferrer inf;
  std::string note;
  VariableMap m =
      inf.infer("/run/md_step100.cpt", "/run/md_step100.cpt", f.data(), f.size(), {}, &note);
  EXPECT_EQ(m.source, "gromacs") << m.detail;
  EXPECT_EQ(note, "");
}

}  // namespace
}  // namespace ckptfwd::schema
