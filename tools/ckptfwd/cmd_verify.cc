// ckptfwd verify STORE | FILE.ckc
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

#include "cli.h"
#include "common/json_text.h"
#include "progress.h"
#include "restore_paths.h"
#include "store.h"
#include "store/manifest/manifest_end.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd verify [--json] STORE | FILE.ckc\n"
    "\n"
    "Checks a store: every MANIFEST line (checksum and syntax) and the chain that links each\n"
    "record to the one before it (a deleted, reordered or inserted line breaks it), that\n"
    "each container is the one its records name (size and index checksum: a container\n"
    "swapped with or copied over another is named), every container named by a\n"
    "record (header, trailer, index checksum, bounds of every chunk and range), every chunk\n"
    "(checksum of the stored bytes, decompression, checksum of the raw bytes; a reference\n"
    "chunk: that the container it names is there, is the one it names, and that the chunk\n"
    "there decodes to the checksum), that every\n"
    "file reassembles to its recorded checksum (for an overlay, the checksum of the bytes of\n"
    "its ranges), and that every live catalog entry (its base and each overlay) points at a\n"
    "file its container holds, of the size the MANIFEST records. Given a .ckc file, checks\n"
    "that one container (a file then passes with either kind of checksum).\n"
    "\n"
    "Prints one line per problem, e.g.\n"
    "  STORE/c-17.ckc: offset 4096: chunk 0 of stream 'agnostic': stored bytes do not match\n"
    "  their checksum (corrupt container)\n"
    "or, when all is well,\n"
    "  OK: N containers, M files, X bytes\n"
    "where M counts the file versions held by the containers and X their restored size.\n"
    "A superseded container that is gone (garbage-collected) is a note, not a problem.\n"
    "Records cut off the end of the MANIFEST, which the chain cannot show, are a problem\n"
    "naming the files they may have held: MANIFEST.tail records the MANIFEST's size and last\n"
    "record after each append, and a container is made read-only once the record naming\n"
    "it is durable, so a read-only container no record names is a lost record's.\n"
    "Other containers no record names: with a missing or empty MANIFEST each is a problem\n"
    "(the MANIFEST was lost: their files are not in the catalog); with a non-empty one each\n"
    "is a warning on stderr: a forwarder that stopped between a container's rename and its\n"
    "MANIFEST append leaves one behind (still writable; harmless).\n"
    "Records written before records were chained are reported as unchained (older format)\n"
    "and checked as before.\n"
    "\n"
    "  --json   one JSON object instead: {\"store\", \"ok\", \"containers\", \"files\",\n"
    "           \"bytes\", \"problems\": [...], \"warnings\": [...], \"notes\": [...]}\n"
    "           (docs/json.md); the exit status is the same\n"
    "\n"
    "Exit status: 0 no problem, 1 any problem.\n";

}  // namespace

