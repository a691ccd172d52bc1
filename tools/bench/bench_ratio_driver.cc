// make bench-ratio's driver of ckptfwd's own pipeline (tools/bench/bench_ratio.sh): the
// per-rank files of one data set go through fwd::write_container, as the forwarder's
// batcher hands them over, once per merge scheme and group size; every file is then read
// back with ContainerReader and compared byte for byte with its input.
//
//   bench_ratio_driver --set NAME --work DIR [--schema FILE] [--schemes a,b,..]
//                      [--groups 1,2,..] [--min-mbps N] FILE...   (FILEs in rank order)
//
// --min-mbps: the codec chains' speed floor (CKPTFWD_CODEC_MIN_MBPS, 300 by default); 0
// makes auto's choice independent of how fast this machine runs the trials, for comparing
// two selectors on the same bytes.
// One JSON line per (scheme, group size) on stdout. The files are one batch (one
// checkpoint wave, as the forwarder seals it: one write_container call, one container)
// with cfg.group_size = g: the pipeline merges groups of g consecutive files (rank order), as
// CKPTFWD_GROUP_SIZE does in the forwarder. Scheme names are passed through unchecked:
// the pipeline decides what they mean. The batch is written twice, as a job's first
// checkpoint (codec chains tried) and as its next (chains remembered, as the forwarder
// does for a job); the second is measured and read back. One worker thread
// (cfg.writers = 1) and the process's CPU time, so the MB/s figures are per core. Exit
// status 1 when a batch fails or a file does not come back byte-exact (it says which), 2 on
// a usage error.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/json_text.h"
#include "forwarder/pipeline/codec_choice.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/util/worker_pool.h"
#include "schema/infer.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"

namespace {

using ckptfwd::json_quote;
namespace fs = std::filesystem;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of this process: the figures are MB/s per core, and other processes on the
// machine do not skew them (the machine is small and shared). The whole process, not the
// calling thread: write_container encodes, hashes and reads snapshots on its worker pool
// (Config.writers = 1: one worker beside this thread, which writes the container), so
// this thread's time alone left the encoding out and reported several GB/s.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

bool read_whole(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  out.resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(out.data()), out.size()));
}

struct Args {
  std::string set, work, schema;
  int min_mbps = -1;  // -1: the Config default
  std::vector<std::string> schemes{"agnostic", "agnostic-block", "aware", "aware-block", "auto"};
  std::vector<int> groups{1, 2, 4, 8, 16};
  std::vector<std::string> files;
};

bool parse_args(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    bool has_value = i + 1 < argc;
    if (s == "--set" && has_value) {
      a.set = argv[++i];
    } else if (s == "--work" && has_value) {
      a.work = argv[++i];
    } else if (s == "--schema" && has_value) {
      a.schema = argv[++i];
    } else if (s == "--min-mbps" && has_value) {
      a.min_mbps = atoi(argv[++i]);
    } else if (s == "--schemes" && has_value) {
      a.schemes = split_list(argv[++i]);
    } else if (s == "--groups" && has_value) {
      a.groups.clear();
      for (const std::string& g : split_list(argv[++i])) a.groups.push_back(std::stoi(g));
    } else if (!s.empty() && s[0] == '-') {
      return false;
    } else {
      a.files.push_back(fs::absolute(s).string());
    }
  }
  for (int g : a.groups)
    if (g < 1) return false;
  return !a.set.empty() && !a.work.empty() && !a.files.empty() && !a.schemes.empty();
}

// What one (scheme, group size) run measured.
struct Run {
  uint64_t raw = 0, stored = 0, mapped = 0, dedup = 0;
  int containers = 0, streams = 0;
  // compress_s: CPU time of write_container in a job's later checkpoints (codec choices
  // cached); first_s: in its first, which tries the codec chains of every variable;
  // next_job_s: the first checkpoint of another job on the same store, which takes the
  // chains the first job left in the store's CHAINS file.
  double compress_s = 0, first_s = 0, next_job_s = 0, wall_s = 0, decompress_s = 0;
  double first_trial_s = 0;  // of first_s, the CPU time of the codec chains' trials
  // After the first checkpoint's commit: the trials it deferred (CodecChoices::run_deferred,
  // as the forwarder's batcher runs them), whose chains the later checkpoints take.
  double deferred_trial_s = 0;
  // The first checkpoint's container (quick chains where it deferred trials).
  uint64_t first_stored = 0;
  std::string error;  // empty: every file came back byte-exact
};

