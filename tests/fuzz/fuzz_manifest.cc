// libFuzzer target: arbitrary bytes as STORE/MANIFEST. Catalog::load must never crash
// (older-format and chained records, chain checks, container identities, the names taken
// from skipped lines); whatever it accepts must survive a rename/unlink replay; and any
// line that decodes must decode to the same fields after being encoded again with a chain;
// and a load of its first half followed by a replay of the rest (load_appended) must agree
// with a load of the whole, as must a load from a catalog snapshot of the first half
// (store/manifest/catalog_snapshot.h); a snapshot restores to the catalog it was made of,
// and the input's bytes taken as a snapshot are refused or restored, never a crash.
//
// Line checksums stop random mutations early (a mutated line is only ever "corrupt"), so
// each input is loaded twice: as is, and with every line's checksum and chain rewritten
// (resealed) so that mutated records reach the record parser (apply_fields) and the
// catalog replay. In the resealed copy a line keeps its format: one whose last field
// before "\t#" starts with '@' is chained (chain recomputed from the previous record, or
// left wrong when that field is exactly "@x", to reach the chain-break reports); any other
// line gets a checksum only (older format); a line without "\t#" and the last line
// without '\n' are left as they are (torn or foreign).
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_manifest.cc src/store/manifest/catalog.cc \
//     src/store/manifest/catalog_snapshot.cc src/store/manifest/end_mark.cc \
//     src/store/manifest/owner_check.cc src/store/manifest/manifest_record.cc \
//     src/store/manifest/store_homes.cc -lxxhash \
//     -o /tmp/fuzz_manifest
//   mkdir -p /tmp/fuzz_manifest_corpus && /tmp/fuzz_manifest /tmp/fuzz_manifest_corpus \
//     tests/fuzz/seeds/manifest -max_total_time=60
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "store/manifest/catalog_snapshot.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"

namespace {

namespace mr = ckptfwd::manifest_record;

// The input with every sealed line's checksum and chain recomputed (see the top comment).
std::string reseal(const std::string& text) {
  std::string out;
  uint64_t prev = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {  // torn last line: as is
      out.append(text, pos, std::string::npos);
      break;
    }
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t mark = line.rfind("\t#");
    if (mark == std::string::npos) {
      out += line + "\n";
      continue;
    }
    std::string covered = line.substr(0, mark);
    size_t tab = covered.rfind('\t');
    if (tab != std::string::npos && tab + 1 < covered.size() && covered[tab + 1] == '@') {
      std::string body = covered.substr(0, tab);
      bool wrong = covered.compare(tab + 1, std::string::npos, "@x") == 0;
      covered = body + "\t@" + mr::hex64(wrong ? 0 : mr::chain_of(body, prev));
    }
    uint64_t sum = XXH64(covered.data(), covered.size(), 0);
    out += covered + "\t#" + mr::hex64(sum) + "\n";
    prev = sum;
  }
  return out;
}

// Loads bytes as dir/MANIFEST and replays a few namespace changes on what it accepted.
// keep: Catalog::keep_versions (0 keeps no history; 2 reaches retire's history and drop).
void load_and_replay(const std::string& dir, const std::string& bytes, int keep) {
  FILE* f = fopen((dir + "/MANIFEST").c_str(), "wb");
  if (!f) return;
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
  ckptfwd::Catalog c;
  c.keep_versions(keep);
  std::string err;
  c.load(dir, &err);
  (void)c.garbage();
  if (!c.entries().empty()) {
    std::string first = c.entries().begin()->first;
    c.apply_rename(first, first + "/moved");
    c.apply_rename("/", "/x");
    c.apply_unlink(first + "/moved");
  }
  // A copy: apply_drop removes from containers(), and takes its argument by reference.
  std::vector<std::string> containers = c.containers();
  for (const std::string& p : containers) {
    (void)c.identity_of(p);
    c.apply_drop(p);
  }
  (void)c.uncertain().size();
}

void same_or_abort(const ckptfwd::Catalog& part, const ckptfwd::Catalog& whole) {
  if (part.entries().size() != whole.entries().size() || part.containers() != whole.containers())
    abort();
  for (const auto& [p, e] : whole.entries()) {
    auto it = part.entries().find(p);
    if (it == part.entries().end() || it->second.container != e.container ||
        it->second.size != e.size || it->second.mode != e.mode ||
        it->second.overlays.size() != e.overlays.size())
      abort();
  }
}

