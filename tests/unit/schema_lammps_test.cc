// LAMMPS binary restart inference (schema/lammps_restart.h) on files laid out as LAMMPS
// writes them: a header of flagged values, per-processor blocks of atom records, the
// closing string. Real files written by lmp are checked by
// tests/integration/test_lammps_restart.sh.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "schema/infer.h"
#include "schema/lammps_restart.h"
#include "store/container/variable_map.h"

namespace ckptfwd::schema {
namespace {

class RestartFile {
 public:
  void i32(int32_t v) { put(&v, 4); }
  void f64(double v) { put(&v, 8); }
  void str(const char* s) { put(s, strlen(s) + 1); }
  // A header as LAMMPS's: the magic string, flagged ints, doubles and a string.
  void header() {
    str("LammpS RestartT");
    i32(1);  // endian
    i32(3);  // format revision
    for (int flag = 0; flag < 12; ++flag) {
      i32(flag);
      i32(flag * 7);
    }
    i32(15);
    str("atomic");
    i32(30);
    f64(16.796);
    i32(-1);
  }
  // One block of `atoms` records of `len` values (len >= 4): its length, x y z, the rest.
  void block(int32_t flag, int atoms, const std::vector<int>& lens) {
    int32_t values = 0;
    for (int a = 0; a < atoms; ++a) values += lens[a % lens.size()];
    i32(flag);
    i32(values);
    records(atoms, lens);
  }
  // The records alone (the MPI-IO layout: every rank's right after the header).
  void records(int atoms, const std::vector<int>& lens) {
    for (int a = 0; a < atoms; ++a) {
      const int len = lens[a % lens.size()];
      f64(len);
      for (int k = 1; k < len; ++k) f64(0.5 * a + k);
    }
  }
  void close() { str("LammpS RestartT"); }
  std::vector<uint8_t> bytes;

