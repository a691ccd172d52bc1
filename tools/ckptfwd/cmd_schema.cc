// ckptfwd schema check FILE: placeholder until the schema language lands.
#include <cstdio>

#include "cli.h"

namespace ckptfwd::cli {

namespace {
const char kHelp[] =
    "usage: ckptfwd schema check FILE [SAMPLE]\n"
    "\n"
    "Will check a schema file for raw binary checkpoints and show how SAMPLE is split into\n"
    "variables. NOT IMPLEMENTED YET: schema support arrives with a later issue; this command\n"
    "prints that and exits with status 2.\n";
}  // namespace

int cmd_schema(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  if (args.empty() || args[0] != "check") return usage_error("schema", "expected: schema check FILE");
  if (args.size() < 2) return usage_error("schema", "missing FILE");
  fprintf(stderr, "ckptfwd: schema support arrives with a later issue\n");
  return 2;
}

}  // namespace ckptfwd::cli
