# exasim: every target does the set-up it needs on a fresh machine.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)
SCENARIO ?= configs/scenarios/gpt3-175b-a100-1024.yaml

.PHONY: all deps configure build demo test test-all bench asan clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/CMakeCache.txt || cmake --preset release >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/exasim run $(SCENARIO)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE slow

test-all: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD_DIR)/bench/exasim-engine-bench

asan: deps
	cmake --preset debug-asan >/dev/null && cmake --build build/debug-asan -j $(JOBS)
	cd build/debug-asan && ctest --output-on-failure -j $(JOBS) -LE slow

clean:
	rm -rf build
