# ckptfwd top-level driver. CMake does the building; this file is the user's interface.
# make deps | make | make test | make demo | make bench | make bench-ratio | make bench-scale |
# make bench-export | make bench-restore | make asan | make tsan |
# make install PREFIX=...
BUILD  ?= build
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
DEB_PKGS := mpich libmpich-dev libunwind-dev zlib1g-dev libfpzip-dev libxxhash-dev \
            libjemalloc-dev googletest libgtest-dev libzstd-dev libhdf5-dev cmake g++ \
            libhdf5-mpich-dev hdf5-tools netcdf-bin python3-h5py python3-numpy zstd \
            libopenmpi-dev openmpi-bin libhdf5-doc libncarg-data libblosc-dev libzfp-dev \
            python3-netcdf4 slurm-wlm munge nlohmann-json3-dev glusterfs-server glusterfs-client \
            lammps openfoam gromacs python3-matplotlib chromium-headless-shell
STAMP  := $(BUILD)/.deps-ok

.PHONY: all deps build test demo bench bench-ratio bench-scale bench-export bench-restore asan tsan fuzz install clean format
all: build

# `make`, `make build` and `make install` build with the libraries the machine has and never
# call apt-get (a site builds without root); the targets that run things (test, demo, the
# benchmarks, the sanitizer and fuzz builds) install the Debian packages first (make deps)
# and configure again, so a build directory made before them finds what they installed.
# The project's own builds turn warnings into errors (CKPTFWD_WERROR); a plain cmake does not.
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCKPTFWD_WERROR=ON
define deps_then_build
	@$(MAKE) --no-print-directory deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
endef

# Installs the Debian packages only when one is missing (dpkg-query is cheap). The stamp
# depends on this file, so a package added to DEB_PKGS is installed in an existing build dir.
deps: $(STAMP)
$(STAMP): Makefile
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p $(BUILD) && touch $@

# (configured every time: a build dir made by a plain cmake gets the project's flags too)
build:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

test:
	$(deps_then_build)
	@tests/run_all.sh $(BUILD)

demo:
	$(deps_then_build)
	@examples/run_demo.sh $(BUILD)

bench:
	$(deps_then_build)
	@tools/bench/run_bench.sh $(BUILD)

# Compression ratio and speed of the merge schemes against gzip/zstd/xz, Blosc, fpzip and
# zfp on the same bytes (data sets cached in $(BUILD)/bench-ratio-data/).
bench-ratio:
	$(deps_then_build)
	@tools/bench/bench_ratio.sh $(BUILD)

# The store's metadata against nodes and history: a restart's first open with 1 to 1,000
# checkpoints of history (catalog snapshot vs whole replay), commit latency per wave with
# 1 to 16 simulated nodes (BENCH_QUICK=1: smaller). Writes $(BUILD)/bench-scale.json/.svg.
bench-scale:
	$(deps_then_build)
	@tools/bench/bench_scale.sh $(BUILD) $(BUILD)/bench-scale $(BUILD)/bench-scale.json

# What `ckptfwd export` saves: the demo's global temperature field of its latest checkpoint
# as one array, exported to .npy (and .h5), against restoring the checkpoint's files and
# assembling it with numpy; every array checked bit for bit against a run without the
# library (BENCH_QUICK=1: 3 rounds). Writes $(BUILD)/bench-export.json/.svg.
bench-export:
	$(deps_then_build)
	@tools/bench/bench_export.sh $(BUILD) $(BUILD)/bench-export $(BUILD)/bench-export.json

# Restore, verify and restart of a checkpoint of 16 netCDF ranks merged across them into one
# container larger than a reader's cache of decoded chunks, against cp of the same files;
# every byte checked. Writes $(BUILD)/bench-restore-merged.json/.svg.
bench-restore:
	$(deps_then_build)
	@tools/bench/bench_restore_merged.sh $(BUILD) $(BUILD)/bench-restore-merged $(BUILD)/bench-restore-merged.json

