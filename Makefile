# Arbor developer commands. `make test` is the one CI runs (through .ci/run).

CARGO ?= cargo
SHARED ?= $(abspath $(CURDIR)/../shared)

# Spec-test vectors: $ARBOR_SPEC_TESTS when set (made absolute, since test binaries run from their
# crate's directory), else the archives in ../shared/spec-tests unpacked into target/spec-tests.
ifdef ARBOR_SPEC_TESTS
SPEC_TESTS_DIR := $(abspath $(ARBOR_SPEC_TESTS))
else
SPEC_TESTS_DIR := $(CURDIR)/target/spec-tests
endif

.PHONY: build release test spec-tests spec-vectors lint fmt bench fuzz clean

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --release --bin arbor

# Unpacks the vectors only when ARBOR_SPEC_TESTS is unset.
spec-vectors:
ifndef ARBOR_SPEC_TESTS
	@test -x "$(SHARED)/spec-tests/unpack.sh" || { echo "error: $(SHARED)/spec-tests/unpack.sh not found; set ARBOR_SPEC_TESTS to an unpacked vector directory" >&2; exit 1; }
	@"$(SHARED)/spec-tests/unpack.sh" "$(SPEC_TESTS_DIR)" >/dev/null
endif

# The consensus spec-test harness alone: one line per config/fork/runner.
spec-tests: spec-vectors
	ARBOR_SPEC_TESTS="$(SPEC_TESTS_DIR)" $(CARGO) test --package ef_tests --test spec_tests -- --nocapture

# Everything: unit, property and spec tests of every crate.
test: spec-vectors
	ARBOR_SPEC_TESTS="$(SPEC_TESTS_DIR)" $(CARGO) test --workspace --all-features --no-fail-fast

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	$(CARGO) bench --workspace

clean:
	$(CARGO) clean
