// A live table cut to the terminal: whole lines, long lines counted as the rows they wrap
// into, and a line saying what was left out.
#include <gtest/gtest.h>

#include "stats_watch.h"

namespace ckptfwd::cli {
namespace {

TEST(StatsWatch, FitsTheTerminal) {
  std::string text = "a\nb\nc\nd\ne\n";
  EXPECT_EQ(fit_terminal(text, 10, 80), text);
  // 4 rows: 3 lines and the note.
  EXPECT_EQ(fit_terminal(text, 4, 80), "a\nb\nc\n(2 more lines: a taller terminal shows them)\n");
  // A line of 25 characters on a 10-column terminal takes 3 rows: with "b" the 4 rows
  // above the note are full.
  std::string wide = std::string(25, 'x') + "\nb\nc\n";
  EXPECT_EQ(fit_terminal(wide, 5, 10),
            wide.substr(0, 28) + "(1 more line: a taller terminal shows it)\n");
  // Size unknown: everything.
  EXPECT_EQ(fit_terminal(text, 0, 0), text);
}

}  // namespace
}  // namespace ckptfwd::cli
