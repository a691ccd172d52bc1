// The values of a variable's bytes, for `ckptfwd dump`: each element of a numeric dtype
// (base/dtype.h: I8 ... U64BE, F32LE ... F64BE) read in its byte order, printed exactly,
// and summed up in statistics.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"

namespace ckptfwd::cli {

// A numeric dtype's element reader: nullopt-like `ok` false for CHAR, STR<n>, CMP<n>,
// B<n>, bytes and unknown names (they have no numbers).
struct NumericDtype {
  bool ok = false;
  DtypeInfo info;
  // Element k of p (p holds at least (k + 1) * info.size bytes), as a double (integers of
  // more than 53 bits round), and as the text that reads back to the same value:
  // integers in full, float32 with 9 significant digits, float64 with 17.
  double value(const uint8_t* p, uint64_t k) const;
  std::string text(const uint8_t* p, uint64_t k) const;
};
NumericDtype numeric_dtype(const std::string& name);

// Elements, NaNs (not in min, max and mean) and the others' min, max and mean.
struct ValueStats {
  uint64_t count = 0, nans = 0;
  double min = 0, max = 0, sum = 0;
  void add(double v);
  void merge(const ValueStats& o);
  double mean() const { return count > nans ? sum / double(count - nans) : 0; }
};

}  // namespace ckptfwd::cli
