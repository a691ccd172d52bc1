// Which paths the preload library captures (CKPTFWD_CAPTURE globs minus ckptfwd's own).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "interpose/setup/capture.h"
#include "interpose/setup/cwd_filter.h"

using ckptfwd::interpose::CaptureSet;
using ckptfwd::interpose::CwdFilter;
using ckptfwd::interpose::has_store_component;
using ckptfwd::interpose::path_hash;

namespace {

TEST(InterposeCapture, EmptySpecCapturesNothing) {
  static CaptureSet c;
  EXPECT_TRUE(c.parse(""));
  EXPECT_TRUE(c.empty());
  EXPECT_FALSE(c.matches("/tmp/x"));
  EXPECT_TRUE(c.parse(":::"));
  EXPECT_TRUE(c.empty());
}

TEST(InterposeCapture, SplitsOnColonAndSkipsEmptyFields) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/a/ckpt/*::/b/*.h5:"));
  ASSERT_EQ(c.count(), 2u);
  EXPECT_STREQ(c.pattern(0), "/a/ckpt/*");
  EXPECT_STREQ(c.pattern(1), "/b/*.h5");
  EXPECT_TRUE(c.matches("/a/ckpt/r0.bin"));
  EXPECT_TRUE(c.matches("/b/x.h5"));
  EXPECT_FALSE(c.matches("/b/x.nc"));
  EXPECT_FALSE(c.matches("/a/other/r0.bin"));
}

TEST(InterposeCapture, FnmatchWithoutPathnameFlagLetsStarCrossSlashes) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/run/ckpt/*"));
  EXPECT_TRUE(c.matches("/run/ckpt/step1/r0.bin"));  // flags 0, as documented
  EXPECT_FALSE(c.matches("/run/ckpt"));
}

TEST(InterposeCapture, PatternsAreNormalised) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/a//b/./c/../ckpt_*", nullptr));
  EXPECT_STREQ(c.pattern(0), "/a/b/ckpt_*");
  EXPECT_TRUE(c.matches("/a/b/ckpt_1"));
  ASSERT_TRUE(c.parse("rel/ckpt/*", "/work/dir"));
  EXPECT_STREQ(c.pattern(0), "/work/dir/rel/ckpt/*");
}

TEST(InterposeCapture, RelativePathsNeverMatch) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("*"));
  EXPECT_FALSE(c.matches("relative/file"));
}

TEST(InterposeCapture, ExcludesStoreComponentStageDirsAndStore) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/*"));
  c.set_exclusions("/dev/shm", "/data/store");
  EXPECT_TRUE(c.matches("/data/ckpt/r0"));
  EXPECT_FALSE(c.matches("/data/ckpt/.ckptfwd/c1.ckc"));
  EXPECT_FALSE(c.matches("/data/ckpt/.ckptfwd"));
  EXPECT_TRUE(c.matches("/data/ckpt/.ckptfwdx/f"));  // only the exact component
  EXPECT_FALSE(c.matches("/dev/shm/ckptfwd-0-job-node/v1.data"));
  EXPECT_TRUE(c.matches("/dev/shm/other"));
  EXPECT_FALSE(c.matches("/data/store"));
  EXPECT_FALSE(c.matches("/data/store/MANIFEST"));
  EXPECT_TRUE(c.matches("/data/storex/f"));  // a sibling with the same prefix is not the store
}

TEST(InterposeCapture, StageRootIsNormalised) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/*"));
  c.set_exclusions("/tmp//stage/", nullptr);
  EXPECT_FALSE(c.matches("/tmp/stage/ckptfwd-1-2-3/sock"));
  c.set_exclusions("/", nullptr);
  EXPECT_FALSE(c.matches("/ckptfwd-1-2-3/sock"));
}

TEST(InterposeCapture, StoreComponentHelper) {
  EXPECT_TRUE(has_store_component("/.ckptfwd"));
  EXPECT_TRUE(has_store_component("/a/.ckptfwd/b"));
  EXPECT_FALSE(has_store_component("/a/x.ckptfwd/b"));
  EXPECT_FALSE(has_store_component("/a/.ckptfwd_old"));
}

TEST(InterposeCapture, DirMayHoldFollowsTheGlobsDirectoryPart) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/run/ckpt/*:/scratch/*/out/r*.bin:/top*"));
  EXPECT_TRUE(c.dir_may_hold("/run/ckpt"));
  EXPECT_FALSE(c.dir_may_hold("/run"));
  EXPECT_TRUE(c.dir_may_hold("/scratch/job7/out"));
  EXPECT_FALSE(c.dir_may_hold("/scratch/job7"));
  EXPECT_TRUE(c.dir_may_hold("/"));
  c.set_exclusions(nullptr, nullptr);
  EXPECT_FALSE(c.dir_may_hold("/run/ckpt/.ckptfwd"));
}

