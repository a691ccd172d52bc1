// ckptfwd export STORE --var VAR --to OUT.npy: one variable of a checkpoint as one array,
// assembled from the files' blocks where their placements tile the global array
// (var_assembly.h), read from the chunks that hold it alone (checkpoint_vars.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "array_slice.h"
#include "checkpoint_vars.h"
#include "cli.h"
#include "common/json_text.h"
#include "npy_file.h"
#include "restore_paths.h"
#include "store.h"
#include "store_checkpoints.h"
#include "var_assembly.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd export STORE --var VAR --to OUT.npy|- [--latest | --step STEP |\n"
    "                      --file PATH...] [--rank R] [--slice SLICE] [--json]\n"
    "\n"
    "Writes the variable VAR of one checkpoint as one numpy array (.npy, C order, the\n"
    "elements' byte order kept), without restoring the files: only the chunks that hold\n"
    "VAR are read and decoded, each checked against its checksum. VAR is a key\n"
    "(\"temperature_F64LE_Array3D\") or a name (\"temperature\", \"/fields/T\") as\n"
    "ckptfwd ls --vars lists them.\n"
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
    "  --latest      the latest complete checkpoint (ckptfwd ls --steps), the default\n"
    "  --step STEP   checkpoint STEP as ckptfwd ls --steps names it (\"40\" names 0040)\n"
    "  --file PATH   the live file PATH instead of a checkpoint's files (repeatable; a\n"
    "                relative PATH is below the directory the store's files were captured\n"
    "                in, as for restore)\n"
    "  --rank R      only the block the writer of rank R wrote, as it is\n"
    "  --slice SLICE numpy's basic slicing of the array, e.g. '0:8,:,-1' or '::2,3'\n"
    "                (START:STOP[:STEP] or an index per dimension, the rest whole):\n"
    "                the .npy holds a[SLICE] as numpy gives it\n"
    "  --json        on stdout (not with --to -): {\"var\", \"key\", \"step\", \"dtype\",\n"
    "                \"shape\", \"assembled\", \"how\", \"slice\", \"files\": [{\"path\", "
    "\"rank\",\n"
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
};

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
  o.store = pos[0];
  return true;
}

