// STORE/HOMES: the directories a store's files were captured under, so a run directory
// moved or copied with its store (cp -a run moved/) keeps its checkpoints.
//
// A store in its default place, DIR/.ckptfwd, holds files captured below DIR, recorded by
// their absolute paths. Moved to NEW/.ckptfwd, those paths name the old place: the
// application restarting in NEW would see none of its files. So every directory the
// store's capture directory ever was is a line of HOMES (text, one absolute directory per
// line, percent-encoded as MANIFEST fields), and the catalog replays the MANIFEST with
// each path below such a line read as below the store's capture directory now. A line
// "<from>\t<to>" (ckptfwd relocate, for a store elsewhere, CKPTFWD_STORE) maps from to to
// whatever the store's place.
//   - The forwarder writes the line of a new store's capture directory when it creates
//     the store, and adds its capture directory when it first loads a store whose HOMES
//     lacks it (the MANIFEST then gains records under the new place, the old ones stay
//     under the old: both are read as the new).
//   - A store of an earlier version has no HOMES: when none of its live files lies below
//     its capture directory, the former one is inferred (infer_former) and the forwarder
//     writes both lines.
//   - A path below the current capture directory is never mapped (a store moved into a
//     directory below its old one), nor one below a former place whose .ckptfwd is this
//     very directory (same device and inode): another path to the same store (a second
//     mount of a distributed file system, a symbolic link), not a move. Its files are
//     listed as recorded there.
// Mapping is the catalog's (manifest.h, Catalog::load): the MANIFEST, its chain and its
// checksums are never rewritten. A catalog that maps paths neither reads nor writes a
// snapshot (catalog_snapshot.h): a moved store is replayed whole.
#pragma once
#include <string>
#include <vector>

namespace ckptfwd::store_homes {

inline constexpr const char kName[] = "HOMES";

// The capture directory of a store in its default place: the parent of store_dir (made
// absolute against the working directory) when its last component is .ckptfwd, else "".
std::string capture_dir(const std::string& store_dir);

struct Move {
  std::string from, to;
};
// The moves HOMES gives for the store where it is now, longest `from` first; none that
// maps a directory to itself. *present: whether HOMES exists; *placed: whether it has
// the line "-" (a store the user placed, CKPTFWD_STORE: no capture directory of its own);
// *aliases (when not null) gets the former places that are other paths to this store.
std::vector<Move> read_moves(const std::string& store_dir, bool* present = nullptr,
                             bool* placed = nullptr, std::vector<std::string>* aliases = nullptr);
// Whether dir/.ckptfwd is store_dir itself (same device and inode).
bool same_store(const std::string& dir, const std::string& store_dir);
// path as the moves read it: below a move's `from` -> below its `to` (the longest from
// that matches), unless it is below capture_dir already ("" : none).
std::string apply(const std::vector<Move>& moves, const std::string& capture_dir,
                  const std::string& path);

// The former capture directory of a store whose live files (paths) all lie outside its
// capture directory cap: the ancestor A of their common directory whose trailing
// components match cap's most (at least the last one: a run directory moved or renamed
// keeps the name of its checkpoint directory), the deepest among equals; "" when none
// does, or some path is below cap.
std::string infer_former(const std::string& cap, const std::vector<std::string>& paths);

// A store in its default place that holds nothing yet (no MANIFEST, no HOMES) gets the
// line of its capture directory. Called by the forwarder before its first commit to a
// store in the default place (not for CKPTFWD_STORE: a directory named .ckptfwd there is
// no capture directory's).
// A store the user placed (CKPTFWD_STORE) gets the line "-" instead, so a directory named
// .ckptfwd there is never read as a capture directory's.
void note_new_store(const std::string& store_dir, bool user_placed = false);

// Records where a store in its default place is, before records naming paths as moves
// read them are appended: its capture directory and the former places moves map to it
// (so those records still name their files after another move). Nothing for a store
// elsewhere. False with *err when HOMES cannot be written.
bool add_place(const std::string& store_dir, const std::vector<Move>& moves, std::string* err);

// Adds to store_dir/HOMES the lines it lacks (one O_APPEND write; created 0600 when
// missing): a Move with an empty `to` is a bare line (a capture directory the store had),
// else a "<from>\t<to>" line. False with *err when it cannot be written.
bool add_lines(const std::string& store_dir, const std::vector<Move>& lines, std::string* err);

}  // namespace ckptfwd::store_homes
