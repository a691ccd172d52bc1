// A store holding shared files written from two nodes, built by hand (no library, no
// forwarder): the layout the multi-node commit produces (manifest.h, "Overlays").
//   /d/f: a base from node 0 (12000 bytes, c-base.ckc), then an overlay from node 1
//         (c-n1.ckc: grows it to 30000), then one from node 0 (c-n0.ckc: overlaps node 1's
//         second extent, which it therefore wins);
//   /d/g: overlays only (no base anywhere).
// want_f / want_g are the merged bytes restore must give back.
#pragma once
#include <string>
#include <vector>

#include "core_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::test {

struct LayeredStore {
  OverlayFile ov1, ov2, g1, g2;
  std::vector<uint8_t> base_f, want_f, want_g;

  static CatalogEntry file(const std::string& path, uint32_t index, uint64_t size) {
    CatalogEntry e = catalog_entry(path, index, size);
    e.mode = 0640;
    e.mtime_ns = 1700000000000000000LL + index;
    return e;
  }

  // Files live under dir_prefix ("/d" by default, e.g. a forwarder test's data dir).
  bool build(const std::string& store, std::string* err, const std::string& dir_prefix = "/d") {
    std::string f = dir_prefix + "/f", g = dir_prefix + "/g";
    if (!manifest::ensure_store(store, err)) return false;
    std::vector<TestFile> base = {{f, smooth_bytes(12000, 1), {}, 0}};
    base_f = base[0].content;
    if (!build_container(store + "/c-base.ckc", base, 1, 1000, "zstd", err)) return false;
    ov1 = {f, random_bytes(30000, 2), {{2000, 3000}, {20000, 6000}}};
    g1 = {g, random_bytes(5000, 3), {{1000, 1000}, {4000, 1000}}};
    if (!build_overlay_container(store + "/c-n1.ckc", {g1, ov1}, 1000, "zstd", err)) return false;
    ov2 = {f, random_bytes(24000, 4), {{0, 100}, {23000, 1000}}};
    g2 = {g, random_bytes(3000, 5), {{0, 1500}}};
    if (!build_overlay_container(store + "/c-n0.ckc", {ov2, g2}, 700, "raw", err)) return false;
    if (!manifest::append_commit(store, "c-base.ckc", {file(f, 0, 12000)}, err)) return false;
    if (!manifest::append_overlay(store, "c-n1.ckc", {file(g, 0, 5000), file(f, 1, 30000)}, err))
      return false;
    if (!manifest::append_overlay(store, "c-n0.ckc", {file(f, 0, 24000), file(g, 1, 3000)}, err))
      return false;
    want_f = base_f;
    apply_overlay_bytes(want_f, ov1);
    apply_overlay_bytes(want_f, ov2);
    want_g.clear();
    apply_overlay_bytes(want_g, g1);
    apply_overlay_bytes(want_g, g2);
    return true;
  }
};

}  // namespace ckptfwd::test