TEST(InterposeCapture, DirMayHoldSubdirectoriesAStarSpans) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/run/ckpt/*:/data/r*.bin:/exact/file.h5"));
  // '*' crosses '/', so /run/ckpt/step_0002/f is captured and its directory must list it.
  EXPECT_TRUE(c.dir_may_hold("/run/ckpt/step_0002"));
  EXPECT_TRUE(c.dir_may_hold("/run/ckpt/a/b/c"));
  EXPECT_TRUE(c.dir_may_hold("/data/r1"));    // /data/r1/x.bin matches /data/r*.bin
  EXPECT_FALSE(c.dir_may_hold("/data/sub"));  // /data/sub/... never starts with r
  EXPECT_FALSE(c.dir_may_hold("/exact/file.h5"));
  EXPECT_FALSE(c.dir_may_hold("/run/ckptx"));
  EXPECT_FALSE(c.dir_may_hold("/run/ckpt/step_0002/.ckptfwd"));
}

TEST(InterposeCapture, TooManyPatternsKeepsTheFirstOnes) {
  static CaptureSet c;
  std::string spec;
  for (size_t i = 0; i < CaptureSet::kMaxPatterns + 5; ++i) spec += "/p" + std::to_string(i) + ":";
  EXPECT_FALSE(c.parse(spec.c_str()));
  EXPECT_EQ(c.count(), CaptureSet::kMaxPatterns);
  EXPECT_TRUE(c.matches("/p0"));
  EXPECT_FALSE(c.matches(("/p" + std::to_string(CaptureSet::kMaxPatterns + 1)).c_str()));
}

TEST(InterposeCapture, OverlongPatternIsSkippedNotTruncated) {
  static CaptureSet c;
  std::string longp = "/" + std::string(5000, 'a');
  EXPECT_FALSE(c.parse(("/ok/*:" + longp).c_str()));
  EXPECT_EQ(c.count(), 1u);
  EXPECT_FALSE(c.matches(longp.substr(0, 100).c_str()));
}

TEST(InterposeCapture, PathHashIsStableAndDistinct) {
  EXPECT_EQ(path_hash("/a/b"), path_hash("/a/b"));
  EXPECT_NE(path_hash("/a/b"), path_hash("/a/c"));
  EXPECT_NE(path_hash(""), 0u);
  EXPECT_GE(path_hash("/x"), 1ull << 62);
}

}  // namespace

namespace {

// ROMIO's shared file pointer must stay one real file for every rank of every node.
TEST(InterposeCapture, RomioSharedFilePointerIsNeverCaptured) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/ckpt/*"));
  EXPECT_TRUE(c.matches("/ckpt/shared.dat"));
  EXPECT_FALSE(c.matches("/ckpt/.shared.dat.shfp.1234567"));
  EXPECT_TRUE(c.matches("/ckpt/.hidden_checkpoint"));
  EXPECT_TRUE(c.matches("/ckpt/data.shfp.not_hidden"));
  EXPECT_TRUE(ckptfwd::interpose::is_romio_shared_fp("/a/.f.shfp.9"));
  EXPECT_FALSE(ckptfwd::interpose::is_romio_shared_fp("/a/.shfp/f"));
}

}  // namespace

// ---- the fast reject before any path work (state.cc quick_resolve) ----

using ckptfwd::interpose::normal_abs_length;
using ckptfwd::interpose::normal_rel_length;

TEST(InterposeCaptureFastReject, NormalPathsAreRecognisedAndOthersLeftToNormalize) {
  EXPECT_EQ(normal_abs_length("/"), 1u);
  EXPECT_EQ(normal_abs_length("/a/b.bin"), 8u);
  EXPECT_EQ(normal_abs_length("/a//b"), 0u);
  EXPECT_EQ(normal_abs_length("/a/./b"), 0u);
  EXPECT_EQ(normal_abs_length("/a/../b"), 0u);
  EXPECT_EQ(normal_abs_length("/a/b/"), 0u);
  EXPECT_EQ(normal_abs_length("/a/.."), 0u);
  EXPECT_EQ(normal_abs_length("/a/.hidden/..x"), 14u);  // names that only start with dots
  EXPECT_EQ(normal_abs_length("a/b"), 0u);
  EXPECT_EQ(normal_rel_length("a/b"), 3u);
  EXPECT_EQ(normal_rel_length("b"), 1u);
  EXPECT_EQ(normal_rel_length("./b"), 0u);
  EXPECT_EQ(normal_rel_length("../b"), 0u);
  EXPECT_EQ(normal_rel_length("a//b"), 0u);
  EXPECT_EQ(normal_rel_length("a/"), 0u);
  EXPECT_EQ(normal_rel_length(""), 0u);
  EXPECT_EQ(normal_rel_length("/a"), 0u);
}

// The reference: split at slashes, every component non-empty and neither "." nor "..".
size_t reference_plain_length(const std::string& p) {
  if (p.empty()) return 0;
  size_t start = 0;
  for (;;) {
    size_t e = p.find('/', start);
    std::string c = p.substr(start, e == std::string::npos ? std::string::npos : e - start);
    if (c.empty() || c == "." || c == "..") return 0;
    if (e == std::string::npos) return p.size();
    start = e + 1;
  }
}

// Paths of every shape the fast reject tells apart (slashes and dots next to each other,
// names starting with dots, a slash at the end, lengths across 16-byte blocks), at every
// alignment, and ending on the last byte of a page followed by one that cannot be read:
// normal_*_length must give the reference's answer and never read past the terminator's
// page (a word- or block-wise scan of the path may read within it, never beyond).
TEST(InterposeCaptureFastReject, EveryPathShapeAtEveryAlignmentAgreesWithTheReference) {
  std::vector<std::string> paths = {"",    "a",    ".",    "..",    "...",    ".a",
                                    "a.",  "a/b",  "a//b", "a/./b", "a/../b", "a/b/",
                                    "a/.", "a/..", "a/.b", "a/b.",  "/",      "//"};
  const char alphabet[] = {'a', '/', '.'};
  for (int len = 1, shapes = 3; len <= 7; ++len, shapes *= 3)  // all over {a, /, .} to 7 bytes
    for (int code = 0; code < shapes; ++code) {
      std::string p;
      for (int i = 0, c = code; i < len; ++i, c /= 3) p += alphabet[c % 3];
      paths.push_back(p);
    }
  for (int len : {15, 16, 17, 31, 32, 33, 47, 48, 49, 100, 255}) {
    std::string names(static_cast<size_t>(len), 'n');
    for (size_t i = 3; i < names.size(); i += 7) names[i] = '/';
    paths.push_back(names);
    for (size_t i = 4; i < names.size(); i += 11) {  // one bad spot at a time, anywhere
      for (const char* bad : {"/", "."}) {
        std::string q = names;
        q[i] = bad[0];
        paths.push_back(q);
      }
    }
    paths.push_back(names + "/");
  }
  const long page = sysconf(_SC_PAGESIZE);
  char* mem = static_cast<char*>(mmap(nullptr, static_cast<size_t>(2 * page),
                                      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem + page, static_cast<size_t>(page), PROT_NONE), 0);
  char* page_end = mem + page;
  for (const std::string& p : paths) {
    const size_t want_rel = p[0] == '/' ? 0 : reference_plain_length(p);
    const size_t want_abs =
        p[0] == '/' ? (p == "/" ? 1 : (reference_plain_length(p.substr(1)) ? p.size() : 0)) : 0;
    for (int shift = 0; shift < 16; ++shift) {
      char* at = mem + 64 + shift;
      memcpy(at, p.c_str(), p.size() + 1);
      EXPECT_EQ(normal_rel_length(at), want_rel) << "'" << p << "' at +" << shift;
      EXPECT_EQ(normal_abs_length(at), want_abs) << "'" << p << "' at +" << shift;
    }
    char* last = page_end - (p.size() + 1);  // the terminator is the page's last byte
    memcpy(last, p.c_str(), p.size() + 1);
    EXPECT_EQ(normal_rel_length(last), want_rel) << "'" << p << "' at the page's end";
    EXPECT_EQ(normal_abs_length(last), want_abs) << "'" << p << "' at the page's end";
  }
  munmap(mem, static_cast<size_t>(2 * page));
}

TEST(InterposeCaptureFastReject, PrefixRejectsOnlyWhatNoGlobCanMatch) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/scratch/run/ckpt/step_*/r*.bin:/data/[ab]x/*.h5:/lit/file.dat"));
  auto may = [](const char* p) { return c.may_match(p, strlen(p)); };
  EXPECT_FALSE(may("/home/u/notes.txt"));
  EXPECT_FALSE(may("/scratch/run/ckpt/other/r0.bin"));  // prefix is ".../step_"
  EXPECT_TRUE(may("/scratch/run/ckpt/step_1/r0.bin"));
  EXPECT_TRUE(may("/scratch/run/ckpt/step_1/notes.txt"));  // necessary, not sufficient
  EXPECT_TRUE(may("/data/ax/f.h5"));
  EXPECT_TRUE(may("/data/zz"));  // the bracket ends the literal prefix
  EXPECT_FALSE(may("/dat"));
  EXPECT_TRUE(may("/lit/file.dat"));
  EXPECT_FALSE(may("/lit/file.da"));
}

TEST(InterposeCaptureFastReject, SuffixRejectsTailsNoGlobCanEndWith) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/ck/step_*/r*.bin:/data/*.h5"));
  auto may = [](const char* t) { return c.may_end_with(t, strlen(t)); };
  EXPECT_TRUE(may("r0.bin"));
  EXPECT_TRUE(may("x/y.h5"));
  EXPECT_FALSE(may("notes.txt"));
  EXPECT_TRUE(may("n"));  // shorter than a literal suffix: the directory may end it
  static CaptureSet star;
  ASSERT_TRUE(star.parse("/ck/*"));
  EXPECT_TRUE(star.may_end_with("anything", 8));  // a final '*' takes any end
}

// The fast checks are necessary conditions of matches(): over many paths, whatever
// matches() accepts the fast checks let through.
TEST(InterposeCaptureFastReject, NeverRejectsAPathThatMatches) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/ck/step_*/r?.bin:/d/[xy]*/*.h5:/e/\\*lit:/f/*"));
  const char* parts[] = {"ck", "step_1", "r1.bin", "d",     "x1", "a.h5", "e",  "*lit",
                         "f",  "g",      "step_",  "r.bin", "y",  ".h5",  "lit"};
  unsigned seed = 12345;
  for (int i = 0; i < 20000; ++i) {
    std::string p;
    int depth = 1 + static_cast<int>((seed = seed * 1103515245 + 12345) >> 16) % 4;
    for (int k = 0; k < depth; ++k) {
      seed = seed * 1103515245 + 12345;
      p += "/";
      p += parts[(seed >> 16) % (sizeof(parts) / sizeof(parts[0]))];
    }
    if (!c.matches(p.c_str())) continue;
    EXPECT_TRUE(c.may_match(p.c_str(), p.size())) << p;
    size_t slash = p.rfind('/');
    std::string tail = p.substr(slash + 1);
    EXPECT_TRUE(c.may_end_with(tail.c_str(), tail.size())) << p;
    std::string tail2 = p.substr(1);
    EXPECT_TRUE(c.may_end_with(tail2.c_str(), tail2.size())) << p;
    // Every directory above the path (the root too) lets its relative paths through.
    // Every directory above the path (the root too) lets its relative paths through, and
    // the path relative to it passes the test against the globs' prefixes beyond it.
    for (size_t cut = p.find('/', 1); cut != std::string::npos; cut = p.find('/', cut + 1)) {
      EXPECT_TRUE(c.may_match_below(p.c_str(), cut)) << p << " below " << p.substr(0, cut);
      const std::string rel = p.substr(cut + 1);
      EXPECT_TRUE(c.may_match_relative(rel.c_str(), rel.size(), cut, c.below_mask(p.c_str(), cut)))
          << rel << " in " << p.substr(0, cut);
    }
    EXPECT_TRUE(c.may_match_below("/", 1)) << p;
    EXPECT_TRUE(c.may_match_relative(p.c_str() + 1, p.size() - 1, 1, c.below_mask("/", 1))) << p;
  }
}

TEST(InterposeCaptureFastReject, WorkingDirectoriesNoGlobReachesAreRejected) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/scratch/run/ckpt/step_*/r*.bin:/data/[ab]x/*.h5"));
  auto below = [](const char* d) { return c.may_match_below(d, strlen(d)); };
  EXPECT_FALSE(below("/home/u"));
  EXPECT_FALSE(below("/scratch/runs"));  // not a directory of "/scratch/run/..."
  EXPECT_FALSE(below("/scratch/run/ckpt2"));
  EXPECT_FALSE(below("/dat"));
  EXPECT_TRUE(below("/"));
  EXPECT_TRUE(below("/scratch"));
  EXPECT_TRUE(below("/scratch/run/ckpt"));  // step_1/r0.bin
  EXPECT_TRUE(below("/scratch/run/ckpt/step_1"));
  EXPECT_TRUE(below("/scratch/run/ckpt/step_1/deeper"));  // '*' crosses slashes
  EXPECT_TRUE(below("/data"));
  EXPECT_TRUE(below("/data/zz"));  // the bracket ends the literal prefix
}

// A relative path is tested against what the globs' literal prefixes need beyond the
// working directory: the same answer as may_match of the joined path, for every directory
// and relative path of a set that has both answers.
TEST(InterposeCaptureFastReject, RelativePathsAreTestedWithoutJoiningThem) {
  static CaptureSet c;
  ASSERT_TRUE(c.parse("/scratch/run/ckpt/step_*/r*.bin:/data/[ab]x/*.h5:/lit/file.dat"));
  const char* dirs[] = {"/",
                        "/scratch",
                        "/scratch/run",
                        "/scratch/run/ckpt",
                        "/scratch/run/ckpt/step_1",
                        "/data",
                        "/data/ax",
                        "/lit",
                        "/home/u"};
  const char* rels[] = {"notes.txt",
                        "ckpt",
                        "ckpt/step_",
                        "ckpt/step_2/r0.bin",
                        "step_",
                        "step_9/x",
                        "r0.bin",
                        "run/ckpt/step_1/r.bin",
                        "file.dat",
                        "file.da",
                        "lit/file.dat",
                        "ax/f.h5",
                        "data/zz",
                        "scratch/run/ckpt/step_",
                        "scratch/run/ckpt/ste"};
  int rejected = 0, passed = 0;
  for (const char* d : dirs) {
    const size_t dl = strlen(d);
    const unsigned long long mask = c.below_mask(d, dl);
    EXPECT_EQ(mask != 0, c.may_match_below(d, dl)) << d;
    for (const char* r : rels) {
      const std::string joined = dl == 1 ? std::string("/") + r : std::string(d) + "/" + r;
      const bool want = c.may_match(joined.c_str(), joined.size());
      EXPECT_EQ(c.may_match_relative(r, strlen(r), dl, mask), want) << r << " in " << d;
      ++(want ? passed : rejected);
    }
  }
  EXPECT_GT(rejected, 20);
  EXPECT_GT(passed, 10);
}

TEST(InterposeCwdFilter, GivesWhatWasPutForItsGenerationOnly) {
  static CwdFilter f;
  unsigned long long mask = 0;
  size_t len = 0;
  EXPECT_FALSE(f.get(2, mask, len));  // nothing put yet
  f.put(2, 0x5, 11);
  ASSERT_TRUE(f.get(2, mask, len));
  EXPECT_EQ(mask, 0x5u);
  EXPECT_EQ(len, 11u);
  EXPECT_FALSE(f.get(4, mask, len));  // the directory changed since
  f.put(4, 0, 1);
  EXPECT_FALSE(f.get(2, mask, len));
  ASSERT_TRUE(f.get(4, mask, len));
  EXPECT_EQ(mask, 0u);
  f.reset_after_fork();
  EXPECT_FALSE(f.get(4, mask, len));
}
