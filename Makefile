# fa: the two entry points. Both install what is missing, configure, build.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: run test build deps bench-deps clean bench bench-gfx906 bench-decode-gfx906 test-gpu fuzz sanitize install

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/run-example.sh $(BUILD)

test: build
	cmake --build $(BUILD) --target check-fa -j $(JOBS)

# Installs the runtime (headers, libraries, CMake package, fa-run) and the
# Python package `fa` with libfa_compile.so under PREFIX (then
# PYTHONPATH=$(PREFIX)/lib/python3/dist-packages, or a prefix on python3's
# path such as /usr/local, and `import fa`).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The GPU label: the e2e suite on an NVIDIA GPU (skipped without one).
test-gpu: build
	ctest --test-dir $(BUILD) -L gpu --output-on-failure

# The benchmark runs on an NVIDIA GPU machine (never in CI): build its
# inputs here, then run bench/gpu.sh there (it needs only CMake, ninja,
# the CUDA driver and PyTorch).
bench: build
	@bash bench/build-kernels.sh $(BUILD) $(BUILD)/sm90
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  bash bench/gpu.sh $(BUILD)/sm90 bench/results/$$(date +%F)-local; \
	else \
	  echo "bench: no NVIDIA GPU here. Copy the tree (with $(BUILD)/sm90) to a GPU machine and run:"; \
	  echo "  bash bench/gpu.sh $(BUILD)/sm90 bench/results/<date>-<gpu>"; \
	fi

# The gfx906 (MI50) benchmark, here: no MI50 runs it; the calibrated MI50
# timing model of fa's gfx906 simulator estimates the default kernels and
# their ablations (bench/gfx906.py; never a timed test). Builds fac and
# fa-run only. The chart needs matplotlib (Debian's python3-matplotlib for
# /usr/bin/python3, which bench-deps installs); without it the CSV and the
# summary are still written.
BENCH_PYTHON ?= $(shell /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && echo /usr/bin/python3 || echo python3)
bench-deps:
	@bash scripts/install-deps.sh --bench

# GGML=/path/to/ggml (or llama.cpp) adds, to this target and to
# bench-decode-gfx906, llama.cpp's FlashAttention kernels estimated on fa's
# shapes by the same models (bench/gfx906_vs_llama.py, docs/gfx906-timing.md);
# LLAMA_CLANG=clang-19 compiles them with the LLVM of ROCm 6.4 (Debian 12's
# clang-19, as the committed tables and v2's calibration do; default clang 22).
LLAMA_CLANG_ARG = $(if $(LLAMA_CLANG),--clang $(LLAMA_CLANG))
bench-gfx906: deps bench-deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target fac fa-run
	$(BENCH_PYTHON) bench/gfx906.py --build $(BUILD) --jobs 2 \
	  --out bench/results/$$(date +%F)-gfx906-sim
	$(if $(GGML),/usr/bin/python3 bench/gfx906_vs_llama.py --what prefill \
	  --ggml $(GGML) --build $(BUILD) $(LLAMA_CLANG_ARG) \
	  --out bench/results/$$(date +%F)-gfx906-vs-llama)
	$(if $(GGML),/usr/bin/python3 bench/gfx906_vs_llama.py \
	  --what prefill-dense --ggml $(GGML) --build $(BUILD) $(LLAMA_CLANG_ARG) \
	  --out bench/results/$$(date +%F)-gfx906-vs-llama)

# The decode estimate on gfx906 (bench/decode_gfx906.py; never a test):
# split-KV + GQA-packed kernels of several tiles, the split-only and dense
# baselines, at Lq=1 by the same MI50 timing model (about 10 minutes on 2
# cores). DECODE_GFX906_ARGS=--big adds B=32, Lk=32768 (~17 GB of RAM).
bench-decode-gfx906: deps bench-deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target fac fa-run
	$(BENCH_PYTHON) bench/decode_gfx906.py --build $(BUILD) --jobs 2 \
	  --out bench/results/$$(date +%F)-gfx906-decode $(DECODE_GFX906_ARGS)
	$(if $(GGML),/usr/bin/python3 bench/gfx906_vs_llama.py --what decode \
	  --ggml $(GGML) --build $(BUILD) $(LLAMA_CLANG_ARG) \
	  --out bench/results/$$(date +%F)-gfx906-vs-llama)

clean:
	rm -rf $(BUILD)

