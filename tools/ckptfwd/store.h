// Opening a store (or a single container) for the read-only commands, with error messages
// that say what the user most likely meant.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::cli {

struct Store {
  std::string dir;           // directory holding the containers
  Catalog catalog;           // replayed MANIFEST (or the files of the single container)
  bool single = false;       // opened from one .ckc file, no MANIFEST
  bool no_manifest = false;  // a store directory with containers but no MANIFEST
  std::string arg;           // what the user typed
  // Why the store's content may be forged, "" if it is ours: it (or its MANIFEST, or the
  // single container) belongs to another user, or the MANIFEST is a symbolic link. ls and
  // restore warn; verify fails (docs/semantics.md, "Other users on the node").
  std::string distrust;
};

// Prints an error naming the store and the fix, returns false, when arg is not a store.
// A directory holding containers (*.ckc) but no MANIFEST opens with an empty catalog and
// no_manifest set: the caller reports the containers as unreferenced.
// With history, the catalog keeps every superseded version its containers still hold
// (Catalog::history; `ls --versions`, `restore --version`); a single container has none.
bool open_store(const std::string& arg, Store& out, bool history = false);

// The container files (*.ckc, sorted) in a store directory; temporaries are not listed.
std::vector<std::string> container_files(const std::string& dir);

// The containers in st.dir that no MANIFEST record names (sorted).
std::vector<std::string> unreferenced_containers(const Store& st);

// Containers opened once per command. Names come from the manifest, so they are checked
// to be plain file names inside the store.
class ContainerCache {
 public:
  explicit ContainerCache(std::string dir) : dir_(std::move(dir)) {}
  // nullptr with *err set if the container cannot be used.
  ContainerReader* get(const std::string& name, std::string* err);
  std::string path_of(const std::string& name) const { return dir_ + "/" + name; }

 private:
  struct Slot {
    std::unique_ptr<ContainerReader> reader;
    std::string err;
  };
  std::string dir_;
  std::map<std::string, Slot> open_;
};

// "1.5 GiB", "312 B".
std::string human_bytes(unsigned long long n);

// The catalog's problems ("MANIFEST:<line>: reason") said once per reason, in the order
// they first came: "MANIFEST:<line>: reason" when one line has it, "MANIFEST: <n> lines
// (<first>..<last>): reason" when several do. Others pass as they are.
std::vector<std::string> grouped_problems(const std::vector<std::string>& problems);
// When st's MANIFEST has lines but none of them could be read as a record: what to say
// (its history is lost, or it is no MANIFEST), else "".
std::string unreadable_manifest(const Store& st);

}  // namespace ckptfwd::cli
