#include "interpose/wrap/real.h"

#include <dlfcn.h>
#include <errno.h>

#include <atomic>
#include <type_traits>

namespace ckptfwd::interpose::real {
namespace {

// Stand-in when a symbol is missing from this libc: fail like the call would on a kernel
// without it, instead of jumping to address 0.
template <class F>
struct Missing;
template <class R, class... A>
struct Missing<R (*)(A...)> {
  static R fn(A...) {
    errno = ENOSYS;
    if constexpr (std::is_pointer_v<R>)
      return nullptr;
    else if constexpr (!std::is_void_v<R>)
      return static_cast<R>(-1);
  }
};
template <class R, class... A>
struct Missing<R (*)(A..., ...)> {
  static R fn(A..., ...) {
    errno = ENOSYS;
    if constexpr (std::is_pointer_v<R>)
      return nullptr;
    else if constexpr (!std::is_void_v<R>)
      return static_cast<R>(-1);
  }
};

template <class F>
F resolve(std::atomic<F>& slot, const char* name) {
  F f = slot.load(std::memory_order_acquire);
  if (f) return f;
  int saved = errno;
  f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
  if (!f) f = &Missing<F>::fn;
  slot.store(f, std::memory_order_release);
  errno = saved;
  return f;
}

}  // namespace

#define REAL(ret, name, params)                    \
  static std::atomic<name##_fn> g_##name{nullptr}; \
  name##_fn name() { return resolve(g_##name, #name); }
#include "interpose/real_calls.def"
#undef REAL

void resolve_all() {
#define REAL(ret, name, params) (void)name();
#include "interpose/real_calls.def"
#undef REAL
}

}  // namespace ckptfwd::interpose::real