# The forwarder runs as a daemon whose stderr is CKPTFWD_LOG, which a passing test deletes,
# and UBSan only prints: so every sanitizer report of every process (forwarder, CLI, unit
# tests) is written to build-asan/sanitizer/, and any report there fails the target.
# The preload library and the programs it is preloaded into are not instrumented (see
# CKPTFWD_SANITIZE in CMakeLists.txt): the ASan runtime would have to come first.
SAN_DIR := $(CURDIR)/build-asan/sanitizer
asan: $(STAMP)
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCKPTFWD_SANITIZE=ON -DCKPTFWD_WERROR=ON
	cmake --build build-asan -j $(JOBS)
	@rm -rf $(SAN_DIR) && mkdir -p $(SAN_DIR)
	@ASAN_OPTIONS=log_path=$(SAN_DIR)/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$(SAN_DIR)/ubsan \
	  tests/run_all.sh build-asan; rc=$$?; \
	reports=$$(ls $(SAN_DIR)); \
	if [ -n "$$reports" ]; then \
	  for r in $$reports; do echo "== sanitizer report $(SAN_DIR)/$$r"; head -40 $(SAN_DIR)/$$r; done; \
	  echo "make asan: sanitizer reports in $(SAN_DIR) (see above)"; exit 1; \
	fi; exit $$rc

# ThreadSanitizer on the forwarder, the CLI and the unit tests (the preload library stays
# uninstrumented, as under asan). Reports go to build-tsan/sanitizer/ and fail the target;
# tests/tsan.supp holds the suppressions, each with its reason.
# ThreadSanitizer instruments every memory access: one unit test
# (TypedCodec.EveryChainRoundTripsEveryDtypeBitExact) took 191 s of CPU, 6 s in the
# ordinary build, and 638 s on a loaded 2-core machine, past run_all.sh's 300 s per test;
# so each test here (a ctest test or a script) has TSAN_TEST_TIMEOUT seconds.
TSAN_DIR := $(CURDIR)/build-tsan/sanitizer
TSAN_TEST_TIMEOUT ?= 1500
tsan: $(STAMP)
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCKPTFWD_TSAN=ON -DCKPTFWD_WERROR=ON
	cmake --build build-tsan -j $(JOBS)
	@rm -rf $(TSAN_DIR) && mkdir -p $(TSAN_DIR)
	@TSAN_OPTIONS="log_path=$(TSAN_DIR)/tsan suppressions=$(CURDIR)/tests/tsan.supp second_deadlock_stack=1" \
	  CKPTFWD_TEST_TIMEOUT=$(TSAN_TEST_TIMEOUT) tests/run_all.sh build-tsan; rc=$$?; \
	reports=$$(ls $(TSAN_DIR)); \
	if [ -n "$$reports" ]; then \
	  for r in $$reports; do echo "== sanitizer report $(TSAN_DIR)/$$r"; head -60 $(TSAN_DIR)/$$r; done; \
	  echo "make tsan: sanitizer reports in $(TSAN_DIR) (see above)"; exit 1; \
	fi; exit $$rc

# Fuzz the parsers of untrusted bytes (containers, codec chunks, manifest, netCDF classic
# headers, LAMMPS restart files, OpenFOAM binary fields, GROMACS checkpoints, schemas and the files they split,
# the HDF5 inference path with its helper process, group frames, a session's lease journal)
# for FUZZ_SECONDS each.
# Each run's output goes to build-fuzz/fuzz_<target>.log (its end is shown) and a crashing
# input to build-fuzz/crash-*; the fuzzer's own exit status is make's (sh has no pipefail,
# so it is not piped into tail).
FUZZ_SECONDS ?= 60
fuzz: $(STAMP)
	@command -v clang++ >/dev/null || { echo "make fuzz needs clang: apt-get install clang libclang-rt-14-dev"; exit 2; }
	CXX=clang++ CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCKPTFWD_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzz_container fuzz_codec fuzz_manifest fuzz_netcdf fuzz_lammps fuzz_openfoam fuzz_gromacs fuzz_schema fuzz_hdf5 fuzz_group fuzz_lease_journal ckptfwd-h5infer
	@for t in container codec manifest netcdf lammps openfoam gromacs schema hdf5 group lease_journal; do \
	  mkdir -p build-fuzz/corpus/$$t; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s, log build-fuzz/fuzz_$$t.log"; \
	  build-fuzz/bin/fuzz_$$t build-fuzz/corpus/$$t tests/fuzz/seeds/$$t \
	    -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -artifact_prefix=build-fuzz/ \
	    >build-fuzz/fuzz_$$t.log 2>&1; rc=$$?; \
	  grep -E '^#[0-9]+' build-fuzz/fuzz_$$t.log | tail -1; tail -1 build-fuzz/fuzz_$$t.log; \
	  [ $$rc -eq 0 ] || { tail -40 build-fuzz/fuzz_$$t.log; echo "fuzz_$$t failed (exit $$rc)"; exit 1; }; \
	done

# (no root needed for a prefix of yours: tools/install/CMakeLists.txt lists what goes where)
install: build
	cmake --install $(BUILD) --prefix $(PREFIX) --strip

format:
	find src tools tests examples -name '*.cc' -o -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-fuzz
