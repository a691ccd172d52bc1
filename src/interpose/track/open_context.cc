#include "interpose/track/open_context.h"

namespace ckptfwd::interpose {
__thread OpenContext t_open_context __attribute__((tls_model("initial-exec")));
}  // namespace ckptfwd::interpose
