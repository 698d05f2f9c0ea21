# Quick start:
#   make demo   installs missing system packages, builds Release, runs the demo
#   make test   builds and runs the whole suite (Release; `pip install .` into a fresh venv + pytest; ASan+UBSan)
JOBS ?= $(shell nproc)
BUILD ?= build/release
ASAN_BUILD ?= build/asan
CMAKE_FLAGS ?=

PYTHON ?= python3
# `pip install .` builds here (scikit-build-core's build-dir), kept between runs;
# at the Release tree's depth, so ccache's relative paths give the same keys.
PIP_BUILD ?= $(BUILD)-pip
PIP_VENV ?= $(BUILD)-venv
WHEELS ?= $(BUILD)-wheels

# With ccache (scripts/setup.sh installs it; looked up when a tree is
# configured, after setup ran), the pip build reuses the objects the Release
# tree compiled (same sources, flags and compiler) instead of compiling the
# library a second time. Paths are hashed relative to the repository.
launcher = -DCMAKE_CXX_COMPILER_LAUNCHER=$$(command -v ccache)
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
# The pip build uses the Release tree's compiler and launcher: scikit-build-core
# would take CXX from Python's sysconfig (g++, or x86_64-linux-gnu-g++ on
# Debian), and ccache keys on the compiler's name.
release_cache = $(shell sed -n 's/^$(1):[A-Z]*=//p' $(BUILD)/CMakeCache.txt)
pip_build = CXX=$(call release_cache,CMAKE_CXX_COMPILER) \
  CMAKE_CXX_COMPILER_LAUNCHER=$(call release_cache,CMAKE_CXX_COMPILER_LAUNCHER) \
  CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(1) --disable-pip-version-check --no-build-isolation \
  -C build-dir=$(PIP_BUILD) .

.PHONY: setup build demo test test-release test-python test-pip test-asan wheel install clean format

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSNN_BUILD_PYTHON=ON $(launcher) \
	  $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/examples/demo

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Under the sanitizers the op case tables and the allocation count run once,
# on the CPU's best ISA, not once per forced ISA: the Release run covers
# every ISA. Forced ISAs the CPU lacks are skipped everywhere (exit code 77).

# For development: the Python package built in the Release tree (the library
# is not compiled a second time) and tested with pytest.
test-python: build
	cmake -S . -B $(BUILD) -DOPSNN_BUILD_PYTHON=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target ops_nn_python scaled_swish_plugin opsnn_cli
	PYTHONPATH=$(BUILD)/python OPSNN_TEST_PLUGIN=$(BUILD)/examples/libscaled_swish_plugin.so \
	  OPSNN_CLI=$(BUILD)/tools/opsnn/opsnn $(PYTHON) -m pytest -q python/tests

# The user's path: `pip install .` into a fresh virtual environment (which
# sees the packages scripts/setup_python.sh installed), then pytest run from
# outside the source tree against the installed package.
test-pip: build
	rm -rf $(PIP_VENV) && $(PYTHON) -m venv --system-site-packages $(PIP_VENV)
	$(call pip_build,$(PIP_VENV)/bin/pip install -q)
	cd $(PIP_VENV) && bin/python -c "import ops_nn, sys; \
	  sys.exit(0 if ops_nn.__file__.startswith(sys.prefix) else 'ops_nn not from the venv: ' + ops_nn.__file__)"
	cd $(PIP_VENV) && OPSNN_TEST_PLUGIN=$(CURDIR)/$(BUILD)/examples/libscaled_swish_plugin.so \
	  OPSNN_CLI=$(CURDIR)/$(BUILD)/tools/opsnn/opsnn bin/python -m pytest -q $(CURDIR)/python/tests

$(ASAN_BUILD)/build.ninja: | setup
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSNN_SANITIZE=ON \
	  -DOPSNN_BUILD_BENCH=OFF $(launcher) $(CMAKE_FLAGS)

test-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	best=$$($(ASAN_BUILD)/tools/opsnn/opsnn ops | sed -n '1s/.*active ISA \([a-z0-9]*\).*/\1/p'); \
	others=$$(printf 'scalar\navx2\navx512\n' | grep -vx "$$best" | paste -sd'|'); \
	echo "sanitizer run: op case tables and allocation count on $$best only"; \
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE slow -E "^(ops|alloc_free_run)_($$others)$$"

test: test-release test-pip test-asan

# A wheel that pip installs on other Linux x86-64 machines: `pip wheel .`
# tags it linux_x86_64; auditwheel copies in the shared libraries it needs
# from outside the manylinux set (libprotobuf) and retags it manylinux.
wheel: build
	rm -rf $(WHEELS)
	$(call pip_build,$(PYTHON) -m pip wheel -q --no-deps -w $(WHEELS)/linux)
	PATH="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$$PATH" \
	  $(PYTHON) -m auditwheel repair -w $(WHEELS) $(WHEELS)/linux/ops_nn-*.whl
	$(PYTHON) -m auditwheel show $(WHEELS)/ops_nn-*manylinux*.whl

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf build
