// A path cut at its runs of decimal digits: what the forwarder's checkpoint waves
// (forwarder/batching/waves.h) and `ckptfwd ls --steps` (tools/ckptfwd/checkpoint_steps.h)
// read a file's step and rank field from ("/c/step_0040/r0003.h5": runs 0040, 0003, 5).
#pragma once
#include <string>
#include <vector>

namespace ckptfwd {

// skeleton has each run replaced by '\0' (a byte no path holds, so two skeletons are equal
// only if the text between the runs is); runs are the digit runs in path order.
struct DigitSplit {
  std::string skeleton;
  std::vector<std::string> runs;
};
DigitSplit split_digits(const std::string& path);

// The run's value if it fits in an int (leading zeros allowed), else -1.
long run_value(const std::string& run);

}  // namespace ckptfwd
