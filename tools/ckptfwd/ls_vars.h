// `ckptfwd ls STORE --vars [-l] [--json]`: the live files' variable maps grouped by key
// (dtype, files, bytes, the chain and ratio of their merged streams, shapes and global
// shapes); with -l also each key's values summed up (elements, NaNs, min, max, as
// `bpls -l` shows them), read from the chunks that hold them, and the variables of files
// several nodes wrote, inferred on their stacked layers (stacked_file.h).
#pragma once
#include "store.h"

namespace ckptfwd::cli {

int list_vars(const Store& st, bool json, bool long_form);

}  // namespace ckptfwd::cli
