// Checkpoints, not files: the live files of a store grouped into checkpoint steps
// (`ckptfwd ls --steps`, `ckptfwd restore --step N | --latest`).
//
// The rule, read from the paths and the rank each file's writer reported (FileEntry::rank),
// like the forwarder's checkpoint waves (forwarder/batching/waves.h) but over everything
// the store holds:
//   - A path is cut at its digit runs (common/path_digits.h); paths with the same text
//     between the runs form a series ("ckpt/step_#/r#.h5").
//   - A series' rank field is the one run that equals its writer's rank in every file of
//     the series with a known rank; when several do, the one with the most distinct
//     values (then the last). None (no rank known, or no run equals it): no rank field.
//   - A file's step is given by its other runs below the base directory (the capture
//     directory: digits of /scratch/u123/run2/ are nobody's step): the leftmost run that
//     differs between files of its series (with runs joined to it by single dots);
//     other runs that differ are fields of the checkpoint's files (a mesh level, a
//     subfile), said as a doubt. A series of one step takes the runs of a series of
//     several that shares its path up to them ("step_0040/meta.txt" beside
//     "step_<step>/r<rank>.h5"); alone, all its runs except an extension's (".h5"). Its label is
//     the path text from the first to the last of them
//     ("0040", OpenFOAM's time "0.005"); files of every series with equal labels (leading
//     zeros aside) are one checkpoint. A file with no step runs is in the checkpoint "-"
//     (files rewritten under the same name at every checkpoint, or not numbered at all).
//   - Checkpoints are ordered by their label read as a number (a decimal, or its runs one
//     by one), "-" first; equal labels by their newest file.
//   - A checkpoint is complete when, in each series it has, it holds as many files as the
//     step of that series that has the most, and it has every series all earlier numbered
//     checkpoints have (a header rank 0 writes last). A series written only every few
//     steps does not count. The latest complete checkpoint is the last complete one in
//     that order; a checkpoint older than an earlier-numbered one (names reused in turn)
//     gets a doubt.
// No I/O here: the caller gives each live file's path, rank, nodes and sizes.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace ckptfwd::cli {

struct StepFile {
  std::string path;
  int rank = -1;                // of the writer, -1 unknown
  std::set<std::string> nodes;  // that committed its layers
  uint64_t size = 0;
  uint64_t stored = 0;
  int64_t mtime_ns = 0;
};

struct Checkpoint {
  std::string step;           // its label, "-" for files with no step
  std::vector<size_t> files;  // indexes into the input, in path order
  std::set<int> ranks;        // writers' ranks, when known
  std::set<std::string> nodes;
  uint64_t bytes_in = 0, stored = 0;
  int64_t newest_mtime_ns = 0;
  std::vector<std::string> series;  // its series' patterns, "/c/step_<step>/r<rank>.h5"
  bool complete = true;
  std::string missing;  // when not complete: "3 of 4 files of /c/step_<step>/r<rank>.h5"
  // Why its step or its place in the order may be misread ("": none): prune refuses to
  // delete anything while a checkpoint has a doubt, ls and restore --latest say it.
  std::string doubt;
};

// The checkpoints of the files, in the order above. base: the directory the files were
// captured below; "" takes the parent of their common directory (one step of files in a
// step directory keeps its step).
std::vector<Checkpoint> group_checkpoints(const std::vector<StepFile>& files,
                                          const std::string& base = "");

// The index of the latest complete checkpoint, or -1 when none is complete.
int latest_complete(const std::vector<Checkpoint>& cps);

// Whether a label the user typed names checkpoint step: equal, or equal but for leading
// zeros of its runs ("40" names "0040"; "0.5" does not name "0.05").
bool step_matches(const std::string& step, const std::string& typed);

// The node a container was committed by, from its name "c-<node>-<ns>-<seq>.ckc" (as the
// forwarder names them); "" for a name of another form.
std::string container_node(const std::string& container);

}  // namespace ckptfwd::cli
