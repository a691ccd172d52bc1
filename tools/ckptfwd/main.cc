// ckptfwd: inspect, verify and restore a checkpoint store; talk to the running forwarder.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "common/config.h"
#include "common/release.h"
#include "store/container/direct_read.h"
#include "wire/setting_value.h"

namespace {

const char kHelp[] =
    "usage: ckptfwd COMMAND [ARGS...]\n"
    "\n"
    "Checkpoint I/O forwarding: inspect and restore what the forwarder committed, and talk to\n"
    "the forwarder of the current job on this node.\n"
    "\n"
    "Store commands (need nothing but the store directory):\n"
    "  ls STORE [--json | --all]           list the live files of a store, the bytes each\n"
    "                                      stores and a total (--all: every container and\n"
    "                                      every file version in it)\n"
    "  ls STORE --vars [--json]            the variables of the live files, by key\n"
    "  ls STORE --steps [--json] | --latest\n"
    "                                      one row per checkpoint: complete or not, the\n"
    "                                      latest complete one (--latest: its step alone)\n"
    "  restore STORE --to DIR [--full-paths] [PATH...]\n"
    "                                      restore files byte for byte into DIR\n"
    "  restore STORE --to DIR --latest | --step STEP\n"
    "                                      restore a whole checkpoint\n"
    "  ls STORE --versions [PATH...]       the older versions the store holds of files\n"
    "  restore STORE --to DIR --version N PATH...\n"
    "                                      restore the version N back of each PATH\n"
    "  dump STORE VAR [--step STEP] [--rank R] [--stats [--json] | --csv]\n"
    "                                      the values of one variable in a checkpoint's\n"
    "                                      files, decoding only its chunks\n"
    "  export STORE --var VAR --to OUT.npy|- [--step STEP] [--rank R] [--json]\n"
    "                                      one variable of a checkpoint as one numpy\n"
    "                                      array, assembled where placements tile it\n"
    "  verify [--json] STORE|FILE.ckc      check manifest and every chunk checksum\n"
    "  prune STORE --keep N [--dry-run]    delete all but the N latest complete checkpoints\n"
    "  relocate STORE OLD_DIR [NEW_DIR]    the run directory moved: map its recorded paths\n"
    "  report STORE [--json | --html FILE] [--mtbf D]\n"
    "                                      the job's checkpoints, costs, sizes and plots\n"
    "\n"
    "Forwarder commands (the job and node come from CKPTFWD_JOB_ID / SLURM_JOB_ID /\n"
    "PBS_JOBID / LSB_JOBID / FLUX_JOB_ID (outside a batch system: CKPTFWD_CAPTURE),\n"
    "CKPTFWD_NODE_ID / SLURMD_NODENAME / the host name, and\n"
    "CKPTFWD_STAGE_DIR):\n"
    "  stats [--json] [--mtbf D] [--watch [S]]\n"
    "                                      counters of the running forwarder (--mtbf: how\n"
    "                                      often to checkpoint; --watch: a live view)\n"
    "  stats --vars [--json]               its variables: codec chain, bytes in/out, ratio\n"
    "  stats --file STATS_FILE [--mtbf D]  pretty-print a CKPTFWD_STATS_FILE\n"
    "  drain                               wait until everything captured is committed\n"
    "  run [--capture GLOBS] -- CMD...     run CMD under the preload library, then drain\n"
    "\n"
    "Structure (what the forwarder learns about a checkpoint file's variables):\n"
    "  inspect [--json] FILE...            the variable map of HDF5, netCDF and raw files\n"
    "\n"
    "Other:\n"
    "  config [--all] [--json]             the settings in effect, where each comes from,\n"
    "                                      and what is wrong with them\n"
    "  schema check [--json] SCHEMA [SAMPLE]\n"
    "                                      check a schema for raw binary checkpoints and\n"
    "                                      how SAMPLE splits into variables\n"
    "  help, --help, -h                    this text; `ckptfwd COMMAND --help` for details\n"
    "  version, --version                  the version of this ckptfwd\n"
    "\n"
    "STORE is CKPTFWD_STORE of the run, by default the .ckptfwd directory in the literal\n"
    "directory of the capture glob (CKPTFWD_CAPTURE=/scratch/run/ckpt/step_*/r*.bin:\n"
    "/scratch/run/ckpt/.ckptfwd); runs of earlier versions put it next to the files.\n"
    "\n"
    "--json: JSON for scripts; every command's keys are listed in docs/json.md.\n"
    "Exit status: 0 success, 1 a problem was found or an operation failed, 2 usage error.\n";

// Directory of this executable (for `run` to find ../lib/libckptfwd.so).
std::string self_exe(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ckptfwd::cli;
  if (argc < 2) {
    fputs(kHelp, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  Args args(argv + 2, argv + argc);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    fputs(kHelp, stdout);
    return 0;
  }
  if (cmd == "version" || cmd == "--version") {
    printf("ckptfwd %s\n", ckptfwd::release_version());
    return 0;
  }
  // The one setting the store commands read: whether chunks are read with O_DIRECT.
  if (const char* v = ::ckptfwd::wire::setting_value("CKPTFWD_DIRECT_READ"); v && *v) {
    ckptfwd::Config c;
    std::string err;
    if (!c.set("DIRECT_READ", v, &err)) {
      fprintf(stderr, "ckptfwd: error: %s\n", err.c_str());
      return 2;
    }
    ckptfwd::set_direct_read_default(c.direct_read);
  }
  if (cmd == "ls") return cmd_ls(args);
  if (cmd == "restore") return cmd_restore(args);
  if (cmd == "verify") return cmd_verify(args);
  if (cmd == "stats") return cmd_stats(args);
  if (cmd == "drain") return cmd_drain(args);
  if (cmd == "run") return cmd_run(args, self_exe(argv[0]));
  if (cmd == "schema") return cmd_schema(args);
  if (cmd == "inspect") return cmd_inspect(args);
  if (cmd == "dump") return cmd_dump(args);
  if (cmd == "export") return cmd_export(args);
  if (cmd == "relocate") return cmd_relocate(args);
  if (cmd == "prune") return cmd_prune(args);
  if (cmd == "report") return cmd_report(args);
  if (cmd == "config") return cmd_config(args);
  error("unknown command '" + cmd + "' (see ckptfwd --help)");
  return 2;
}
