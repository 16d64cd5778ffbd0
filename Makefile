# fa: the two entry points. Both install what is missing, configure, build.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: run test build deps clean bench test-gpu

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

clean:
	rm -rf $(BUILD)
