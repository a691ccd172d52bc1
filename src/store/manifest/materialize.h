// A catalog entry turned into bytes: its base restored, then its overlays applied in
// manifest order (see "Overlays" in manifest.h). The one place that knows how layers
// combine; the CLI's restore and the forwarder's read views and write opens all use it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd {

// The open reader of a container named by the MANIFEST, or nullptr with *err set.
// Lets a caller that restores many files open each container once.
using ContainerSource = std::function<ContainerReader*(const std::string& name, std::string* err)>;

// Writes e's live content into fd (from offset 0; fd's old content is truncated away):
// the base with restore_file (or nothing when e has no base), each overlay with
// overlay_file, then fd extended to e.size if it is shorter. Every hash is checked. On
// failure fd holds partial content (the caller discards it) and *err names the layer,
// its container and, for a bad chunk, the byte offset in that container. fresh: fd is
// empty already (a file just created), so it is not truncated first.
bool materialize_entry(const CatalogEntry& e, const ContainerSource& containers, int fd,
                       std::string* err, bool fresh = false);

// Entries es[k] into fds[k] (each empty, a file just created), as materialize_entry does
// them one by one, with errs[k] "" or its error. The bases of entries without overlays
// that lie in one container are restored together (ContainerReader::restore_files): a
// variable merged across ranks has chunks holding pieces of several files, which a
// restore file after file decodes again for each once they outgrow the reader's cache.
// True when every entry came out whole.
bool materialize_entries(const std::vector<const CatalogEntry*>& es,
                         const ContainerSource& containers, const std::vector<int>& fds,
                         std::vector<std::string>& errs);

// Same, opening containers from store_dir (each once per call). Container names must be
// plain file names inside the store: anything else is an error, never a path outside.
bool materialize_entry(const std::string& store_dir, const CatalogEntry& e, int fd,
                       std::string* err);

// True when name can be a container inside a store: not empty, ".", ".." and no '/'.
bool is_plain_container_name(const std::string& name);

}  // namespace ckptfwd
