// Where a job's forwarder lives on this node. Shared by the preload library, the
// forwarder and the CLI so all three derive the same names from the same environment.
// Allocation free (the preload library calls it from inside wrapped calls).
//
//   <CKPTFWD_STAGE_DIR or /dev/shm>/ckptfwd-<uid>-<job>-<node>/   (mode 0700)
//       sock            control socket (0600)
//       lock            flock'd to elect the one process that starts the forwarder
//       v<vid>.data     staged write versions (0600), v<vid>.meta their description
//       r<...>.data     restored read views
//
// job:  job_identity() below
// node: node_identity() below
#pragma once
#include <climits>
#include <cstddef>

namespace ckptfwd {

struct SessionPaths {
  char stage_root[PATH_MAX];  // CKPTFWD_STAGE_DIR or /dev/shm, absolute (against the cwd)
  char dir[PATH_MAX];
  char socket[PATH_MAX];
  char lock[PATH_MAX];
  char node[256];
  char job[128];  // the job identity, as in the directory name
};

// The node identity: it names this node's forwarder (session directory, socket), the
// containers it writes (c-<node>-<ns>-<seq>.ckc, which the catalog reads back to tell one
// node's layers of a shared file from another's) and its stats line, so every component
// takes it from here. In order:
//   CKPTFWD_NODE_ID, when set (simulated nodes, or a launcher we do not know);
//   SLURMD_NODENAME (slurmd sets it for every task, per node; with several slurmd on one
//   host it is what tells the nodes apart), when it names this host: equal to the host
//   name or to its first label;
//   SLURMD_NODENAME "." the host name's first label, when it does not. Several slurmd on
//   one host give n1.host and n2.host; and a SLURMD_NODENAME that came along from another
//   host (MPICH's mpiexec -launcher ssh passes its whole environment to every rank) still
//   gives each host its own identity: two hosts sharing one would let one host's commit of
//   a shared file replace the other's;
//   the host name.
// Sanitised to [A-Za-z0-9._-] (other bytes become '_'), truncated to cap - 1.
void node_identity(char* out, size_t cap);
// The same from explicit values (nullptr or "" = unset), for tests.
void node_identity_from(const char* node_id, const char* slurmd_nodename, const char* host,
                        char* out, size_t cap);

// The job identity: it names the job's forwarder on each node (session directory, socket),
// its log file and its stats records. The first of kJobIdVariables that is set: ckptfwd's
// own, then Slurm, PBS/Torque, LSF (an array element: "<LSB_JOBID>.<LSB_JOBINDEX>") and
// Flux. Outside a batch system, "local-<8 hex>": a
// digest of the capture globs (CKPTFWD_CAPTURE, each made absolute against base, the
// current directory when null, as the library takes them), so two runs with different
// globs get forwarders (and so stores) of their own, and a job script's `ckptfwd drain`
// with the same CKPTFWD_CAPTURE finds its run's forwarder; "0" without globs. Two runs that
// capture the same globs share a forwarder: they write the same files anyway.
// Sanitised as node_identity.
inline constexpr const char* kJobIdVariables[] = {"CKPTFWD_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID",
                                                  "LSB_JOBID", "FLUX_JOB_ID"};
inline constexpr size_t kJobIdSources = sizeof(kJobIdVariables) / sizeof(kJobIdVariables[0]);
void job_identity(char* out, size_t cap);
// The same from explicit values (values[i]: kJobIdVariables[i], nullptr or "" = unset), for
// tests.
void job_identity_from(const char* const values[kJobIdSources], const char* capture,
                       const char* base, char* out, size_t cap);
// The digest of a CKPTFWD_CAPTURE value as above; 0 when it names no glob.
unsigned capture_digest(const char* spec, const char* base);

// Fills p from the environment; capture, when not null, stands for CKPTFWD_CAPTURE (the
// library passes the globs as the forwarder it starts gets them, so both name one job). Returns
// false if a name would not fit (or the cwd a relative CKPTFWD_STAGE_DIR needs is unknown).
bool session_paths(SessionPaths& p, const char* capture = nullptr);

// The launcher's rank: PMI_RANK, PMIX_RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID; -1 if none.
int rank_from_env();
// True when an MPI launcher started this process as a rank (PMI_RANK, PMIX_RANK or
// OMPI_COMM_WORLD_RANK set; SLURM_PROCID alone is any task of a step, `srun hostname` too).
bool launched_as_mpi_rank();

// Lexically normalises an absolute or cwd-relative path into out (collapses "//", "." and
// ".."; does not resolve symlinks). base is the directory a relative path is relative to
// (nullptr: the current directory). Returns false if it does not fit or cwd is unknown.
bool normalize_path(const char* path, const char* base, char* out, size_t cap);

// The path settings a process that starts a forwarder hands it made absolute against its
// own current directory, since the forwarder works in `/`. The preload library
// (interpose/setup/env_settings.h, collect_abs_env) and the CLI's drain and run
// (tools/ckptfwd/staged_versions.cc) take them from here. CKPTFWD_CAPTURE, a list of
// globs, each made absolute, is not among them.
inline constexpr const char* kForwarderPathSettings[] = {
    "CKPTFWD_STORE", "CKPTFWD_LOG", "CKPTFWD_STATS_FILE", "CKPTFWD_STAGE_DIR", "CKPTFWD_CONFIG"};
// True when value, given to path setting name, is a word that names no file and is passed
// on as it is: "stderr" and "syslog" of CKPTFWD_LOG.
bool path_setting_keeps(const char* name, const char* value);

// "<dir>/v<vid>.<ext>" (ext "data" or "meta"): a staged version's file, named by the
// forwarder and, for a lease (wire/lease.h), opened by the library. False if it does not
// fit.
bool staged_file(const char* dir, unsigned long long vid, const char* ext, char* out, size_t cap);

}  // namespace ckptfwd
