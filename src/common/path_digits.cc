#include "common/path_digits.h"

namespace ckptfwd {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

DigitSplit split_digits(const std::string& path) {
  DigitSplit d;
  for (size_t i = 0; i < path.size();) {
    if (!is_digit(path[i])) {
      d.skeleton += path[i++];
      continue;
    }
    size_t b = i;
    while (i < path.size() && is_digit(path[i])) ++i;
    d.runs.push_back(path.substr(b, i - b));
    d.skeleton += '\0';
  }
  return d;
}

long run_value(const std::string& run) {
  size_t i = run.find_first_not_of('0');
  if (i == std::string::npos) return 0;
  if (run.size() - i > 9) return -1;
  return std::stol(run.substr(i));
}

}  // namespace ckptfwd
