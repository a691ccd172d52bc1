#include "ls_vars.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "checkpoint_vars.h"
#include "cli.h"
#include "common/json_text.h"
#include "restore_paths.h"
#include "stacked_file.h"
#include "store/container/variable_map.h"
#include "var_values.h"
#include "vars_format.h"

namespace ckptfwd::cli {

// --vars: the live files' variable maps, grouped by key.
int list_vars(const Store& st, bool json, bool long_form) {
  ContainerCache cache(st.dir);
  struct Holder {
    std::string path;
    int rank;
    std::vector<uint64_t> shape, global_shape, global_start;
  };
  struct Key {
    std::string dtype;
    uint64_t bytes = 0;
    std::vector<Holder> holders;
    // Over the container streams that hold the key (its groups' streams): their bytes
    // before and after encoding, and the chains their first chunks name.
    uint64_t stream_raw = 0, stream_stored = 0;
    std::set<std::string> chains;
    // -l: its values in all files, and why some could not be read.
    ValueStats stats;
    std::string unread;
  };
  // -l: the values of variable v in the file h reads, summed into k.
  std::vector<uint8_t> buf;
  auto add_values = [&](Key& k, const HeldVar& h, const Variable& v) {
    const NumericDtype nd = numeric_dtype(v.dtype);
    if (!nd.ok) return;
    for (const VarExtent& x : v.extents) {
      std::string err;
      if (!read_extent(h, x, buf, nullptr, &err)) {
        if (k.unread.empty()) k.unread = err;
        continue;
      }
      for (uint64_t i = 0; i < x.len / nd.info.size; ++i) k.stats.add(nd.value(buf.data(), i));
    }
  };
  std::map<std::string, Key> keys;
  std::set<ContainerReader*> holding;  // containers of the listed maps
  Json files_json = Json::array();
  std::string file_lines;
  int rc = 0;
  // The map of the layer that holds the whole file; with -l also those of files several
  // nodes wrote, inferred on their stacked layers.
  FileMaps maps(st, cache, "ls", long_form);
  for (const auto& [path, e] : st.catalog.entries()) {
    VariableMap none;
    FileMap f;
    if (!maps.get(path, f)) {
      rc = 1;
      continue;
    }
    if (!f.map)
      none.detail = e.overlays.empty()
                        ? "no map"
                        : "written from several nodes (overlays have no stored map; ls --vars "
                          "-l, dump and export infer it)";
    const VariableMap* m = f.map ? f.map : &none;
    const int rank = f.rank;
    if (f.reader) holding.insert(f.reader);
    for (const Variable& v : m->vars) {
      Key& k = keys[v.key];
      k.dtype = v.dtype;
      for (const VarExtent& x : v.extents) k.bytes += x.len;
      k.holders.push_back({path, rank, v.shape, v.global_shape, v.global_start});
      if (long_form) add_values(k, HeldVar{path, f.reader, f.index, rank, &v, f.stacked}, v);
    }
    uint64_t mapped = mapped_bytes(*m), size = e.size;
    uint64_t residual = mapped <= size ? size - mapped : 0;
    if (json) {
      files_json.push_back({{"path", path},
                            {"rank", rank},
                            {"size", size},
                            {"source", m->source},
                            {"detail", m->detail},
                            {"mapped_bytes", mapped},
                            {"residual_bytes", residual}});
    } else {
      char buf[160];
      snprintf(buf, sizeof(buf), "  %-7s %5d %12s %12s  ",
               m->source.empty() ? "-" : m->source.c_str(), rank, human_bytes(mapped).c_str(),
               human_bytes(residual).c_str());
      file_lines += buf + printable(path) +
                    (m->source.empty() ? "  (agnostic: " + printable(m->detail) + ")" : "") + "\n";
    }
  }
  // A stream "KEY" or "KEY@g<k>" (merge group k) holds that key's bytes; streams of
  // containers no longer live count too when they hold live files of the key.
  for (ContainerReader* r : holding) {
    for (size_t s = 0; s < r->streams().size(); ++s) {
      const StreamInfo& si = r->streams()[s];
      auto it = keys.find(ungrouped_key(si.key));
      if (it == keys.end() || si.chunks.empty()) continue;
      it->second.stream_raw += si.raw_size;
      for (const ChunkInfo& ch : si.chunks) it->second.stream_stored += ch.comp_size;
      it->second.chains.insert(r->chunk_chain(s, 0));
    }
  }
  auto chains_of = [](const Key& k) {
    std::string out;
    for (const std::string& c : k.chains) out += (out.empty() ? "" : ", ") + c;
    return out.empty() ? std::string("-") : out;
  };
  auto ratio_of = [](const Key& k) {
    char b[32];
    if (!k.stream_stored) return std::string("-");
    snprintf(b, sizeof b, "%.2f", static_cast<double>(k.stream_raw) / k.stream_stored);
    return std::string(b);
  };
  if (json) {
    Json out_keys = Json::array();
    for (const auto& [key, k] : keys) {
      Json shapes = Json::array();
      for (const Holder& h : k.holders)
        shapes.push_back({{"path", h.path},
                          {"rank", h.rank},
                          {"shape", h.shape},
                          {"global_shape", h.global_shape},
                          {"global_start", h.global_start}});
      out_keys.push_back({{"key", key},
                          {"dtype", k.dtype},
                          {"files", k.holders.size()},
                          {"bytes", k.bytes},
                          {"chain", chains_of(k)},
                          {"stream_bytes", k.stream_raw},
                          {"stored_bytes", k.stream_stored},
                          {"shapes", std::move(shapes)}});
      if (long_form) {
        Json& o = out_keys.back();
        const bool any = k.stats.count > k.stats.nans;
        o["count"] = k.stats.count;
        o["nans"] = k.stats.nans;
        o["min"] = any ? Json(k.stats.min) : Json(nullptr);
        o["max"] = any ? Json(k.stats.max) : Json(nullptr);
        o["unread"] = k.unread.empty() ? Json(nullptr) : Json(k.unread);
      }
    }
    Json doc = {{"keys", std::move(out_keys)}, {"files", std::move(files_json)}};
    printf("%s\n", json_text(doc).c_str());
    return rc;
  }
  size_t w = 3;
  for (const auto& [key, k] : keys) w = std::max(w, printable(key).size());
  size_t cw = 5;
  for (const auto& [key, k] : keys) cw = std::max(cw, chains_of(k).size());
  // -l: "min / max" of the numbers, "-" for a key with none (not numbers, all NaN).
  auto range_of = [](const Key& k) {
    if (k.stats.count == k.stats.nans) return std::string("-");
    char b[80];
    snprintf(b, sizeof b, "%.6g / %.6g", k.stats.min, k.stats.max);
    return std::string(b);
  };
  size_t rw = 9;
  for (const auto& [key, k] : keys) rw = std::max(rw, range_of(k).size());
  printf("%-*s  %-7s  %5s  %12s  %-*s  %6s  ", static_cast<int>(w), "KEY", "DTYPE", "FILES",
         "BYTES", static_cast<int>(cw), "CHAIN", "RATIO");
  if (long_form) printf("%-*s  ", static_cast<int>(rw), "MIN / MAX");
  printf("SHAPE PER RANK\n");
  for (const auto& [key, k] : keys) {
    // One shape for all holders is the common case: say it once.
    bool same = true, global = !k.holders.front().global_shape.empty();
    for (const Holder& h : k.holders) {
      same = same && h.shape == k.holders.front().shape;
      global = global && h.global_shape == k.holders.front().global_shape;
    }
    std::string shapes;
    if (same) {
      shapes = fmt_shape(k.holders.front().shape) + (k.holders.size() > 1 ? " (each)" : "");
      // Blocks of one global array (their placements: ckptfwd export assembles them).
      if (global) shapes += " in " + fmt_shape(k.holders.front().global_shape);
    } else {
      for (size_t i = 0; i < k.holders.size() && i < 8; ++i)
        shapes += (i ? ", r" : "r") + std::to_string(k.holders[i].rank) + ": " +
                  fmt_shape(k.holders[i].shape);
      if (k.holders.size() > 8) shapes += ", ...";
    }
    printf("%-*s  %-7s  %5zu  %12s  %-*s  %6s  ", static_cast<int>(w), printable(key).c_str(),
           k.dtype.c_str(), k.holders.size(), human_bytes(k.bytes).c_str(), static_cast<int>(cw),
           chains_of(k).c_str(), ratio_of(k).c_str());
    if (long_form) printf("%-*s  ", static_cast<int>(rw), range_of(k).c_str());
    printf("%s\n", shapes.c_str());
    if (long_form && !k.unread.empty()) error("ls: " + printable(key) + ": " + k.unread);
  }
  printf("%zu variable keys in %zu files\n", keys.size(), st.catalog.entries().size());
  printf("\n  %-7s %5s %12s %12s  %s\n%s", "SOURCE", "RANK", "IN VARS", "RESIDUAL", "PATH",
         file_lines.c_str());
  return rc;
}

}  // namespace ckptfwd::cli
