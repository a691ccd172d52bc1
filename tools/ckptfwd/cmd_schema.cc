// ckptfwd schema check SCHEMA [SAMPLE]: validates a schema file and shows how a sample file
// splits into variables, exactly as the forwarder would split it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "common/json_text.h"
#include "schema/rename.h"
#include "schema/schema_lang.h"
#include "store/container/variable_map.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd schema check [--json] [--rule N] [--rank R] SCHEMA [SAMPLE]\n"
    "\n"
    "Checks a schema for raw binary checkpoints (docs/schemas.md) and shows how a sample\n"
    "file splits into variables, as the forwarder splits a captured file when\n"
    "CKPTFWD_SCHEMA names the schema.\n"
    "\n"
    "SCHEMA is a schema file, or a colon-separated list of them like CKPTFWD_SCHEMA. It is\n"
    "parsed; a syntax error is printed as FILE:LINE:COL: message (exit 2). Otherwise its\n"
    "rename directives and its rules (as understood, one field per line) are printed.\n"
    "\n"
    "With SAMPLE, a file as the application wrote it (e.g. a checkpoint written without the\n"
    "library): the rule whose glob matches SAMPLE's absolute path is chosen like the\n"
    "forwarder chooses it (the first match in file order; the glob is matched with fnmatch\n"
    "without FNM_PATHNAME, so '*' also matches '/'). If no glob matches, that is reported\n"
    "and the exit status is 1: the forwarder would not use the schema for such a file.\n"
    "  --rule N   apply rule N (1 = the first rule) whatever its glob, e.g. to try a rule on\n"
    "             a sample copied to another directory\n"
    "  --rank R   the rank of the process that wrote SAMPLE, for placements (at ... in ...)\n"
    "             that use rank; the forwarder knows it from the MPI launcher\n"
    "Then prints, per variable: name, key (after the schema's rename directives), dtype,\n"
    "shape, its placement in the global array when the rule gives one ('at [..] in [..]';\n"
    "one that cannot be evaluated or does not hold the variable is reported and left out),\n"
    "the offset of each extent (one per iteration of a repeat group; the first few\n"
    "are shown) and its bytes; then the residual byte ranges no variable covers (a partial\n"
    "element after a [*] tail). If the sample does not fit the rule (too short, bytes left\n"
    "over without a [*] tail, a negative or overflowing size, ...), prints\n"
    "  does not fit: REASON\n"
    "naming the field and the byte offset, and exits with status 1; structure inference\n"
    "then leaves such a file agnostic (stored as plain bytes) and logs the same reason.\n"
    "A sample that fits but whose split has variables of more than 64 pieces averaging\n"
    "under 256 bytes (records of a few values, field by field) is shown with a warning on\n"
    "stderr: the forwarder leaves such variables out of the file's map (their bytes are\n"
    "stored as bytes), and the whole map when none is left; the exit status stays 0.\n"
    "  --json     print only the variable map as JSON: source, detail, size, vars (each\n"
    "             with key, name, dtype, elem_size, shape, bytes and extents, each with\n"
    "             offset, length, start, shape, filtered), residual_bytes; needs SAMPLE.\n"
    "             Errors still go to stderr.\n"
    "\n"
    "Exit status: 0 the schema is valid (and SAMPLE fits it), 1 SAMPLE cannot be read, no\n"
    "rule matches it or it does not fit, 2 usage error or a schema with an error.\n";

bool read_whole(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return false;
  out = s.str();
  return true;
}

}  // namespace