// Where the array goes: an mmap of a temporary file beside OUT (renamed over OUT once
// complete), or memory written to stdout.
class Output {
 public:
  ~Output() {
    if (map_) munmap(map_, size_);
    if (fd_ >= 0) close(fd_);
    if (!tmp_.empty()) unlink(tmp_.c_str());
  }
  bool open(const std::string& to, uint64_t size, std::string* err) {
    to_ = to;
    size_ = size;
    if (to == "-") {
      mem_.assign(size, 0);
      return true;
    }
    tmp_ = to + ".tmp.XXXXXX";
    fd_ = mkstemp(tmp_.data());
    if (fd_ < 0) {
      *err = "cannot create " + tmp_ + ": " + strerror(errno);
      tmp_.clear();
      return false;
    }
    (void)fchmod(fd_, 0644);  // mkstemp makes 0600; the array is data like any export
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      *err = "cannot size " + tmp_ + ": " + strerror(errno);
      return false;
    }
    map_ = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      *err = "cannot map " + tmp_ + ": " + strerror(errno);
      return false;
    }
    return true;
  }
  uint8_t* data() { return map_ ? static_cast<uint8_t*>(map_) : mem_.data(); }
  bool commit(std::string* err) {
    if (to_ == "-") {
      if (fwrite(mem_.data(), 1, mem_.size(), stdout) != mem_.size() || fflush(stdout) != 0) {
        *err = std::string("cannot write to stdout: ") + strerror(errno);
        return false;
      }
      return true;
    }
    if (msync(map_, size_, MS_SYNC) != 0 || fsync(fd_) != 0) {
      *err = "cannot write " + tmp_ + ": " + strerror(errno);
      return false;
    }
    if (rename(tmp_.c_str(), to_.c_str()) != 0) {
      *err = "cannot rename " + tmp_ + " to " + to_ + ": " + strerror(errno);
      return false;
    }
    tmp_.clear();
    return true;
  }

 private:
  std::string to_, tmp_;
  int fd_ = -1;
  void* map_ = nullptr;
  uint64_t size_ = 0;
  std::vector<uint8_t> mem_;
};

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
  CheckpointVar cv = checkpoint_var(st, cache, paths, o.var, o.rank, "export");
  if (cv.failed) return 1;
  if (cv.held.empty()) {
    error("export: no file of the checkpoint holds a variable " + printable(o.var) +
          (o.rank >= 0 ? " written by rank " + std::to_string(o.rank) : "") +
          " (ckptfwd ls --vars " + st.arg + " lists the keys)");
    return 1;
  }
  std::stable_sort(cv.held.begin(), cv.held.end(),
                   [](const HeldVar& a, const HeldVar& b) { return a.rank < b.rank; });
  const Variable& first = *cv.held[0].var;
  std::vector<VarBlock> blocks;
  for (const HeldVar& h : cv.held) {
    if (h.var->dtype != first.dtype) {
      error("export: " + printable(o.var) + " is " + first.dtype + " in " +
            printable(cv.held[0].path) + " but " + h.var->dtype + " in " + printable(h.path) +
            ": one array cannot hold both (--rank R exports one file's)");
      return 1;
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
    error("export: " + printable(o.var) + ": " + why + " (--rank R exports one file's)");
    return 1;
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
      error("export: " + printable(o.var) + " of shape " + fmt_shape(plan.shape) + ": " + why);
      return 1;
    }
  }
  const std::string descr = npy_descr(first.dtype);
  const std::string header = npy_header(descr, out_shape);
  uint64_t n = 0, bytes = 0, whole = 0;
  element_count(out_shape, &n);
  element_count(plan.shape, &whole);
  if (descr.empty() || header.empty() || __builtin_mul_overflow(n, first.elem_size, &bytes) ||
      bytes > UINT64_MAX - header.size()) {
    error("export: " + printable(o.var) + ": a " + first.dtype + " array of shape " +
          fmt_shape(out_shape) + " has no .npy form");
    return 1;
  }
  // Sliced: the whole array is assembled in memory first, the slice copied out of it.
  std::vector<uint8_t> assembled;
  if (o.sliced) assembled.resize(whole * first.elem_size);
  Output out;
  std::string err;
  if (!out.open(o.to, header.size() + bytes, &err)) {
    error("export: " + err);
    return 1;
  }
  memcpy(out.data(), header.data(), header.size());
  uint8_t* dst = o.sliced ? assembled.data() : out.data() + header.size();
  uint64_t decoded = 0;
  std::vector<uint8_t> buf;
  codec::LossyRecord lossy;
  bool any_lossy = false;
  Json files = Json::array();
  for (size_t i = 0; i < cv.held.size(); ++i) {
    const HeldVar& h = cv.held[i];
    const size_t lead = plan.shape.size() - h.var->shape.size();  // 1 when stacked
    for (const VarExtent& x : h.var->extents) {
      if (!read_extent(h, x, buf, &decoded, &err)) {
        error("export: " + err + "; nothing written");
        return 1;
      }
      extent_lossy(h, x, &lossy, &any_lossy);
      std::vector<uint64_t> at = plan.at[i];
      for (size_t d = 0; d < x.start.size(); ++d) at[lead + d] += x.start[d];
      copy_block(buf.data(), x.shape, at, plan.shape, first.elem_size, dst);
    }
    files.push_back(
        {{"path", h.path}, {"rank", h.rank}, {"shape", h.var->shape}, {"at", plan.at[i]}});
  }
  if (o.sliced) {
    uint8_t* to = out.data() + header.size();
    for (uint64_t k = 0; k < picked.size(); ++k)
      memcpy(to + k * first.elem_size, dst + picked[k] * first.elem_size, first.elem_size);
  }
  if (!out.commit(&err)) {
    error("export: " + err);
    return 1;
  }
  const size_t held = cv.held.size();
  fprintf(stderr, "ckptfwd: export: %s (%s) from %zu file%s: %s %s, %s; decoded %s of the %s %s\n",
          printable(first.key).c_str(), first.dtype.c_str(), held, held == 1 ? "" : "s",
          plan.assembled ? "assembled"
          : o.rank >= 0  ? "one block,"
                         : "not assembled, stacked by rank into",
          (fmt_shape(plan.shape) +
           (o.sliced ? " (sliced [" + o.slice.text + "] to " + fmt_shape(out_shape) + ")" : ""))
              .c_str(),
          plan.how.c_str(), human_bytes(decoded).c_str(),
          o.files.empty() ? "checkpoint's" : "files'", human_bytes(cv.file_bytes).c_str());
  if (any_lossy)
    fprintf(stderr,
            "ckptfwd: export: %s was stored lossy (CKPTFWD_LOSSY): every value within %s %g of "
            "the one written (largest error %g)\n",
            printable(first.key).c_str(), lossy.relative ? "a relative" : "an absolute",
            lossy.bound, lossy.max_err);
  if (o.json) {
    Json j = {{"var", o.var},
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
    printf("%s\n", json_text(j).c_str());
  }
  return 0;
}

}  // namespace ckptfwd::cli
