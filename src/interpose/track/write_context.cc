#include "interpose/track/write_context.h"

namespace ckptfwd::interpose {
__thread bool t_fill_only __attribute__((tls_model("initial-exec")));
__thread uint8_t t_write_dtype __attribute__((tls_model("initial-exec"))) = 0;
__thread const ViewShape* t_write_view __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace ckptfwd::interpose
