#include "interpose/write_context.h"

namespace ckptfwd::interpose {
__thread uint8_t t_write_dtype __attribute__((tls_model("initial-exec"))) = 0;
}
