# Quick start:
#   make demo   installs missing system packages, builds Release, runs the demo
#   make test   builds and runs the whole suite (Release, the Python package, then ASan+UBSan)
JOBS ?= $(shell nproc)
BUILD ?= build/release
ASAN_BUILD ?= build/asan
CMAKE_FLAGS ?=

PYTHON ?= python3

.PHONY: setup build demo test test-release test-python test-pip test-asan install clean format

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSNN_BUILD_PYTHON=ON $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/examples/demo

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Under the sanitizers the op case tables run once (ops_avx512, which is
# capped to the CPU), not once per forced ISA: the Release run covers every ISA.

# The Python package built in the Release tree (the library is not compiled
# a second time) and tested with pytest; `pip install .` is the user's path.
test-python: build
	cmake -S . -B $(BUILD) -DOPSNN_BUILD_PYTHON=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target ops_nn_python scaled_swish_plugin opsnn_cli
	PYTHONPATH=$(BUILD)/python OPSNN_TEST_PLUGIN=$(BUILD)/examples/libscaled_swish_plugin.so \
	  OPSNN_CLI=$(BUILD)/tools/opsnn/opsnn $(PYTHON) -m pytest -q python/tests

# The user's path, opt-in (it compiles the library again): pip install . into
# a fresh virtual environment, then the quick-start line.
test-pip: setup
	rm -rf $(BUILD)-venv && $(PYTHON) -m venv $(BUILD)-venv
	$(BUILD)-venv/bin/pip install -q .
	cd /tmp && $(CURDIR)/$(BUILD)-venv/bin/python -c \
	  "import numpy as np, ops_nn; print(ops_nn.__version__, ops_nn.functional.gelu(np.ones((128, 128), np.float32)).shape)"

$(ASAN_BUILD)/build.ninja: | setup
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSNN_SANITIZE=ON \
	  -DOPSNN_BUILD_BENCH=OFF $(CMAKE_FLAGS)

test-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE slow -E '^ops_(scalar|avx2)$$'

test: test-release test-python test-asan

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build
