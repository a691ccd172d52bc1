#include "store/container/content_hash.h"

#include <xxhash.h>

#if defined(__x86_64__)
#define XXH_DISPATCH_DISABLE_REPLACE  // name the dispatching entry points explicitly
#include <xxh_x86dispatch.h>
#endif

namespace ckptfwd {
namespace {

uint64_t xxh3(const void* p, size_t n) {
#if defined(__x86_64__)
  return XXH3_64bits_dispatch(p, n);
#else
  return XXH3_64bits(p, n);
#endif
}

void xxh3_update(XXH3_state_t* s, const void* p, size_t n) {
#if defined(__x86_64__)
  XXH3_64bits_update_dispatch(s, p, n);
#else
  XXH3_64bits_update(s, p, n);
#endif
}

}  // namespace

uint64_t content_hash(HashKind kind, const void* p, size_t n) {
  return kind == HashKind::kXxh3 ? xxh3(p, n) : XXH64(p, n, 0);
}

ContentHashStream::ContentHashStream(HashKind kind) : kind_(kind), state_(nullptr) {
  if (kind_ == HashKind::kXxh3) {
    XXH3_state_t* s = XXH3_createState();
    if (s) XXH3_64bits_reset(s);
    state_ = s;
  } else {
    XXH64_state_t* s = XXH64_createState();
    if (s) XXH64_reset(s, 0);
    state_ = s;
  }
}

ContentHashStream::~ContentHashStream() {
  if (!state_) return;
  if (kind_ == HashKind::kXxh3)
    XXH3_freeState(static_cast<XXH3_state_t*>(state_));
  else
    XXH64_freeState(static_cast<XXH64_state_t*>(state_));
}

void ContentHashStream::update(const void* p, size_t n) {
  if (kind_ == HashKind::kXxh3)
    xxh3_update(static_cast<XXH3_state_t*>(state_), p, n);
  else
    XXH64_update(static_cast<XXH64_state_t*>(state_), p, n);
}

uint64_t ContentHashStream::digest() const {
  return kind_ == HashKind::kXxh3 ? XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_))
                                  : XXH64_digest(static_cast<XXH64_state_t*>(state_));
}

}  // namespace ckptfwd
