// A byte vector whose resize leaves new bytes uninitialized.
//
// std::vector<uint8_t>::resize writes zeros over every byte it adds. For a buffer that is
// about to be overwritten whole (a chunk decoded into it, a file read into it) that is a
// wasted pass over memory, and for fresh memory it is the pass that takes the page faults
// the real writer would have taken anyway: on a virtual machine where a 4 KiB fault costs
// microseconds, the zero fill of decoded chunks was a fifth of a restore's CPU.
//
// Use it only where every byte is written before it is read; a reader of bytes nobody
// wrote sees garbage, not zeros.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace ckptfwd {

// std::allocator, except that a value-initialization (construct with no arguments) is
// turned into a default-initialization, which for bytes does nothing.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using UninitBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace ckptfwd
