// `ckptfwd stats --watch`: the same output again every interval until Ctrl-C (or --count
// frames). On a terminal each frame clears the screen and redraws (a live table); into a
// pipe or file each frame is printed after the one before, with a time line between
// tables and no terminal codes (JSON: one object per frame, one per line).
#pragma once
#include <functional>
#include <string>

namespace ckptfwd::cli {

struct WatchOptions {
  double interval_s = 2;
  long count = 0;  // frames to print; 0: until Ctrl-C (SIGINT) or SIGTERM
  bool json = false;
  std::string title;  // the command, shown on top of a terminal frame
};

// A frame: its text into *out, or false with *err (the watch then stops, exit status 1).
using FrameFn = std::function<bool(std::string* out, std::string* err)>;

// The first lines of text that fit a terminal of rows x cols (a long line takes several
// rows), and a last line saying how many are left out: a redraw taller than the terminal
// would scroll its top away. rows <= 2 or cols <= 0 (size unknown): text as it is.
std::string fit_terminal(const std::string& text, int rows, int cols);

// Prints frames until stopped. Returns 0 when stopped by Ctrl-C or after count frames,
// 1 when a frame failed (its error printed).
int watch_frames(const WatchOptions& opt, const FrameFn& frame);

}  // namespace ckptfwd::cli
