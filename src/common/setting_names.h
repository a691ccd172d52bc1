// The names of ckptfwd's settings, to tell a misspelt one (CKPTFWD_KEPP) from a variable
// a job script keeps under the same prefix for itself (CKPTFWD_HOME in examples/), which
// must not be warned about: only a name within a small edit distance of a known one is.
// Every CKPTFWD_* name the code reads is known (the forwarder's settings, the library's
// and the CLI's own, those a start or an exec passes on, the test switches, the variables
// of the tests, benchmarks, example scripts and module files);
// tests/unit/core_setting_names_test.cc checks that against the sources.
#pragma once
#include <string>

namespace ckptfwd {

// key: a name without the CKPTFWD_ prefix, any case.
bool is_setting_name(const std::string& key);
// The known name (without the prefix) key is a misspelling of: within 1 edit for names of
// up to 4 letters, 2 for longer ones, and not key itself; "" when none is that close.
std::string near_setting_name(const std::string& key);

}  // namespace ckptfwd