#===----------------------------------------------------------------------===#
# Fuzzing and sanitizers (clang-22, Debian's libclang-rt-22-dev; README.md).
#===----------------------------------------------------------------------===#
CLANG ?= /usr/lib/llvm-22/bin/clang
CLANGXX ?= /usr/lib/llvm-22/bin/clang++
FUZZ_BUILD ?= build-fuzz
ASAN_BUILD ?= build-asan
# Seconds of fuzzing per target; FUZZ_TARGETS picks a subset; FUZZ_FLAGS
# adds libFuzzer flags (e.g. "-fork=1 -ignore_crashes=1" to go on after a
# crash: fuzz-loader hits a known dlopen crash, fuzz/findings/README.md).
FUZZ_SECONDS ?= 60
FUZZ_FLAGS ?=
FUZZ_TARGETS ?= fuzz-manifest fuzz-run-args fuzz-loader fuzz-ir fuzz-sim-decode fuzz-sim-loader
# fuzz-loader writes a temporary copy of every code object it loads.
FUZZ_WORK ?= $(FUZZ_BUILD)/fuzz-work

# ASan's settings for both builds, and why:
# - detect_leaks=0: MLIR and LLVM keep their registries, pass pipelines and
#   uniqued storage in process-lifetime statics (by design, freed by the OS);
#   the leak report at exit would fail every run of fac and fa-opt. The
#   fuzz targets of the runtime (which has no such statics) run with
#   detect_leaks=1, so a leak there is a finding.
# - allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons unused slab
#   memory when its header is compiled with ASan (our code) but not inside
#   the uninstrumented libMLIR, whose copy hands that memory out without
#   unpoisoning it: false use-after-poison reports in MLIR attribute
#   storage (seen in fa-double-buffer). fa itself poisons nothing.
# (detect_odr_violation and detect_container_overflow stay on: the runtime
# tests and the fuzz corpora run clean with them.)
# The host emulator runs workgroup threads on fibers (runtime/lib/host/Fiber.cpp)
# that tell ASan about every stack switch (__sanitizer_start_switch_fiber),
# so fake stacks (detect_stack_use_after_return) need no special setting.
FA_ASAN_OPTIONS ?= detect_leaks=0:allow_user_poisoning=0:abort_on_error=1
FA_UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
# -O1 and line tables: readable reports, and MLIR-heavy files compile in a
# fraction of RelWithDebInfo's time. Assertions stay on (no NDEBUG), also
# those of the MLIR headers our code instantiates.
FA_SANITIZE_FLAGS = -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" \
  "-DCMAKE_C_FLAGS_RELEASE=-O1 -gline-tables-only"

$(FUZZ_BUILD)/build.ninja: | deps
	CC=$(CLANG) CXX=$(CLANGXX) cmake -S . -B $(FUZZ_BUILD) -G Ninja \
	  $(FA_SANITIZE_FLAGS) -DFA_FUZZ=ON

# Fuzzes each target for FUZZ_SECONDS, one after the other, in one process
# each (libFuzzer's -jobs would fork and log to ./fuzz-N.log), starting from
# its seed corpus and the regressions; new interesting inputs go to
# $(FUZZ_BUILD)/corpus/<target>, crashes to fuzz/regressions/<target>/.
fuzz: $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) --target fa-fuzzers -j $(JOBS)
	@mkdir -p $(FUZZ_WORK)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t fuzz/regressions/$$t; \
	  echo "== $$t: $(FUZZ_SECONDS) s"; \
	  leaks=1; [ $$t = fuzz-ir ] && leaks=0; \
	  TMPDIR=$(abspath $(FUZZ_WORK)) \
	  ASAN_OPTIONS=$(FA_ASAN_OPTIONS):detect_leaks=$$leaks \
	  UBSAN_OPTIONS=$(FA_UBSAN_OPTIONS) \
	  $(FUZZ_BUILD)/bin/$$t -max_total_time=$(FUZZ_SECONDS) \
	    -print_final_stats=1 -timeout=60 -rss_limit_mb=4096 $(FUZZ_FLAGS) \
	    -artifact_prefix=fuzz/regressions/$$t/ \
	    $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t fuzz/regressions/$$t \
	    || echo "== $$t: crash written to fuzz/regressions/$$t/"; \
	done

$(ASAN_BUILD)/build.ninja: | deps
	CC=$(CLANG) CXX=$(CLANGXX) cmake -S . -B $(ASAN_BUILD) -G Ninja \
	  $(FA_SANITIZE_FLAGS) -DFA_SANITIZE=ON

# The whole lit, unit and e2e suite (check-fa) under ASan and UBSan.
sanitize: $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=$(FA_ASAN_OPTIONS) UBSAN_OPTIONS=$(FA_UBSAN_OPTIONS) \
	  cmake --build $(ASAN_BUILD) --target check-fa -j $(JOBS)