int cmd_schema(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  if (args.empty() || args[0] != "check")
    return usage_error("schema", "expected: schema check SCHEMA [SAMPLE]");
  bool json = false;
  long rule_no = 0, rank = -1;
  std::vector<std::string> pos;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--rule") {
      if (i + 1 >= args.size()) return usage_error("schema", "--rule needs a rule number");
      char* end = nullptr;
      rule_no = strtol(args[++i].c_str(), &end, 10);
      if (*end || rule_no < 1)
        return usage_error("schema", "--rule needs a rule number (1, 2, ...)");
    } else if (a == "--rank") {
      char* end = nullptr;
      if (i + 1 < args.size()) rank = strtol(args[++i].c_str(), &end, 10);
      if (!end || *end || rank < 0 || rank > INT32_MAX)
        return usage_error("schema", "--rank needs a rank (0, 1, ...)");
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("schema", "unknown option " + a);
    } else {
      pos.push_back(a);
    }
  }
  if (pos.empty()) return usage_error("schema", "missing SCHEMA");
  if (pos.size() > 2) return usage_error("schema", "too many arguments (SCHEMA [SAMPLE])");
  if (json && pos.size() < 2) return usage_error("schema", "--json needs SAMPLE");
  if (rule_no > 0 && pos.size() < 2) return usage_error("schema", "--rule needs SAMPLE");

  schema::SchemaSet set;
  std::string err;
  if (!set.load_files(pos[0], &err)) {
    fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  schema::VarRename rename;
  for (const std::string& r : set.renames()) rename.add(r, &err);  // checked by the parser
  if (!json) {
    printf("%s: valid, %zu rule%s, %zu rename directive%s\n", pos[0].c_str(), set.rule_count(),
           set.rule_count() == 1 ? "" : "s", set.renames().size(),
           set.renames().size() == 1 ? "" : "s");
    for (const std::string& r : set.renames()) printf("rename %s\n", r.c_str());
    for (size_t i = 0; i < set.rule_count(); ++i) {
      printf("rule %zu: %s\n", i + 1, schema::describe_rule(*set.rule(i)).c_str());
      std::string text = schema::format_rule(*set.rule(i)), line;
      std::istringstream lines(text);
      while (std::getline(lines, line)) printf("  %s\n", line.c_str());
    }
  }
  if (pos.size() < 2) return 0;

  const std::string& sample = pos[1];
  std::error_code ec;
  std::string abs = std::filesystem::absolute(sample, ec).lexically_normal().string();
  if (ec) abs = sample;
  std::string bytes;
  if (!read_whole(sample, bytes)) {
    error("cannot read " + sample);
    return 1;
  }
  const schema::SchemaRule* rule = nullptr;
  if (rule_no > 0) {
    rule = set.rule(static_cast<size_t>(rule_no - 1));
    if (!rule) {
      error("--rule " + std::to_string(rule_no) + ": the schema has " +
            std::to_string(set.rule_count()) + " rules");
      return 2;
    }
  } else {
    rule = set.match(abs);
    if (!rule) {
      error("no rule's glob matches " + abs +
            " (the forwarder would not use this schema for it; "
            "--rule N applies rule N anyway)");
      return 1;
    }
  }
  if (!json)
    printf("%s (%zu bytes): rule %s\n", abs.c_str(), bytes.size(),
           schema::describe_rule(*rule).c_str());
  VariableMap m;
  std::string why;
  // A bound on the map's memory (a sample of many short records); above the forwarder's,
  // so that a sample it would not store by variable is still shown split.
  const uint64_t limit =
      std::max<uint64_t>(schema::fine_split_limit(*rule, bytes.size()), 1u << 20);
  if (!schema::apply_schema_rule(*rule, reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size(), m, &why, limit, rank)) {
    fprintf(stderr, "%s: does not fit rule %s: %s\n", sample.c_str(),
            schema::describe_rule(*rule).c_str(), why.c_str());
    if (!json) printf("  does not fit: %s\n", why.c_str());
    return 1;
  }
  rename.apply(m);
  if (json) {
    printf("%s\n", variable_map_json(m, bytes.size()).c_str());
  } else {
    print_variable_map(stdout, m, bytes.size());
  }
  // It fits, but the forwarder stores such variables (or the whole file) as bytes.
  VariableMap kept = m;
  bool use = true;
  const std::string fine = keep_coarse_variables(kept, &use);
  if (!fine.empty())
    fprintf(stderr,
            "%s: warning: %s; the forwarder stores %s as bytes. Records of one length are "
            "stored by field as a 2-D array (float64 atoms[*][9]); records of several lengths "
            "that each begin with their length in values, as one flat array (float64 "
            "values[*]), which the codec splits by field\n",
            sample.c_str(), fine.c_str(), use ? "those variables" : "this file");
  return 0;
}

}  // namespace ckptfwd::cli
