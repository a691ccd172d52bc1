// ckptfwd verify STORE | FILE.ckc
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <set>

#include "cli.h"
#include "restore_paths.h"
#include "store.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd verify STORE | FILE.ckc\n"
    "\n"
    "Checks a store: every MANIFEST line (checksum and syntax), every container named by a\n"
    "record (header, trailer, index checksum, bounds of every chunk and range), every chunk\n"
    "(checksum of the stored bytes, decompression, checksum of the raw bytes), that every\n"
    "file reassembles to its recorded checksum, and that every live catalog entry points\n"
    "at a file its container holds. Given a .ckc file, checks that one container.\n"
    "\n"
    "Prints one line per problem, e.g.\n"
    "  STORE/c-17.ckc: offset 4096: chunk 0 of stream 'agnostic': stored bytes do not match\n"
    "  their checksum (corrupt container)\n"
    "or, when all is well,\n"
    "  OK: N containers, M files, X bytes\n"
    "where M counts the file versions held by the containers and X their restored size.\n"
    "A superseded container that is gone (garbage-collected) is a note, not a problem.\n"
    "\n"
    "Exit status: 0 no problem, 1 any problem.\n";

}  // namespace

int cmd_verify(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store;
  for (const std::string& a : args) {
    if (!a.empty() && a[0] == '-') return usage_error("verify", "unknown option " + a);
    if (!store.empty()) return usage_error("verify", "more than one STORE given");
    store = a;
  }
  if (store.empty()) return usage_error("verify", "missing STORE");
  Store st;
  if (!open_store(store, st)) return 1;

  std::vector<std::string> problems;
  for (const std::string& p : st.catalog.problems()) problems.push_back(st.dir + "/" + p);

  std::set<std::string> live_containers;
  for (const auto& [p, e] : st.catalog.entries()) live_containers.insert(e.container);

  ContainerCache cache(st.dir);
  size_t n_containers = 0, n_files = 0;
  unsigned long long n_bytes = 0;
  for (const std::string& name : st.catalog.containers()) {
    std::string err;
    ContainerReader* r = cache.get(name, &err);
    if (!r) {
      bool gone = ::access(cache.path_of(name).c_str(), F_OK) != 0 && errno == ENOENT;
      if (gone && !live_containers.count(name)) {
        fprintf(stderr, "note: %s is gone; no live file needs it (garbage-collected)\n",
                printable(cache.path_of(name)).c_str());
        continue;
      }
      problems.push_back(err);
      continue;
    }
    ++n_containers;
    r->verify(problems);
    n_files += r->files().size();
    for (const FileEntry& f : r->files()) n_bytes += f.size;
  }
  // The catalog must point at files that exist, with the sizes it recorded.
  if (!st.single) {
    for (const auto& [p, e] : st.catalog.entries()) {
      ContainerReader* r = cache.get(e.container, nullptr);
      if (!r) continue;  // already reported above
      if (e.file_index >= r->files().size()) {
        problems.push_back(st.dir + "/MANIFEST: '" + p + "' points at file " +
                           std::to_string(e.file_index) + " of " + e.container + ", which holds " +
                           std::to_string(r->files().size()) + " files");
      } else if (r->files()[e.file_index].size != e.size) {
        problems.push_back(st.dir + "/MANIFEST: '" + p + "' records " + std::to_string(e.size) +
                           " bytes but " + e.container + " holds " +
                           std::to_string(r->files()[e.file_index].size));
      }
    }
  }
  for (const std::string& p : problems) printf("%s\n", printable(p).c_str());
  if (!problems.empty()) {
    printf("FAILED: %zu problems (%zu containers checked)\n", problems.size(), n_containers);
    return 1;
  }
  printf("OK: %zu containers, %zu files, %llu bytes\n", n_containers, n_files, n_bytes);
  return 0;
}

}  // namespace ckptfwd::cli
