#include "common/release.h"

namespace ckptfwd {

// (defined for this file only: a version change recompiles nothing else)
const char* release_version() { return CKPTFWD_RELEASE_VERSION; }

}  // namespace ckptfwd
