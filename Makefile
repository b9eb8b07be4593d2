# waitroom - top-level commands. See README.md.
#   make            build build/waitroomd (release, -Werror)
#   make run        install what is missing, build, start waitroomd on 127.0.0.1:8080
#                   (make run PORT=8081: on another port)
#   make test       install what is missing, build with ASan+UBSan, run every test (CTest);
#                   make test CTEST_ARGS="-R integration_memory" runs only those;
#                   CTEST_JOBS=N (default 3 x nproc) sets how many run at once
#   make bench      the benchmarks of docs/BENCHMARKS.md
#   make demo       the sale-day scenario without and with the line (demo-out/),
#                   with the server's default poll timing;
#                   make demo DEMO_USERS=2000 runs a smaller one,
#                   make demo DEMO_ARGS=--one-in-one-out caps the line at the pool,
#                   make demo DEMO_ARGS="--opens-in 10" a sale opening with a pre-queue,
#                   DEMO_ARGS="--sleepers 0.2" phones that sleep 3-6 min mid-wait,
#                   DEMO_ARGS="--stock 500" a sale that sells out
#   make format     clang-format every source file
#   make install    build, then install the binary, its man page, the systemd
#                   unit and the examples under PREFIX (/usr/local); DESTDIR
#                   stages it elsewhere (make install DESTDIR=/tmp/stage)
#   make uninstall  removes what make install lays down, with the same PREFIX
#                   and DESTDIR (scripts/uninstall.sh)
#   make deb        the Debian package: build/waitroom_VERSION_ARCH.deb (debian/,
#                   dpkg-buildpackage on a copy of the tree, then lintian;
#                   scripts/deb.sh); install it with apt install ./build/waitroom_*.deb

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# CTest's slots: three per core, since most integration time is waiting on
# ticks and timeouts (the timing-sensitive demos still run alone: RUN_SERIAL)
CTEST_JOBS ?= $(shell echo $$(( $(JOBS) * 3 )))
# make test's compile jobs: two per core (a compile waits on the disk too;
# on a machine another load keeps busy, more jobs get more of the CPU)
TEST_BUILD_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
BUILD ?= build
SANBUILD ?= build-san
DEMO_USERS ?= 10000
DEMO_OUT ?= demo-out
PREFIX ?= /usr/local
PORT ?= 8080
DEMO_ARGS ?=

.PHONY: all build deps run test test-release bench demo format clean install uninstall deb

all: build

deps:
	@scripts/deps.sh

build:
	@scripts/deps.sh build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# make run builds only the server (make builds every tool and test too)
run:
	@scripts/deps.sh build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@echo "building waitroomd (make run: the server only)"
	@cmake --build $(BUILD) -j $(JOBS) --target waitroomd
	@PORT="$(PORT)" scripts/run.sh

# make test: the plain build is only valgrind_integration's waitroomd (every
# other test runs the sanitizer build; deb_build makes the packager's build)
test: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(TEST_BUILD_JOBS) --target waitroomd
	@cmake -S . -B $(SANBUILD) -DCMAKE_BUILD_TYPE=Debug -DWR_SANITIZE=address,undefined \
	  -DWR_PLAIN_BUILD_DIR=$(CURDIR)/$(BUILD) >/dev/null
	@cmake --build $(SANBUILD) -j $(TEST_BUILD_JOBS)
	@cd $(SANBUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(CTEST_JOBS) $(CTEST_ARGS) \
	  || { python3 $(CURDIR)/scripts/test_failures.py . ; exit 1; }

test-release: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: build
	@scripts/bench.sh

demo: build
	@scripts/demo.sh --users $(DEMO_USERS) --bin $(BUILD) --out $(DEMO_OUT) $(DEMO_ARGS)

install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

uninstall:
	@scripts/uninstall.sh "$(BUILD)" "$(PREFIX)" "$(DESTDIR)"

deb:
	@WR_DEPS_EXTRA="debhelper lintian" scripts/deps.sh build
	@scripts/deb.sh $(BUILD)

format:
	@clang-format -i $$(find src -name "*.[ch]") $$(find tests/unit -name "*.c") tests/store/*.c tests/store/*.h tests/store/contract/*.[ch] \
	  examples/shop/*.c tools/sim/*.c tools/sim/*.h $(wildcard bench/*.c fuzz/*.c)

clean:
	rm -rf $(BUILD) $(SANBUILD)
