// ckptfwd dump STORE VAR: the values of one variable in the files of a checkpoint, read
// from the chunks that hold them (ContainerReader::read_span), like bpls -d.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "array_slice.h"
#include "checkpoint_vars.h"
#include "cli.h"
#include "common/json_text.h"
#include "restore_paths.h"
#include "store.h"
#include "store_checkpoints.h"
#include "var_assembly.h"
#include "var_values.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd dump STORE VAR [--latest | --step STEP] [--rank R] [--slice SLICE]\n"
    "                    [--stats [--json] | --csv]\n"
    "\n"
    "Prints the values of the variable VAR in the files of one checkpoint, as structure\n"
    "inference mapped them when the files were committed (ckptfwd ls --vars lists them).\n"
    "VAR is a key (\"temperature_F64LE_Array3D\") or a name (\"temperature\", \"/fields/T\").\n"
    "Only the chunks that hold VAR are read and decoded, each checked against its checksum.\n"
    "\n"
    "  --latest      the latest complete checkpoint (ckptfwd ls --steps), the default\n"
    "  --step STEP   checkpoint STEP as ckptfwd ls --steps names it (\"40\" names 0040)\n"
    "  --rank R      only the file the writer of rank R wrote\n"
    "  --slice SLICE only the elements numpy's a[SLICE] picks of each file's variable a,\n"
    "                e.g. '0:2,:,-1' or '::2,3' (START:STOP[:STEP] or an index per\n"
    "                dimension, the rest whole); indices printed are still a's\n"
    "  --stats       per file: elements, NaNs, min, max and mean of the others; then all\n"
    "                files together (\"all\")\n"
    "  --json        with --stats: one JSON object {\"var\", \"step\", \"files\": [{\"path\",\n"
    "                \"rank\", \"key\", \"dtype\", \"shape\", \"count\", \"nans\", \"min\",\n"
    "                \"max\", \"mean\"}], \"all\": {\"count\", \"nans\", \"min\", \"max\",\n"
    "                \"mean\"}, \"decoded_bytes\", \"file_bytes\"}\n"
    "  --csv         one line per element: path,rank,i0,i1,...,value (indices in the\n"
    "                file's own variable)\n"
    "\n"
    "Without --stats or --csv: per file a line '# PATH rank R KEY SHAPE', then the values\n"
    "one row of the last dimension per line, led by the row's first index: (0,3,0) v v v.\n"
    "Values read back exactly: integers in full, float32 with 9 digits, float64 with 17.\n"
    "Indices are the file's own: a rank's piece of a global array starts at 0 in its file.\n"
    "At the end, on stderr: the files read, and the bytes decoded against the bytes of the\n"
    "checkpoint's files.\n"
    "\n"
    "Exit status: 0 every file holding VAR was read, 1 a file could not be read (a chunk\n"
    "that fails its checksum, data compressed by an HDF5 filter) or none holds VAR, 2 usage\n"
    "error.\n";

enum class Mode { kValues, kStats, kCsv };

struct Options {
  std::string store, var, step;
  bool latest = true;
  bool has_rank = false;
  int rank = -1;
  Mode mode = Mode::kValues;
  bool json = false;
  bool sliced = false;
  ArraySlice slice;
};

bool parse(const Args& args, Options& o, int* rc) {
  std::vector<std::string> pos;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--latest") {
      o.latest = true;
      o.step.clear();
    } else if (a == "--step" || a.rfind("--step=", 0) == 0) {
      if (a == "--step" && i + 1 >= args.size())
        return *rc = usage_error("dump", "--step needs a step"), false;
      o.step = a == "--step" ? args[++i] : a.substr(7);
      o.latest = false;
    } else if (a == "--rank" || a.rfind("--rank=", 0) == 0) {
      if (a == "--rank" && i + 1 >= args.size())
        return *rc = usage_error("dump", "--rank needs a rank"), false;
      const std::string r = a == "--rank" ? args[++i] : a.substr(7);
      char* end = nullptr;
      const long v = strtol(r.c_str(), &end, 10);
      if (r.empty() || *end || v < 0 || v > INT32_MAX)
        return *rc = usage_error("dump", "--rank takes a rank number, not '" + r + "'"), false;
      o.has_rank = true;
      o.rank = static_cast<int>(v);
    } else if (a == "--slice" || a.rfind("--slice=", 0) == 0) {
      if (a == "--slice" && i + 1 >= args.size())
        return *rc = usage_error("dump", "--slice needs a slice"), false;
      const std::string v = a == "--slice" ? args[++i] : a.substr(8);
      const std::string why = parse_slice(v, o.slice);
      if (!why.empty()) return *rc = usage_error("dump", "--slice " + v + ": " + why), false;
      o.sliced = true;
    } else if (a == "--stats") {
      o.mode = Mode::kStats;
    } else if (a == "--csv") {
      o.mode = Mode::kCsv;
    } else if (a == "--json") {
      o.json = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return *rc = usage_error("dump", "unknown option " + a), false;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) return *rc = usage_error("dump", "needs STORE and VAR"), false;
  if (o.json && o.mode != Mode::kStats)
    return *rc = usage_error("dump", "--json is the form of --stats (use both)"), false;
  o.store = pos[0];
  o.var = pos[1];
  return true;
}

