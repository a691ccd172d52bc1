// Bytes back out of the store: a catalog entry restored into an fd (starting bytes of a
// new write version) or into a cached read view r<hash>.data in the session dir.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

// e's live content (base plus overlays, store/manifest/materialize.h) into fd (fresh: fd
// is a file just created, empty).
bool restore_entry(const std::string& store, const CatalogEntry& e, int fd, std::string* err,
                   bool fresh = false);

// Where e's read view lives (whether or not it exists now): named after its container,
// file index and overlay list.
std::string read_view_of(const std::string& session_dir, const std::string& store,
                         const CatalogEntry& e);

// e's read view at view (read_view_of): reused when it already exists, else restored into a
// temporary and renamed into place (with the entry's permission bits when they let its
// owner read, else 0600), so concurrent readers never see a partial view.
// *restored tells whether this call did the restore. Returns view, or "" with *err on
// failure.
std::string ensure_read_view(const std::string& view, const std::string& store,
                             const CatalogEntry& e, bool* restored, std::string* err);

// ensure_read_view for several entries at once: views[k] of es[k]. Those not staged yet
// are restored together (materialize_entries: the files of one container that share
// chunks, a variable merged across ranks, decode each chunk once for all of them).
// got[k]: views[k], or "" with errs[k]; restored[k] whether this call restored it.
void ensure_read_views(const std::vector<std::string>& views, const std::string& store,
                       const std::vector<const CatalogEntry*>& es, std::vector<std::string>& got,
                       std::vector<bool>& restored, std::vector<std::string>& errs);

// True when view exists as a regular file of size bytes (a complete view: views appear by
// rename only).
bool read_view_ready(const std::string& view, uint64_t size);

// The open reader of container name in store, shared with the restores (the containers
// restored from last stay open with their decoded chunks); nullptr with *err.
std::shared_ptr<ContainerReader> recent_container(const std::string& store, const std::string& name,
                                                  std::string* err);

// Threads that decode one restored file's chunks (store/container/decode_ahead.h), for every
// container recent_container opens from now on: CKPTFWD_RESTORE_THREADS. Process-wide,
// like the recent containers themselves.
void set_restore_decode_threads(unsigned n);

// Deletes every r*.data (and leftover temporaries) in the session dir.
void remove_read_views(const std::string& session_dir);

}  // namespace ckptfwd::fwd
