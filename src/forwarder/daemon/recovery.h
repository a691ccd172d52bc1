// Start-up recovery: staged versions a killed forwarder left in the session dir
// (v<vid>.data + v<vid>.meta) are registered again as closed versions, so the batcher
// commits them. Nothing is lost. Leftover read views and temporaries are removed.
#pragma once
#include <cstddef>
#include <string>

#include "forwarder/core.h"

namespace ckptfwd::fwd {
// Returns how many versions were recovered.
size_t recover_staged(Core& c);

// Whether the session directory dir holds a staged version recover_staged would register
// again (its .data with a non-empty .meta), rather than only what it removes. Temporaries
// of cut-short copies are removed on the way, as recover_staged removes them.
bool holds_version_to_recover(const std::string& dir);
}  // namespace ckptfwd::fwd