// "(i0,i1,...)" of element k of a block of shape whose element 0 is at start, in the
// variable's coordinates.
std::string index_of(const std::vector<uint64_t>& start, const std::vector<uint64_t>& shape,
                     uint64_t k, const char* open = "(", const char* sep = ",",
                     const char* close = ")") {
  std::vector<uint64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const uint64_t n = shape[d] ? shape[d] : 1;
    idx[d] = (d < start.size() ? start[d] : 0) + k % n;
    k /= n;
  }
  std::string s = open;
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? sep : "") + std::to_string(idx[d]);
  return s + close;
}

// s's keys appended to j: min, max and mean null when s holds no number.
void add_stats(Json& j, const ValueStats& s) {
  j["count"] = s.count;
  j["nans"] = s.nans;
  const bool any = s.count > s.nans;
  j["min"] = any ? Json(s.min) : Json(nullptr);
  j["max"] = any ? Json(s.max) : Json(nullptr);
  j["mean"] = any ? Json(s.mean()) : Json(nullptr);
}

void print_stats_line(const std::string& what, const ValueStats& s) {
  if (s.count == s.nans)
    printf("%-40s %12" PRIu64 " %8" PRIu64 "  (no numbers)\n", what.c_str(), s.count, s.nans);
  else
    printf("%-40s %12" PRIu64 " %8" PRIu64 " %16.9g %16.9g %16.9g\n", what.c_str(), s.count, s.nans,
           s.min, s.max, s.mean());
}

}  // namespace

