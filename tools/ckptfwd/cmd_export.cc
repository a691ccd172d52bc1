// ckptfwd export STORE --var VAR --to OUT.npy|OUT.h5|OUT.nc: one variable of a checkpoint as one
// array, assembled from the files' blocks where their placements tile the global array
// (var_assembly.h), read from the chunks that hold it alone (checkpoint_vars.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "array_slice.h"
#include "checkpoint_vars.h"
#include "cli.h"
#include "common/json_text.h"
#include "export_output.h"
#include "h5_out.h"
#include "nc_out.h"
#include "npy_file.h"
#include "restore_paths.h"
#include "store.h"
#include "store_checkpoints.h"
#include "var_assembly.h"
#include "var_read.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd export STORE --var VAR --to OUT.npy|OUT.h5|OUT.nc|-\n"
    "                      [--latest | --step STEP | --file PATH...] [--rank R]\n"
    "                      [--slice SLICE] [--json]\n"
    "\n"
    "Writes the variable VAR of one checkpoint as one numpy array (.npy, C order, the\n"
    "elements' byte order kept), HDF5 dataset or netCDF variable, without restoring the\n"
    "files: only the chunks that hold VAR are read and decoded, each checked against its\n"
    "checksum. VAR is a key (\"temperature_F64LE_Array3D\") or a name (\"temperature\",\n"
    "\"/fields/T\") as ckptfwd ls --vars lists them, or a glob ('fields/*', '[tc]*') over\n"
    "keys and names: every variable it matches, each as if named alone, into one .h5 or\n"
    "one .nc (a .npy holds one array).\n"
    "\n"
    "The array is:\n"
    "  - the global array, when every file holding VAR knows its block's place in it (a\n"
    "    schema rule's 'at [..] in [..]', docs/schemas.md) and the blocks tile it: same\n"
    "    global shape, no two overlapping, no element left out;\n"
    "  - VAR itself, when one file holds it (a file all ranks wrote their parts of);\n"
    "  - otherwise the files' blocks stacked along a new first dimension in rank order\n"
    "    (they must have one shape), with the reason on stderr ('not assembled: ...').\n"
    "\n"
    "  --to OUT.npy  the file to write (replaced whole once complete); '-' writes the .npy\n"
    "                to stdout, e.g. for numpy.load(io.BytesIO(sys.stdin.buffer.read()))\n"
    "  --to OUT.h5   (or .hdf5) an HDF5 file with the dataset /NAME (VAR's name), or when\n"
    "                the blocks are stacked by rank one dataset /NAME/r<rank> per block;\n"
    "                attributes: ckptfwd_key, dtype, step, store, source_paths, ranks,\n"
    "                assembled (0/1), how, slice, and lossy_mode, lossy_bound,\n"
    "                lossy_max_err for a variable stored lossy. Written by the helper\n"
    "                ckptfwd-h5export (built where libhdf5-dev is)\n"
    "  --to OUT.nc   netCDF (CDF-5, netCDF >= 4.4 reads it), written directly: the same\n"
    "                variables and attributes, named without '/' (fields_T, T_r0003);\n"
    "                lists of paths as one text attribute, one path per line\n"
    "  --latest      the latest complete checkpoint (ckptfwd ls --steps), the default\n"
    "  --step STEP   checkpoint STEP as ckptfwd ls --steps names it (\"40\" names 0040)\n"
    "  --file PATH   the live file PATH instead of a checkpoint's files (repeatable; a\n"
    "                relative PATH is below the directory the store's files were captured\n"
    "                in, as for restore)\n"
    "  --rank R      only the block the writer of rank R wrote, as it is\n"
    "  --slice SLICE numpy's basic slicing of the array, e.g. '0:8,:,-1' or '::2,3'\n"
    "                (START:STOP[:STEP] or an index per dimension, the rest whole):\n"
    "                the .npy holds a[SLICE] as numpy gives it\n"
    "  --json        on stdout (not with --to -), one line per variable: {\"var\", \"key\",\n"
    "                \"step\", \"dtype\", \"shape\", \"assembled\", \"how\", \"slice\",\n"
    "                \"files\": [{\"path\", \"rank\",\n"
    "                \"shape\", \"at\"}], \"lossy\": null or {\"mode\": \"abs\"|\"rel\",\n"
    "                \"bound\", \"max_err\"}, \"decoded_bytes\", \"file_bytes\", \"out\"}\n"
    "\n"
    "At the end, on stderr: the files read, how the array was made, and the bytes decoded\n"
    "against the bytes of the checkpoint's files; for a variable stored lossy (opted in\n"
    "with CKPTFWD_LOSSY), the bound every value is within and the largest error.\n"
    "\n"
    "Exit status: 0 written, 1 nothing written (no file holds VAR, the blocks differ in\n"
    "dtype or cannot be stacked, a chunk fails its checksum, data compressed by an HDF5\n"
    "filter, OUT cannot be written), 2 usage error.\n";

