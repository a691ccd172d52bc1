#include "forwarder/util/test_hooks.h"

namespace ckptfwd::fwd {

TestHooks& test_hooks() {
  static TestHooks hooks;
  return hooks;
}

void clear_test_hooks() { test_hooks() = TestHooks{}; }

}  // namespace ckptfwd::fwd