int cmd_dump(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  Options o;
  int rc = 0;
  if (!parse(args, o, &rc)) return rc;
  Store st;
  if (!open_store(o.store, st)) return 1;
  if (!st.distrust.empty()) error("warning: " + st.distrust);
  std::vector<std::string> paths;
  std::string label;
  if (!checkpoint_paths(st, o.latest, o.step, paths, "dump", "reading", &label)) return 1;

  ContainerCache cache(st.dir);
  FileMaps maps(st, cache, "dump");
  const CheckpointVar cv = checkpoint_var(maps, paths, o.var, o.has_rank ? o.rank : -1);
  if (cv.failed) rc = 1;
  ValueStats all;
  Json files = Json::array();
  uint64_t decoded = 0;
  const size_t held = cv.held.size();
  std::vector<uint8_t> bytes;
  if (o.mode == Mode::kStats && !o.json)
    printf("%-40s %12s %8s %16s %16s %16s\n", "FILE (RANK)", "ELEMENTS", "NANS", "MIN", "MAX",
           "MEAN");
  if (o.mode == Mode::kCsv) printf("path,rank,index...,value\n");
  for (const HeldVar& h : cv.held) {
    const std::string& path = h.path;
    const Variable* v = h.var;
    std::string err;
    const NumericDtype nd = numeric_dtype(v->dtype);
    if (!nd.ok) {
      error("dump: " + v->key + " in " + printable(path) + " holds " + v->dtype +
            " elements, not numbers");
      rc = 1;
      continue;
    }
    std::vector<uint64_t> out_shape, picked;
    if (o.sliced) {
      const std::string why = resolve_slice(o.slice, v->shape, out_shape, picked);
      if (!why.empty()) {
        error("dump: " + v->key + " of shape " + fmt_shape(v->shape) + " in " + printable(path) +
              ": " + why);
        rc = 1;
        continue;
      }
    }
    if (o.mode == Mode::kValues)
      printf("# %s rank %d %s %s%s\n", printable(path).c_str(), h.rank, v->key.c_str(),
             fmt_shape(v->shape).c_str(),
             o.sliced ? ("[" + o.slice.text + "] " + fmt_shape(out_shape)).c_str() : "");
    ValueStats file_stats;
    // Elements k < n of data, element k at index idx(k): printed or counted, a new line
    // every row elements.
    auto emit = [&](const uint8_t* data, uint64_t n, uint64_t row, auto idx) {
      for (uint64_t k = 0; k < n; ++k) {
        if (o.mode == Mode::kStats) {
          file_stats.add(nd.value(data, k));
        } else if (o.mode == Mode::kCsv) {
          printf("%s,%d,%s,%s\n", printable(path).c_str(), h.rank, idx(k, "", ",", "").c_str(),
                 nd.text(data, k).c_str());
        } else {
          if (k % row == 0) printf("%s%s", k ? "\n" : "", idx(k, "(", ",", ")").c_str());
          printf(" %s", nd.text(data, k).c_str());
        }
      }
      if (o.mode == Mode::kValues && n) printf("\n");
    };
    // Sliced: the file's variable whole in memory, then the picked elements in order.
    std::vector<uint8_t> whole;
    uint64_t count = 0;
    if (o.sliced && element_count(v->shape, &count)) whole.assign(count * nd.info.size, 0);
    bool read_all = true;
    for (const VarExtent& x : v->extents) {
      if (!read_extent(h, x, bytes, &decoded, &err)) {
        error("dump: " + err);
        rc = 1;
        read_all = false;
        continue;
      }
      if (o.sliced) {
        copy_block(bytes.data(), x.shape, x.start, v->shape, nd.info.size, whole.data());
        continue;
      }
      emit(bytes.data(), x.len / nd.info.size,
           x.shape.empty() || x.shape.back() == 0 ? 1 : x.shape.back(),
           [&](uint64_t k, const char* a, const char* b, const char* c) {
             return index_of(x.start, x.shape, k, a, b, c);
           });
    }
    if (o.sliced && read_all) {
      bytes.resize(picked.size() * nd.info.size);
      for (uint64_t k = 0; k < picked.size(); ++k)
        memcpy(bytes.data() + k * nd.info.size, whole.data() + picked[k] * nd.info.size,
               nd.info.size);
      emit(bytes.data(), picked.size(),
           out_shape.empty() || out_shape.back() == 0 ? 1 : out_shape.back(),
           [&](uint64_t k, const char* a, const char* b, const char* c) {
             return index_of({}, v->shape, picked[k], a, b, c);
           });
    }
    if (o.mode == Mode::kStats) {
      all.merge(file_stats);
      if (o.json) {
        Json f = {{"path", path},
                  {"rank", h.rank},
                  {"key", v->key},
                  {"dtype", v->dtype},
                  {"shape", v->shape}};
        if (o.sliced) {
          f["slice"] = o.slice.text;
          f["slice_shape"] = out_shape;
        }
        add_stats(f, file_stats);
        files.push_back(std::move(f));
      } else {
        print_stats_line(printable(path) + " (" + std::to_string(h.rank) + ")", file_stats);
      }
    }
  }
  if (held == 0) {
    error("dump: no file of the checkpoint holds a variable " + printable(o.var) +
          (o.has_rank ? " written by rank " + std::to_string(o.rank) : "") +
          " (ckptfwd ls --vars " + st.arg + " lists the keys)");
    return 1;
  }
  if (o.mode == Mode::kStats) {
    if (o.json) {
      Json j = {{"var", o.var},
                {"step", label},
                {"files", files},
                {"all", Json::object()},
                {"decoded_bytes", decoded},
                {"file_bytes", cv.file_bytes}};
      add_stats(j["all"], all);
      printf("%s\n", json_text(j).c_str());
    } else {
      print_stats_line("all", all);
    }
  }
  fprintf(stderr, "ckptfwd: dump: %s in %zu file%s; decoded %s of the checkpoint's %s\n",
          printable(o.var).c_str(), held, held == 1 ? "" : "s", human_bytes(decoded).c_str(),
          human_bytes(cv.file_bytes).c_str());
  return rc;
}

}  // namespace ckptfwd::cli
