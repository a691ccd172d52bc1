// Start-up recovery: staged versions a killed forwarder left in the session dir
// (v<vid>.data + v<vid>.meta) are registered again as closed versions, so the batcher
// commits them. Nothing is lost. Leftover read views and temporaries are removed.
#pragma once
#include <cstddef>

#include "forwarder/core.h"

namespace ckptfwd::fwd {
// Returns how many versions were recovered.
size_t recover_staged(Core& c);
}  // namespace ckptfwd::fwd