// Writes the files as one batch merged in groups of g into a fresh store, reads every file
// back (timed) and compares it with its input. Before that, the next job's first checkpoint
// of the same bytes (a fresh CodecChoices on the first one's store) is timed too.
Run run_one(const Args& a, const ckptfwd::schema::Inferrer& inferrer,
            const std::vector<std::vector<uint8_t>>& inputs, const std::string& scheme, int g) {
  Run r;
  ckptfwd::Config cfg;
  cfg.scheme = scheme;
  cfg.group_size = g;
  cfg.writers = 1;
  cfg.schema = a.schema;
  if (a.min_mbps >= 0) cfg.codec_min_mbps = a.min_mbps;
  std::string store = a.work + "/store-" + a.set + "-" + scheme + "-g" + std::to_string(g);
  std::error_code ec;
  fs::remove_all(store, ec);
  std::vector<std::string> containers;
  ckptfwd::fwd::CodecChoices choices;
  {  // one batch: the checkpoint wave of every rank
    std::vector<ckptfwd::fwd::BatchFile> batch;
    for (size_t i = 0; i < a.files.size(); ++i) {
      struct stat st {};
      if (stat(a.files[i].c_str(), &st) != 0) {
        r.error = "cannot stat " + a.files[i];
        return r;
      }
      ckptfwd::fwd::BatchFile f;
      f.vid = i + 1;
      f.data_path = a.files[i];
      f.path = a.files[i];
      f.rank = static_cast<int>(i);
      f.mode = st.st_mode & 07777;
      f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      f.size = static_cast<uint64_t>(st.st_size);
      r.raw += f.size;
      batch.push_back(std::move(f));
    }
    ckptfwd::fwd::BatchResult res;
    std::string err;
    // The first checkpoint of the job (into a store of its own, removed), then the same
    // bytes again as its next checkpoint, which is the one measured and read back.
    const std::string node = "bench", first = store + "-first";
    // One write_container of the batch into `into` with the choices `with`; its CPU seconds added
    // to *cpu. After the first failure the later calls do nothing.
    // A job's checkpoints share its forwarder's worker threads (and the scratch memory
    // they keep); another job starts with threads of its own. pool == nullptr: a pool
    // made for the call, as a new forwarder's first batch finds it.
    bool ok = true;
    auto write = [&](const std::string& into, ckptfwd::fwd::CodecChoices& with,
                     ckptfwd::fwd::WorkerPool* pool, ckptfwd::fwd::BatchResult& result,
                     double* cpu) {
      const double c0 = cpu_s();
      ok = ok && ckptfwd::fwd::write_container(ckptfwd::fwd::ContainerJob{.cfg = cfg,
                                                                          .store = into,
                                                                          .node = node,
                                                                          .inferrer = &inferrer,
                                                                          .choices = &with,
                                                                          .workers = pool},
                                               batch, result, &err);
      *cpu += cpu_s() - c0;
    };
    ckptfwd::fwd::WorkerPool job_pool(cfg.writers);  // made before the clock starts
    write(first, choices, &job_pool, res, &r.first_s);
    r.first_trial_s = static_cast<double>(res.trial_cpu_ns) / 1e9;
    r.first_stored = res.bytes_stored;
    {
      const double c0 = cpu_s();
      if (choices.run_deferred() && !choices.remember(first, &err)) ok = false;
      r.deferred_trial_s = cpu_s() - c0;
    }
    ckptfwd::fwd::CodecChoices next_job;  // the next job's first checkpoint, same store
    ckptfwd::fwd::BatchResult next_res;
    write(first, next_job, nullptr, next_res, &r.next_job_s);
    fs::remove_all(first, ec);
    res = {};
    double t0 = now_s();
    write(store, choices, &job_pool, res, &r.compress_s);
    r.wall_s += now_s() - t0;
    if (!ok) {
      r.error = "write_container: " + err;
      return r;
    }
    r.stored += res.bytes_stored;
    r.dedup += res.dedup_bytes;
    r.streams += static_cast<int>(res.streams.size());
    for (uint64_t m : res.mapped) r.mapped += m;
    containers.push_back(store + "/" + res.container);
  }
  r.containers = static_cast<int>(containers.size());
  // Read back: every file of every container, into memory in one pass over its chunks
  // (read_files: what `ckptfwd restore` and a restart's read views do, hashes checked),
  // timed; the comparison with the input is not.
  std::vector<bool> seen(a.files.size(), false);
  std::vector<std::vector<uint8_t>> outs;
  for (const std::string& c : containers) {
    ckptfwd::ContainerReader rd;
    std::string err;
    double t0 = cpu_s();
    if (!rd.open(c, &err)) {
      r.error = "open " + c + ": " + err;
      return r;
    }
    r.decompress_s += cpu_s() - t0;
    // The destination is the caller's memory, sized and touched off the clock (as a
    // restore's page cache or a reused buffer is): this times the decoding, not the first
    // touch of fresh pages, which on a virtual machine costs about as much again.
    std::vector<size_t> all(rd.files().size());
    outs.resize(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      all[i] = i;
      outs[i].assign(rd.files()[i].size, 1);
    }
    std::vector<std::string> errs;
    t0 = cpu_s();
    const bool ok = rd.read_files(all, outs, errs);
    r.decompress_s += cpu_s() - t0;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string& path = rd.files()[i].path;
      if (!ok && !errs[i].empty()) {
        r.error = "read_files " + path + " from " + c + ": " + errs[i];
        return r;
      }
      const std::vector<uint8_t>& out = outs[i];
      size_t k = 0;
      while (k < a.files.size() && a.files[k] != path) ++k;
      if (k == a.files.size() || seen[k]) {
        r.error = c + " holds an unexpected file " + path;
        return r;
      }
      seen[k] = true;
      if (out != inputs[k]) {
        size_t at = 0;
        while (at < out.size() && at < inputs[k].size() && out[at] == inputs[k][at]) ++at;
        r.error = path + " restored from " + c + " differs from the input at byte " +
                  std::to_string(at) + " (restored " + std::to_string(out.size()) +
                  " bytes, input " + std::to_string(inputs[k].size()) + ")";
        return r;
      }
    }
  }
  for (size_t k = 0; k < seen.size(); ++k)
    if (!seen[k]) {
      r.error = "no container holds " + a.files[k];
      return r;
    }
  fs::remove_all(store, ec);
  return r;
}

