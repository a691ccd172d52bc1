// ckptfwd-h5infer FILE: prints the variable map of the HDF5 file FILE (binary encoding of
// store/container/variable_map.h) on stdout and exits 0; any failure: a message on stderr and a
// non-zero exit. (`ckptfwd inspect FILE` shows the same map readably.)
//
// The forwarder runs this program per sealed HDF5 file (schema/hdf5_client.h) so that a
// file which crashes, hangs or exhausts the HDF5 library costs only its own inference.
// The limits below are set before the file is touched; the parent enforces the wall-clock
// limit and bounds the output.
#include <hdf5.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "schema/h5infer/h5infer_file.h"

namespace {

constexpr uint64_t kAddressSpace = 2ull << 30;  // enough for any sane file's metadata
constexpr rlim_t kCpuSeconds = 60;              // backstop; the parent's timeout is shorter

// Under AddressSanitizer the shadow memory alone is far above any address-space limit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLimitAddressSpace = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif
#else
constexpr bool kLimitAddressSpace = true;
#endif

void set_limit(int what, rlim_t soft, rlim_t hard) {
  struct rlimit r {
    soft, hard
  };
  setrlimit(what, &r);  // best effort: the parent's timeout still holds
}

// Descriptors a careless parent left open (sockets, staged files) are none of ours.
void close_inherited_fds() {
  if (close_range(3, ~0u, 0) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);
  for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); ++fd) close(static_cast<int>(fd));
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int usage() {
  fprintf(stderr, "usage: ckptfwd-h5infer [--] FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  close_inherited_fds();
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_CPU, kCpuSeconds, kCpuSeconds + 1);
  if (kLimitAddressSpace) set_limit(RLIMIT_AS, kAddressSpace, kAddressSpace);

  int i = 1;
  if (i < argc && strcmp(argv[i], "--") == 0) ++i;  // FILE may begin with '-'
  if (i + 1 != argc) return usage();
  const std::string file = argv[i];

  // The library's error stack would print on stderr, whose first line is our reason.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  ckptfwd::VariableMap m;
  std::string err;
  if (!ckptfwd::h5infer::infer_file(file, m, &err)) {
    fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  std::vector<uint8_t> out;
  ckptfwd::encode_variable_map(m, out);
  if (!write_all(1, out.data(), out.size())) {
    fprintf(stderr, "%s: writing the map failed: %s\n", file.c_str(), strerror(errno));
    return 1;
  }
  return 0;
}