 private:
  void put(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

VariableMap infer_ok(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_TRUE(is_lammps_restart(f.data(), f.size()));
  EXPECT_TRUE(infer_lammps_restart(f.data(), f.size(), m, &why)) << why;
  EXPECT_EQ(check_variable_map(m, f.size()), "");
  return m;
}

std::string refused(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_lammps_restart(f.data(), f.size(), m, &why));
  EXPECT_TRUE(m.empty());
  return why;
}

TEST(LammpsRestart, SingleFileOfSeveralRanksIsOneRecordArray) {
  RestartFile f;
  f.header();
  const size_t first = f.bytes.size();
  f.block(47, 10, {11});
  f.block(47, 7, {11});
  f.block(47, 3, {11});
  f.close();
  VariableMap m = infer_ok(f.bytes);
  EXPECT_EQ(m.source, "lammps");
  ASSERT_EQ(m.vars.size(), 1u);
  const Variable& v = m.vars[0];
  EXPECT_EQ(v.key, "lammps/atoms_F64LE_Array2D");
  EXPECT_EQ(v.shape, (std::vector<uint64_t>{20, 11}));
  ASSERT_EQ(v.extents.size(), 3u);
  EXPECT_EQ(v.extents[0].file_off, first + 8);
  EXPECT_EQ(v.extents[0].shape, (std::vector<uint64_t>{10, 11}));
  EXPECT_EQ(v.extents[1].start, (std::vector<uint64_t>{10, 0}));
  EXPECT_EQ(v.extents[2].start, (std::vector<uint64_t>{17, 0}));
  EXPECT_EQ(mapped_bytes(m), 20u * 11 * 8);
}

TEST(LammpsRestart, PerRankFileAfterItsCountPair) {
  RestartFile f;  // a multi-file restart's file.N: no header, a count pair, its blocks
  f.i32(46);
  f.i32(1);
  f.block(47, 25, {13});
  f.close();
  VariableMap m = infer_ok(f.bytes);
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{25, 13}));
  EXPECT_EQ(m.vars[0].extents[0].file_off, 16u);
}

TEST(LammpsRestart, RecordsOfSeveralLengthsAreOneFlatArray) {
  RestartFile f;  // a molecular style: bond lists make records of different lengths
  f.header();
  f.block(47, 9, {14, 16, 18});
  f.close();
  VariableMap m = infer_ok(f.bytes);
  EXPECT_EQ(m.vars[0].key, "lammps/atoms_F64LE_Array1D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{3 * (14 + 16 + 18)}));
}

TEST(LammpsRestart, FilesThatDoNotFitAreStoredAgnostic) {
  {
    RestartFile f;  // the header file of a multi-file restart: no per-atom data
    f.header();
    f.i32(44);
    f.i32(4);
    f.i32(-1);
    f.close();
    VariableMap m = infer_ok(f.bytes);
    EXPECT_EQ(m.source, "lammps");
    EXPECT_TRUE(m.vars.empty());
    f.bytes.erase(f.bytes.begin(), f.bytes.begin() + 16);  // without the opening string
    EXPECT_NE(refused(f.bytes).find("no run"), std::string::npos);
  }
  {
    RestartFile f;  // truncated: a block promises more values than the file holds
    f.header();
    f.block(47, 10, {11});
    f.bytes.resize(f.bytes.size() - 8);
    f.close();
    refused(f.bytes);
  }
  {
    RestartFile f;  // a record length that is not an integer
    f.header();
    f.block(47, 4, {11});
    double bad = 10.5;
    memcpy(f.bytes.data() + f.bytes.size() - 11 * 8, &bad, 8);
    f.close();
    refused(f.bytes);
  }
  {
    RestartFile f;  // blocks with two different flags do not make one run
    f.header();
    f.block(47, 3, {11});
    f.block(48, 3, {11});
    f.close();
    VariableMap m;
    std::string why;
    if (infer_lammps_restart(f.bytes.data(), f.bytes.size(), m, &why)) {
      EXPECT_EQ(m.vars[0].extents.size(), 1u);  // only the second block, as a run of one
    }
  }
  RestartFile none;  // opens like a restart, but nothing follows its sections
  none.header();
  EXPECT_TRUE(is_lammps_restart(none.bytes.data(), none.bytes.size()));
  EXPECT_NE(refused(none.bytes).find("no records run"), std::string::npos);
  EXPECT_FALSE(is_lammps_restart(none.bytes.data() + 16, none.bytes.size() - 16));
}

// write_restart FILE.mpiio: the header sections (the ranks' counts of values, the flag -1),
// then every rank's records up to the end of the file, no blocks, no closing string.
TEST(LammpsRestart, MpiioLayoutIsTheRecordsAfterTheHeader) {
  RestartFile f;
  f.header();
  const uint64_t header = f.bytes.size();
  f.records(40, {11});
  VariableMap m = infer_ok(f.bytes);
  ASSERT_EQ(m.vars.size(), 1u);
  EXPECT_EQ(m.vars[0].key, "lammps/atoms_F64LE_Array2D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{40, 11}));
  ASSERT_EQ(m.vars[0].extents.size(), 1u);
  EXPECT_EQ(m.vars[0].extents[0].file_off, header);
  EXPECT_NE(m.detail.find("MPI-IO layout"), std::string::npos) << m.detail;
  RestartFile bonds;  // records of several lengths
  bonds.header();
  bonds.records(30, {14, 16, 18});
  EXPECT_EQ(infer_ok(bonds.bytes).vars[0].key, "lammps/atoms_F64LE_Array1D");
  f.bytes.resize(f.bytes.size() - 8);  // cut inside the last record
  EXPECT_NE(refused(f.bytes).find("no records run"), std::string::npos);
}

// A hostile file of many tiny blocks that almost chain: the search stays bounded.
TEST(LammpsRestart, HostileRunsCostBoundedWork) {
  RestartFile f;
  for (int i = 0; i < 200000; ++i) {
    f.i32(47);
    f.i32(4);
    f.f64(4);
    f.f64(1);
    f.f64(2);
    f.f64(3);
  }
  f.i32(0);  // breaks the run just before the end
  f.close();
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_lammps_restart(f.bytes.data(), f.bytes.size(), m, &why));
}

TEST(LammpsRestart, InferrerUsesItWithoutASchema) {
  RestartFile f;
  f.header();
  f.block(47, 50, {11});
  f.close();
  Inferrer inf;
  std::string note;
  VariableMap m = inf.infer("/run/restart.1000", "/run/restart.1000", f.bytes.data(),
                            f.bytes.size(), {}, &note);
  EXPECT_EQ(m.source, "lammps") << m.detail;
  EXPECT_EQ(note, "");
}

}  // namespace
}  // namespace ckptfwd::schema