struct Options {
  std::vector<std::string> files;
  std::string store, var, step, to;
  bool latest = true, json = false;
  int rank = -1;
  bool sliced = false;
  ArraySlice slice;
  bool h5 = false;  // OUT ends in .h5 or .hdf5
  bool nc = false;  // OUT ends in .nc
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool parse(const Args& args, Options& o, int* rc) {
  std::vector<std::string> pos;
  auto value = [&](size_t& i, const std::string& a, const char* name, std::string* out) {
    const std::string eq = std::string(name) + "=";
    if (a.rfind(eq, 0) == 0) {
      *out = a.substr(eq.size());
      return true;
    }
    if (i + 1 >= args.size()) return false;
    *out = args[++i];
    return true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string opt = a.substr(0, a.find('='));
    std::string v;
    if (a == "--latest") {
      o.latest = true;
      o.step.clear();
    } else if (a == "--json") {
      o.json = true;
    } else if (opt == "--step" || opt == "--var" || opt == "--to" || opt == "--rank" ||
               opt == "--file" || opt == "--slice") {
      if (!value(i, a, opt.c_str(), &v) || v.empty())
        return *rc = usage_error("export", opt + " needs a value"), false;
      if (opt == "--step") {
        o.step = v;
        o.latest = false;
      } else if (opt == "--file") {
        o.files.push_back(v);
      } else if (opt == "--var") {
        o.var = v;
      } else if (opt == "--slice") {
        const std::string why = parse_slice(v, o.slice);
        if (!why.empty()) return *rc = usage_error("export", "--slice " + v + ": " + why), false;
        o.sliced = true;
      } else if (opt == "--to") {
        o.to = v;
      } else {
        char* end = nullptr;
        const long r = strtol(v.c_str(), &end, 10);
        if (*end || r < 0 || r > INT32_MAX)
          return *rc = usage_error("export", "--rank takes a rank number, not '" + v + "'"), false;
        o.rank = static_cast<int>(r);
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return *rc = usage_error("export", "unknown option " + a), false;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 1) return *rc = usage_error("export", "needs one STORE"), false;
  if (o.var.empty()) return *rc = usage_error("export", "needs --var VAR"), false;
  if (o.to.empty())
    return *rc = usage_error("export", "needs --to OUT.npy (or - for stdout)"), false;
  if (!o.files.empty() && (!o.latest || !o.step.empty()))
    return *rc = usage_error("export", "--file takes the place of --step"), false;
  if (o.json && o.to == "-")
    return *rc = usage_error("export", "--json prints on stdout, which --to - takes"), false;
  o.h5 = ends_with(o.to, ".h5") || ends_with(o.to, ".hdf5");
  o.nc = ends_with(o.to, ".nc");
  o.store = pos[0];
  return true;
}

// The datasets of an .h5 export of the array in npy (its elements from data_at on): one,
// or one per block when they are stacked by rank and not sliced. attrs: those of all.
Json h5_datasets(const std::string& npy, uint64_t data_at, std::string name, const Variable& first,
                 const std::vector<HeldVar>& held, const Assembly& plan, bool per_block,
                 const std::vector<uint64_t>& shape, const Json& attrs) {
  if (name.empty() || name[0] != '/') name = "/" + name;
  Json all = Json::array();
  Json paths = Json::array(), ranks = Json::array();
  for (const HeldVar& h : held) {
    paths.push_back(h.path);
    ranks.push_back(h.rank);
  }
  if (!per_block) {
    Json a = attrs;
    a["source_paths"] = paths;
    a["ranks"] = ranks;
    all.push_back({{"name", name},
                   {"data", npy},
                   {"offset", data_at},
                   {"dtype", first.dtype},
                   {"shape", shape},
                   {"attrs", a}});
    return all;
  }
  std::set<int32_t> seen;
  for (const HeldVar& h : held) seen.insert(h.rank);
  const bool by_rank = seen.size() == held.size() && !seen.count(-1);
  uint64_t block = first.elem_size;
  for (size_t d = 1; d < plan.shape.size(); ++d) block *= plan.shape[d];
  for (size_t i = 0; i < held.size(); ++i) {
    char leaf[32];
    snprintf(leaf, sizeof leaf, by_rank ? "/r%04d" : "/file%04d",
             by_rank ? held[i].rank : static_cast<int>(i));
    Json a = attrs;
    a["source_paths"] = Json::array({held[i].path});
    a["ranks"] = Json::array({held[i].rank});
    all.push_back({{"name", name + leaf},
                   {"data", npy},
                   {"offset", data_at + i * block},
                   {"dtype", first.dtype},
                   {"shape", held[i].var->shape},
                   {"attrs", a}});
  }
  return all;
}

// One variable exported: its array in a temporary file (a .npy) and what the .h5 and .nc
// forms, the --json line and the summary on stderr say of it.
struct Exported {
  std::unique_ptr<ExportOutput> out;
  std::string message;  // the summary for stderr
  Json summary;         // the --json object
  // For the .h5 and .nc forms:
  uint64_t data_at = 0;
  Variable first;
  std::vector<HeldVar> held;
  Assembly plan;
  bool per_block = false;
  std::vector<uint64_t> shape;
  Json attrs;
  // The dataset's name: the variable's name, or its key when it has none.
  std::string name() const { return first.name.empty() ? first.key : first.name; }
  Json datasets(const std::string& npy, const std::string& as) const {
    return h5_datasets(npy, data_at, as, first, held, plan, per_block, shape, attrs);
  }
};

// Reads variable VAR of paths into ex (its array in ex.out). False after saying why.
bool export_var(const Options& o, FileMaps& maps, const std::vector<std::string>& paths,
                const std::string& label, const std::string& var, Exported& ex) {
  const Store& st = maps.store();
  CheckpointVar cv = checkpoint_var(maps, paths, var, o.rank);
  if (cv.failed) return false;
  if (cv.held.empty()) {
    error("export: no file of the checkpoint holds a variable " + printable(var) +
          (o.rank >= 0 ? " written by rank " + std::to_string(o.rank) : "") +
          " (ckptfwd ls --vars " + st.arg + " lists the keys)");
    return false;
  }
  std::stable_sort(cv.held.begin(), cv.held.end(),
                   [](const HeldVar& a, const HeldVar& b) { return a.rank < b.rank; });
  const Variable& first = *cv.held[0].var;
  std::vector<VarBlock> blocks;
  for (const HeldVar& h : cv.held) {
    if (h.var->dtype != first.dtype) {
      error("export: " + printable(var) + " is " + first.dtype + " in " +
            printable(cv.held[0].path) + " but " + h.var->dtype + " in " + printable(h.path) +
            ": one array cannot hold both (--rank R exports one file's)");
      return false;
    }
    // One rank's block asked for: the block itself, wherever it lies.
    if (o.rank >= 0)
      blocks.push_back({h.var->shape, {}, {}});
    else
      blocks.push_back({h.var->shape, h.var->global_shape, h.var->global_start});
  }
  Assembly plan;
  std::string why = plan_assembly(blocks, plan);
  if (!why.empty()) {
    error("export: " + printable(var) + ": " + why + " (--rank R exports one file's)");
    return false;
  }
  if (o.rank >= 0 && blocks.size() == 1) {
    plan.assembled = false;
    plan.how = "the block rank " + std::to_string(o.rank) + " wrote";
    if (!first.global_shape.empty()) {
      plan.how += ", at ";
      for (size_t d = 0; d < first.global_start.size(); ++d)
        plan.how += (d ? "," : "") + std::to_string(first.global_start[d]);
      plan.how += " in " + fmt_shape(first.global_shape);
    }
  }
  std::vector<uint64_t> out_shape = plan.shape, picked;
  if (o.sliced) {
    why = resolve_slice(o.slice, plan.shape, out_shape, picked);
    if (!why.empty()) {
      error("export: " + printable(var) + " of shape " + fmt_shape(plan.shape) + ": " + why);
      return false;
    }
  }
  const std::string descr = npy_descr(first.dtype);
  const std::string header = npy_header(descr, out_shape);
  uint64_t n = 0, bytes = 0, whole = 0;
  element_count(out_shape, &n);
  element_count(plan.shape, &whole);
  if (descr.empty() || header.empty() || __builtin_mul_overflow(n, first.elem_size, &bytes) ||
      bytes > UINT64_MAX - header.size()) {
    error("export: " + printable(var) + ": a " + first.dtype + " array of shape " +
          fmt_shape(out_shape) + " has no .npy form");
    return false;
  }
  // Sliced: the whole array is assembled in memory first, the slice copied out of it.
  std::vector<uint8_t> assembled;
  if (o.sliced) assembled.resize(whole * first.elem_size);
  ex.out = std::make_unique<ExportOutput>();
  std::string err;
  if (!ex.out->open(o.to, header.size() + bytes, &err)) {
    error("export: " + err);
    return false;
  }
  memcpy(ex.out->data(), header.data(), header.size());
  uint8_t* dst = o.sliced ? assembled.data() : ex.out->data() + header.size();
  BlockReads reads;
  if (!read_blocks(cv.held, plan, first.elem_size, dst, &reads, &err)) {
    error("export: " + err + "; nothing written");
    return false;
  }
  const uint64_t decoded = reads.decoded;
  const codec::LossyRecord& lossy = reads.lossy;
  const bool any_lossy = reads.any_lossy;
  Json files = Json::array();
  for (size_t i = 0; i < cv.held.size(); ++i) {
    const HeldVar& h = cv.held[i];
    files.push_back(
        {{"path", h.path}, {"rank", h.rank}, {"shape", h.var->shape}, {"at", plan.at[i]}});
  }
  if (o.sliced) {
    uint8_t* to = ex.out->data() + header.size();
    for (uint64_t k = 0; k < picked.size(); ++k)
      memcpy(to + k * first.elem_size, dst + picked[k] * first.elem_size, first.elem_size);
  }
  ex.data_at = header.size();
  ex.first = first;
  ex.held = cv.held;
  ex.plan = plan;
  ex.per_block = !plan.assembled && !o.sliced && o.rank < 0;
  ex.shape = out_shape;
  ex.attrs = {{"ckptfwd_key", first.key}, {"dtype", first.dtype},        {"step", label},
              {"store", st.arg},          {"assembled", plan.assembled}, {"how", plan.how}};
  if (o.sliced) ex.attrs["slice"] = o.slice.text;
  if (any_lossy) {
    ex.attrs["lossy_mode"] = lossy.relative ? "rel" : "abs";
    ex.attrs["lossy_bound"] = lossy.bound;
    ex.attrs["lossy_max_err"] = lossy.max_err;
  }
  const size_t held = cv.held.size();
  char line[4096];
  snprintf(line, sizeof line,
           "ckptfwd: export: %s (%s) from %zu file%s: %s %s, %s; decoded %s of the %s %s\n",
           printable(first.key).c_str(), first.dtype.c_str(), held, held == 1 ? "" : "s",
           plan.assembled ? "assembled"
           : o.rank >= 0  ? "one block,"
                          : "not assembled, stacked by rank into",
           (fmt_shape(plan.shape) +
            (o.sliced ? " (sliced [" + o.slice.text + "] to " + fmt_shape(out_shape) + ")" : ""))
               .c_str(),
           plan.how.c_str(), human_bytes(decoded).c_str(),
           o.files.empty() ? "checkpoint's" : "files'", human_bytes(cv.file_bytes).c_str());
  ex.message = line;
  if (any_lossy) {
    snprintf(line, sizeof line,
             "ckptfwd: export: %s was stored lossy (CKPTFWD_LOSSY): every value within %s %g of "
             "the one written (largest error %g)\n",
             printable(first.key).c_str(), lossy.relative ? "a relative" : "an absolute",
             lossy.bound, lossy.max_err);
    ex.message += line;
  }
  ex.summary = {{"var", var},
                {"key", first.key},
                {"step", label},
                {"dtype", first.dtype},
                {"shape", out_shape},
                {"assembled", plan.assembled},
                {"slice", o.sliced ? Json(o.slice.text) : Json(nullptr)},
                {"how", plan.how},
                {"files", files},
                {"lossy", any_lossy ? Json{{"mode", lossy.relative ? "rel" : "abs"},
                                           {"bound", lossy.bound},
                                           {"max_err", lossy.max_err}}
                                    : Json(nullptr)},
                {"decoded_bytes", decoded},
                {"file_bytes", cv.file_bytes},
                {"out", o.to}};
  return true;
}

}  // namespace

int cmd_export(const Args& args) {
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
  std::vector<std::string> paths = o.files;
  std::string label;
  if (!paths.empty()) {
    if (!absolute_paths(st, paths, "export")) return 1;
    for (const std::string& p : paths)
      if (!st.catalog.entries().count(p)) {
        error("export: " + printable(p) + " is not a live file of " + st.arg +
              " (ckptfwd ls lists them)");
        return 1;
      }
  } else if (!checkpoint_paths(st, o.latest, o.step, paths, "export", "exporting", &label)) {
    return 1;
  }
  ContainerCache cache(st.dir);
  FileMaps maps(st, cache, "export");
  std::vector<std::string> vars = {o.var};
  if (o.var.find_first_of("*?[") != std::string::npos) {
    bool failed = false;
    vars = matching_keys(maps, paths, o.var, o.rank, &failed);
    if (failed) return 1;
    if (vars.empty()) {
      error("export: no variable of the checkpoint matches " + printable(o.var) +
            " (ckptfwd ls --vars " + st.arg + " lists the keys)");
      return 1;
    }
    if (vars.size() > 1 && !o.h5 && !o.nc) {
      std::string list;
      for (size_t i = 0; i < vars.size() && i < 6; ++i) list += (i ? ", " : "") + vars[i];
      error("export: " + printable(o.var) + " matches " + std::to_string(vars.size()) +
            " variables (" + list + (vars.size() > 6 ? ", ..." : "") +
            "); a .npy holds one: --to OUT.h5 or OUT.nc takes them all");
      return 1;
    }
  }
  std::vector<Exported> done;
  for (const std::string& var : vars) {
    Exported ex;
    if (!export_var(o, maps, paths, label, var, ex)) return 1;
    done.push_back(std::move(ex));
  }
  std::string err;
  if (o.h5 || o.nc) {
    // Each variable by its name; by its key where two share a name (other dtypes).
    std::map<std::string, int> names;
    for (const Exported& ex : done) ++names[ex.name()];
    Json datasets = Json::array();
    std::vector<NcVar> nc_vars;
    for (Exported& ex : done) {
      std::string npy;
      if (!ex.out->temp_file(&npy, &err)) {
        error("export: " + err);
        return 1;
      }
      for (Json d : ex.datasets(npy, names[ex.name()] > 1 ? ex.first.key : ex.name())) {
        // netCDF: the same datasets as variables, their names without the leading '/'.
        nc_vars.push_back({d["name"].get<std::string>().substr(1), ex.first.dtype,
                           d["shape"].get<std::vector<uint64_t>>(),
                           ex.out->data() + d["offset"].get<uint64_t>(), d["attrs"]});
        datasets.push_back(std::move(d));
      }
    }
    if (o.h5 ? !write_h5(o.to, datasets, o.to, &err) : !write_nc(o.to, nc_vars, &err)) {
      error("export: " + err);
      return 1;
    }
  } else if (!done[0].out->commit(&err)) {
    error("export: " + err);
    return 1;
  }
  for (const Exported& ex : done) {
    fputs(ex.message.c_str(), stderr);
    if (o.json) printf("%s\n", json_text(ex.summary).c_str());
  }
  return 0;
}

}  // namespace ckptfwd::cli