// The forwarder's catalog cache replays only the records appended since its last read
// (Catalog::load_appended): loading the first part of a MANIFEST and then replaying the
// rest must give what one load of the whole gives, whenever the replay accepts the rest.
// dir/MANIFEST holds text up to the line that ends past its middle: that length, 0 when
// there is no such line or the file could not be written.
size_t write_first_part(const std::string& dir, const std::string& text) {
  size_t cut = text.find('\n', text.size() / 2);
  if (cut == std::string::npos) return 0;
  FILE* f = fopen((dir + "/MANIFEST").c_str(), "wb");
  if (!f) return 0;
  fwrite(text.data(), 1, ++cut, f);
  fclose(f);
  return cut;
}

// The rest of text appended to dir/MANIFEST (the same file grown, as an append makes it).
bool append_rest(const std::string& dir, const std::string& text, size_t cut) {
  FILE* f = fopen((dir + "/MANIFEST").c_str(), "ab");
  if (!f) return false;
  fwrite(text.data() + cut, 1, text.size() - cut, f);
  fclose(f);
  return true;
}

void check_appended_replay(const std::string& dir, const std::string& text) {
  const size_t cut = write_first_part(dir, text);
  ckptfwd::Catalog part, whole;
  std::string err;
  if (!cut || !part.load(dir, &err) || !append_rest(dir, text, cut)) return;
  if (!part.load_appended(dir, &err) || !whole.load(dir, &err)) return;
  same_or_abort(part, whole);
}

// The same with a catalog snapshot of the first half: a forwarder's first load of a store
// (Catalog::load_from_snapshot) must give what a replay of the whole MANIFEST gives.
void check_snapshot(const std::string& dir, const std::string& raw, const std::string& text) {
  ckptfwd::Catalog junk;
  if (junk.restore_snapshot(raw)) (void)junk.snapshot_text();
  const size_t cut = write_first_part(dir, text);
  ckptfwd::Catalog part, whole, fast;
  for (ckptfwd::Catalog* c : {&part, &whole, &fast}) c->keep_versions(2);  // history too
  std::string err;
  if (!cut || !part.load(dir, &err)) return;
  const std::string snap = part.snapshot_text();
  unlink((dir + "/MANIFEST.snap").c_str());
  if (!snap.empty()) {
    ckptfwd::Catalog back;
    if (!back.restore_snapshot(snap) || back.snapshot_text() != snap) abort();
    if (!ckptfwd::catalog_snapshot::write(dir, part, &err)) abort();
  }
  if (!append_rest(dir, text, cut)) return;
  if (!fast.load_from_snapshot(dir, &err) || !whole.load(dir, &err)) return;
  same_or_abort(fast, whole);
  if (fast.garbage() != whole.garbage()) abort();
  if (fast.problems() != whole.problems() || fast.uncertain() != whole.uncertain() ||
      fast.unreadable() != whole.unreadable() || fast.chain_breaks() != whole.chain_breaks())
    abort();
}

}  // namespace

// The fuzzer's scratch store on tmpfs (two MANIFEST writes per input), removed when the
// run ends so that campaigns leave nothing behind in /dev/shm.
struct ScratchStore {
  std::string dir = "/dev/shm/fuzz_manifest." + std::to_string(getpid());
  ScratchStore() { mkdir(dir.c_str(), 0700); }
  ~ScratchStore() {
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(d), e->d_name, 0);
      closedir(d);
    }
    rmdir(dir.c_str());
  }
};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ScratchStore scratch;
  const std::string& dir = scratch.dir;
  std::string text(reinterpret_cast<const char*>(data), size);
  load_and_replay(dir, text, 0);
  std::string sealed = reseal(text);
  load_and_replay(dir, sealed, 2);
  check_appended_replay(dir, sealed);
  check_snapshot(dir, text, sealed);
  // Round trip: the first line, if valid, re-encodes (chained) to the same fields.
  std::string line = sealed.substr(0, sealed.find('\n'));
  mr::DecodedLine d = mr::decode_line(line);
  if (d.status == mr::DecodedLine::Status::kOk && !d.fields.empty()) {
    uint64_t sum = 0;
    std::string again = mr::encode_line(d.fields, d.checksum, &sum);
    again.pop_back();  // '\n'
    mr::DecodedLine e = mr::decode_line(again);
    if (e.status != mr::DecodedLine::Status::kOk || e.fields != d.fields || !e.chained ||
        e.checksum != sum || mr::chain_of(e.body, d.checksum) != e.chain)
      abort();
  }
  return 0;
}
