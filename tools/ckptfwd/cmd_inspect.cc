// ckptfwd inspect FILE...: the variable map structure inference gives a file, without a
// forwarder (the same Inferrer the forwarder runs on every sealed file version).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "common/config.h"
#include "common/json_text.h"
#include "schema/infer.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd inspect [--json] [--schema FILES] [--rename s/RE/REP/] FILE...\n"
    "\n"
    "Prints the variable map the forwarder would give each FILE: where its variables are\n"
    "(key Group/Name_Dtype_Class, element type with byte order, shape, the byte extents of\n"
    "their data) and how many bytes are residual (headers, metadata, padding). Sources, the\n"
    "first that fits wins: a schema rule whose glob matches the file's absolute path, an\n"
    "HDF5 superblock (also netCDF-4; read by the HDF5 library in the helper program\n"
    "ckptfwd-h5infer), a netCDF classic header (CDF-1, CDF-2, CDF-5). A file none of them\n"
    "describes, or whose header is malformed, is stored agnostic: the line 'source: none'\n"
    "says why.\n"
    "\n"
    "  --json            one JSON object per FILE, one per line: {\"file\", \"source\",\n"
    "                    \"detail\", \"size\", \"vars\": [{\"key\", \"name\", \"dtype\",\n"
    "                    \"elem_size\", \"shape\", \"bytes\", \"n_extents\", \"extents\":\n"
    "                    [{\"offset\", \"length\", \"start\", \"shape\", \"filtered\"}]}],\n"
    "                    \"residual_bytes\"}\n"
    "  --schema FILES    schema files (colon-separated), instead of CKPTFWD_SCHEMA\n"
    "  --rename RULE     variable rename rule, instead of CKPTFWD_VAR_RENAME\n"
    "\n"
    "Settings come from CKPTFWD_CONFIG and the CKPTFWD_* environment as for the forwarder\n"
    "(CKPTFWD_SCHEMA, CKPTFWD_VAR_RENAME, CKPTFWD_INFER_TIMEOUT_MS).\n"
    "\n"
    "Exit status: 0 every FILE was read (with or without structure), 1 a FILE could not be\n"
    "read, 2 usage or settings error.\n";

// The bytes of a file, mapped read-only (empty files map nothing).
struct MappedInput {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  ~MappedInput() {
    if (data) munmap(const_cast<uint8_t*>(data), size);
  }
  bool open(const std::string& path, std::string* err) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return *err = path + ": " + strerror(errno), false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (!ok) {
      *err = path + ": not a regular file";
    } else if (st.st_size > 0) {
      void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        *err = path + ": mmap: " + strerror(errno);
        ok = false;
      } else {
        data = static_cast<const uint8_t*>(p);
        size = static_cast<uint64_t>(st.st_size);
      }
    }
    ::close(fd);
    return ok;
  }
};

std::string absolute(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  return p;
}
}  // namespace

int cmd_inspect(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  bool json = false;
  Args files;
  Config cfg;
  std::string err;
  if (!Config::load(cfg, &err)) {
    error(err);
    return 2;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if ((a == "--schema" || a == "--rename") && i + 1 < args.size()) {
      (a == "--schema" ? cfg.schema : cfg.var_rename) = args[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("inspect", "unknown option '" + a + "'");
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return usage_error("inspect", "missing FILE");
  schema::Inferrer inferrer;
  if (!inferrer.configure(cfg, &err)) {
    error(err);
    return 2;
  }
  int rc = 0;
  for (const std::string& f : files) {
    MappedInput in;
    if (!in.open(f, &err)) {
      error(err);
      rc = 1;
      continue;
    }
    std::string note;
    VariableMap m = inferrer.infer(absolute(f), f, in.data, in.size, {}, &note);
    if (json) {
      Json obj = {{"file", f}};
      obj.update(variable_map_to_json(m, in.size));
      printf("%s\n", json_text(obj).c_str());
    } else {
      if (files.size() > 1) printf("%s:\n", f.c_str());
      print_variable_map(stdout, m, in.size);
      if (!note.empty() && !m.source.empty()) printf("(tried first: %s)\n", note.c_str());
    }
  }
  return rc;
}

}  // namespace ckptfwd::cli