double mbs(uint64_t bytes, double s) { return s > 0 ? bytes / 1e6 / s : 0; }

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, a)) {
    fprintf(stderr,
            "usage: bench_ratio_driver --set NAME --work DIR [--schema FILE] "
            "[--schemes a,b,..] [--groups 1,2,..] [--min-mbps N] FILE...\n");
    return 2;
  }
  ckptfwd::Config cfg;
  cfg.schema = a.schema;
  ckptfwd::schema::Inferrer inferrer;
  std::string err;
  if (!inferrer.configure(cfg, &err)) {
    fprintf(stderr, "bench_ratio_driver: %s\n", err.c_str());
    return 2;
  }
  std::vector<std::vector<uint8_t>> inputs(a.files.size());
  for (size_t i = 0; i < a.files.size(); ++i)
    if (!read_whole(a.files[i], inputs[i])) {
      fprintf(stderr, "bench_ratio_driver: cannot read %s\n", a.files[i].c_str());
      return 2;
    }
  fs::create_directories(a.work);
  int rc = 0;
  for (const std::string& scheme : a.schemes)
    for (int g : a.groups) {
      Run r = run_one(a, inferrer, inputs, scheme, g);
      printf("{\"kind\":\"ckptfwd\",\"set\":%s,\"scheme\":%s,\"group\":%d,\"files\":%zu,",
             json_quote(a.set).c_str(), json_quote(scheme).c_str(), g, a.files.size());
      if (!r.error.empty()) {
        printf("\"ok\":false,\"error\":%s}\n", json_quote(r.error).c_str());
        fprintf(stderr, "bench_ratio_driver: %s, scheme %s, group %d: %s\n", a.set.c_str(),
                scheme.c_str(), g, r.error.c_str());
        rc = 1;
      } else {
        printf(
            "\"ok\":true,\"containers\":%d,\"streams\":%d,\"dedup_bytes\":%llu,\"raw_bytes\":%llu,"
            "\"stored_bytes\":%llu,"
            "\"mapped_bytes\":%llu,\"ratio\":%.4f,\"compress_s\":%.4f,\"wall_s\":%.4f,"
            "\"decompress_s\":%.4f,\"compress_mbs\":%.2f,\"wall_mbs\":%.2f,"
            "\"decompress_mbs\":%.2f,\"compress_first_mbs\":%.2f,\"compress_next_job_mbs\":%.2f,"
            "\"first_s\":%.4f,\"first_trial_s\":%.4f,\"deferred_trial_s\":%.4f,"
            "\"first_ratio\":%.4f}\n",
            r.containers, r.streams, static_cast<unsigned long long>(r.dedup),
            static_cast<unsigned long long>(r.raw), static_cast<unsigned long long>(r.stored),
            static_cast<unsigned long long>(r.mapped), static_cast<double>(r.raw) / r.stored,
            r.compress_s, r.wall_s, r.decompress_s, mbs(r.raw, r.compress_s), mbs(r.raw, r.wall_s),
            mbs(r.raw, r.decompress_s), mbs(r.raw, r.first_s), mbs(r.raw, r.next_job_s), r.first_s,
            r.first_trial_s, r.deferred_trial_s,
            static_cast<double>(r.raw) / std::max<uint64_t>(1, r.first_stored));
      }
      fflush(stdout);
    }
  return rc;
}