int cmd_verify(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store;
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
      continue;
    }
    if (!a.empty() && a[0] == '-') return usage_error("verify", "unknown option " + a);
    if (!store.empty()) return usage_error("verify", "more than one STORE given");
    store = a;
  }
  if (store.empty()) return usage_error("verify", "missing STORE");
  Store st;
  if (!open_store(store, st)) return 1;

  std::vector<std::string> problems, warnings, notes;
  if (!st.distrust.empty()) problems.push_back(st.distrust);  // never "OK" for a foreign store
  for (const std::string& p : grouped_problems(st.catalog.problems()))
    problems.push_back(st.dir + "/" + p);
  if (std::string lost = unreadable_manifest(st); !lost.empty()) problems.push_back(lost);
  // Records cut off the MANIFEST's end (store/manifest/manifest_end.h): each container they
  // committed is a problem naming its files, not a warning.
  LostRecords lost;
  if (!st.single) lost = find_lost_records(st.dir, st.catalog);
  problems.insert(problems.end(), lost.problems.begin(), lost.problems.end());
  size_t n_records = st.catalog.chained_records() + st.catalog.unchained_records();
  for (const std::string& c : unreferenced_containers(st)) {
    if (std::find(lost.containers.begin(), lost.containers.end(), c) != lost.containers.end())
      continue;  // reported above
    std::string where = st.dir + "/" + c;
    if (n_records == 0) {
      problems.push_back(where + ": no MANIFEST record names this container (the MANIFEST is " +
                         (st.no_manifest ? "missing" : "empty") +
                         "): its files are not in the catalog");
    } else {
      warnings.push_back(where +
                         ": no MANIFEST record names this container (still writable: left by a "
                         "forwarder that stopped between its rename and its MANIFEST append, or "
                         "written before containers were made read-only; ckptfwd ls --all " +
                         where + " shows what it holds)");
    }
  }
  if (st.catalog.unchained_records() > 0)
    notes.push_back(st.dir + "/MANIFEST: " + std::to_string(st.catalog.unchained_records()) +
                    " records unchained (older format): checked line by line only");

  std::set<std::string> live_containers;
  for (const auto& [p, e] : st.catalog.entries()) add_containers_of(e, live_containers);

  ContainerCache cache(st.dir);
  size_t n_containers = 0, n_files = 0, n_seen = 0;
  unsigned long long n_bytes = 0, disk_seen = 0, disk_total = 0;
  for (const std::string& name : st.catalog.containers()) {
    struct stat s {};
    if (::stat(cache.path_of(name).c_str(), &s) == 0)
      disk_total += static_cast<uint64_t>(s.st_size);
  }
  Progress progress("verifying", "containers", st.catalog.containers().size(), disk_total);
  for (const std::string& name : st.catalog.containers()) {
    struct stat s {};
    if (::stat(cache.path_of(name).c_str(), &s) == 0) disk_seen += static_cast<uint64_t>(s.st_size);
    progress.update(++n_seen, disk_seen);
    std::string err;
    ContainerReader* r = cache.get(name, &err);
    if (!r) {
      bool gone = ::access(cache.path_of(name).c_str(), F_OK) != 0 && errno == ENOENT;
      if (gone && !live_containers.count(name)) {
        notes.push_back(cache.path_of(name) +
                        " is gone; no live file needs it (garbage-collected)");
        continue;
      }
      problems.push_back(err);
      continue;
    }
    ++n_containers;
    ContainerIdentity want = st.catalog.identity_of(name);
    if (!st.single && want.known() && r->identity() != want) {
      problems.push_back(cache.path_of(name) + ": not the container the MANIFEST records (" +
                         describe(r->identity()) + " on disk, the records say " + describe(want) +
                         "): swapped with or replaced by another container");
      continue;  // its files are not the ones the records name
    }
    if (st.single) {
      r->verify(problems);  // a lone container does not say which files are overlays
    } else {
      std::vector<bool> overlay(r->files().size());
      for (size_t i = 0; i < overlay.size(); ++i)
        overlay[i] = st.catalog.is_overlay(name, static_cast<uint32_t>(i));
      r->verify(problems, &overlay);
    }
    n_files += r->files().size();
    for (const FileEntry& f : r->files()) n_bytes += f.size;
  }
  progress.finish();
  // The catalog must point at files that exist, with the sizes it recorded: the base and
  // every overlay of each live entry.
  auto check_layer = [&](const std::string& p, const std::string& what, const std::string& c,
                         uint32_t index, uint64_t size) {
    ContainerReader* r = cache.get(c, nullptr);
    if (!r) return;  // already reported above
    ContainerIdentity want = st.catalog.identity_of(c);
    if (want.known() && r->identity() != want) return;  // reported above
    if (index >= r->files().size()) {
      problems.push_back(st.dir + "/MANIFEST: '" + p + "' " + what + " points at file " +
                         std::to_string(index) + " of " + c + ", which holds " +
                         std::to_string(r->files().size()) + " files");
    } else if (r->files()[index].size != size) {
      problems.push_back(st.dir + "/MANIFEST: '" + p + "' " + what + " records " +
                         std::to_string(size) + " bytes but " + c + " holds " +
                         std::to_string(r->files()[index].size));
    }
  };
  if (!st.single) {
    for (const auto& [p, e] : st.catalog.entries()) {
      if (!e.container.empty()) check_layer(p, "(base)", e.container, e.file_index, e.base_size);
      for (size_t i = 0; i < e.overlays.size(); ++i)
        check_layer(p, "(overlay " + std::to_string(i + 1) + ")", e.overlays[i].container,
                    e.overlays[i].file_index, e.overlays[i].size);
    }
  }
  if (json) {
    Json doc = {{"store", st.dir},      {"ok", problems.empty()}, {"containers", n_containers},
                {"files", n_files},     {"bytes", n_bytes},       {"problems", problems},
                {"warnings", warnings}, {"notes", notes}};
    printf("%s\n", json_text(doc).c_str());
    return problems.empty() ? 0 : 1;
  }
  // Warnings go to stderr (the store is fine; stdout says so), notes to stdout as before.
  for (const std::string& w : warnings) fprintf(stderr, "warning: %s\n", printable(w).c_str());
  for (const std::string& n : notes) printf("note: %s\n", printable(n).c_str());
  for (const std::string& p : problems) printf("%s\n", printable(p).c_str());
  if (!problems.empty()) {
    printf("FAILED: %zu problems (%zu containers checked)\n", problems.size(), n_containers);
    return 1;
  }
  printf("OK: %zu containers, %zu files, %llu bytes\n", n_containers, n_files, n_bytes);
  return 0;
}

}  // namespace ckptfwd::cli
