/* Preloaded into Debian's gmx (GROMACS 2022) by test_gromacs_checkpoint.sh on a machine
 * whose CPUID does not list rdtscp although the CPU executes it (the test probes that
 * first). Debian builds GROMACS to time with rdtscp, and `gmx mdrun` stops at start with
 * "compiled to use the rdtscp CPU instruction ... not supported by the current hardware"
 * when CPUID says so. GROMACS only warns when it could not read the CPU's features, so
 * this wraps gmx::CpuInfo::detect() (exported by libgromacs, called through its PLT) and
 * lowers the result's support level (the first member, an int: None 0, Name 1,
 * Features 2, LogicalProcessorInfo 3) to Name. Nothing else of the run changes: the
 * kernels GROMACS runs are chosen when it is built, not from this. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* CpuInfo is returned through a hidden pointer (it has a std::string), which the x86-64
 * ABI passes as the first argument and returns. */
void* _ZN3gmx7CpuInfo6detectEv(void* result) {
  void* (*real)(void*) = (void* (*)(void*))dlsym(RTLD_NEXT, "_ZN3gmx7CpuInfo6detectEv");
  if (!real) {
    fprintf(stderr, "gmx_rdtscp_shim: gmx::CpuInfo::detect not found\n");
    abort();
  }
  void* r = real(result);
  int* support_level = (int*)result;
  if (*support_level >= 2) *support_level = 1;
  return r;
}
