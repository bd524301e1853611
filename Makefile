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

# The Lodestar state-transition oracle (differential tests of state_processing): installed from
# $(SHARED)/oracles/lodestar into target/, or $ORACLE_DIR. Needs node >= 20 and npm; `make test`
# fails without them rather than skipping the differential test.
ORACLE_DIR ?= $(CURDIR)/target/lodestar-oracle

.PHONY: build release run test spec-tests spec-vectors gloas-vectors oracle lodestar-roots lint fmt bench fuzz clean test-interop simulate test-conformance test-conformance-gloas

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --release --bin arbor

# A local Fulu devnet in one process (mock execution client with blobs, a supernode beacon node,
# a validator client over the Beacon API on 127.0.0.1:5052). Options after `ARGS=`, e.g.
# `make run ARGS="--validators 128 --blobs 9 --seconds-per-slot 4"`; `arbor dev --help` lists them.
ARGS ?=
run: release
	./target/release/arbor dev $(ARGS)

# Archives that unpack.sh does not take (extra/: Electra's runners, minimal preset). They unpack
# into the same tests/ tree after the main set; the stamp lives inside tests/, so it goes whenever
# unpack.sh replaces that tree, and it names both sets: a changed extra archive unpacks the whole
# tree afresh (no stale cases left behind).
SPEC_EXTRA_DIR := $(SHARED)/spec-tests/extra

# Unpacks the vectors only when ARBOR_SPEC_TESTS is unset.
spec-vectors:
ifndef ARBOR_SPEC_TESTS
	@test -x "$(SHARED)/spec-tests/unpack.sh" || { echo "error: $(SHARED)/spec-tests/unpack.sh not found; set ARBOR_SPEC_TESTS to an unpacked vector directory" >&2; exit 1; }
	@"$(SHARED)/spec-tests/unpack.sh" "$(SPEC_TESTS_DIR)" >/dev/null
	@set -eu; dest="$(SPEC_TESTS_DIR)"; stamp="$$dest/tests/.unpacked-extra"; \
	if ls "$(SPEC_EXTRA_DIR)"/*.tar.xz >/dev/null 2>&1; then \
	  want="$$(cat "$$dest/.unpacked-from")-$$(cd "$(SPEC_EXTRA_DIR)" && sha256sum ./*.tar.xz | sha256sum | cut -c1-16)"; \
	  if [ ! -f "$$stamp" ] || [ "$$(cat "$$stamp")" != "$$want" ]; then \
	    if [ -f "$$stamp" ]; then rm -rf "$$dest/tests"; "$(SHARED)/spec-tests/unpack.sh" "$$dest" >/dev/null; fi; \
	    for a in "$(SPEC_EXTRA_DIR)"/*.tar.xz; do tar -C "$$dest" -xJf "$$a"; done; \
	    echo "$$want" >"$$stamp"; \
	  fi; \
	fi
endif

# The Gloas vectors (minimal preset): unpacked apart from the others, into $ARBOR_GLOAS_VECTORS or
# target/gloas-vectors, for the ef_tests harness (a second vector root; the runners later Gloas
# issues deliver are on its allow list) and consensus/types/tests/gloas_ssz_static.rs.
# Re-unpacked only when the archive changes.
GLOAS_ARCHIVE := $(SHARED)/spec-tests/gloas/minimal-gloas.tar.xz
ifdef ARBOR_GLOAS_VECTORS
GLOAS_VECTORS_DIR := $(abspath $(ARBOR_GLOAS_VECTORS))
else
GLOAS_VECTORS_DIR := $(CURDIR)/target/gloas-vectors
endif

gloas-vectors:
	@test -f "$(GLOAS_ARCHIVE)" || { echo "error: $(GLOAS_ARCHIVE) not found" >&2; exit 1; }
	@set -eu; dest="$(GLOAS_VECTORS_DIR)"; stamp="$$dest/.unpacked-from"; \
	want="$$(sha256sum "$(GLOAS_ARCHIVE)" | cut -c1-16)"; \
	if [ ! -f "$$stamp" ] || [ "$$(cat "$$stamp")" != "$$want" ] || [ ! -d "$$dest/tests" ]; then \
	  rm -rf "$$dest/tests"; mkdir -p "$$dest"; tar -C "$$dest" -xJf "$(GLOAS_ARCHIVE)"; \
	  echo "$$want" >"$$stamp"; \
	fi

oracle:
	@command -v node >/dev/null 2>&1 || { echo "error: node (>= 20) not found; the state_processing oracle test needs it (and npm)" >&2; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "error: npm not found; the state_processing oracle test needs it to install the Lodestar oracle" >&2; exit 1; }
	@test -x "$(SHARED)/oracles/lodestar/install.sh" || { echo "error: $(SHARED)/oracles/lodestar/install.sh not found" >&2; exit 1; }
	@ORACLE_DIR="$(ORACLE_DIR)" "$(SHARED)/oracles/lodestar/install.sh"

# Gloas hash tree roots checked by another implementation (testing/lodestar_roots): npm
# @lodestar/types 1.50.0, pinned in testing/lodestar_roots/js, installed into target/ (or
# $LODESTAR_ROOTS_DIR). Needs node >= 20 and npm; `make test` fails without them.
LODESTAR_ROOTS_DIR ?= $(CURDIR)/target/lodestar-roots

lodestar-roots:
	@testing/lodestar_roots/js/install.sh "$(LODESTAR_ROOTS_DIR)" >/dev/null

# The consensus spec-test harness alone: one line per config/fork/runner.
spec-tests: spec-vectors gloas-vectors
	ARBOR_SPEC_TESTS="$(SPEC_TESTS_DIR)" ARBOR_GLOAS_VECTORS="$(GLOAS_VECTORS_DIR)" $(CARGO) test --package ef_tests --test spec_tests -- --nocapture

# Everything: unit, property and spec tests of every crate. `cargo test --workspace
# --all-features`, built once, its test binaries run by scripts/run_tests.py: one after another
# by default, as `cargo test` runs them; TEST_JOBS=3 runs the devnets on a lane of their own
# beside two lanes of the rest under `nice` (41 % less time here, but two of three such runs had
# a test with a real-time deadline miss it: not CI's default until runs are clean).
# Each binary's output: target/test-logs/runner/.
TEST_JOBS ?= 1
test: spec-vectors gloas-vectors oracle lodestar-roots
	ARBOR_SPEC_TESTS="$(SPEC_TESTS_DIR)" ARBOR_GLOAS_VECTORS="$(GLOAS_VECTORS_DIR)" ARBOR_LODESTAR_ORACLE="$(ORACLE_DIR)" ARBOR_LODESTAR_ROOTS="$(LODESTAR_ROOTS_DIR)" python3 scripts/run_tests.py --cargo "$(CARGO)" --jobs $(TEST_JOBS) -- --workspace --all-features

# Networking against an independent implementation: installs the js-libp2p peer
# (networking/interop, from npm, into target/interop-js; needs node >= 20 and npm) and runs it
# against an Arbor network instance (discv5, TCP with yamux and with mplex, gossip, req/resp).
# `--workspace --all-features` as in `make test`: the test binaries `make test` built are
# reused, not rebuilt with another feature set (CI runs both).
INTEROP_JS_DIR ?= $(CURDIR)/target/interop-js

test-interop:
	@networking/interop/install.sh "$(INTEROP_JS_DIR)" >/dev/null
	ARBOR_INTEROP_JS_DIR="$(INTEROP_JS_DIR)" $(CARGO) test --workspace --all-features --test interop_js -- --ignored --nocapture
	ARBOR_INTEROP_JS_DIR="$(INTEROP_JS_DIR)" $(CARGO) test --workspace --all-features --test lodestar_wire -- --ignored --nocapture

# The Beacon API against the spec's OpenAPI document (scripts/conformance): schemathesis (PyPI,
# into target/conformance/venv) drives a running `arbor dev` devnet (mainnet preset, blobs) with
# generated requests in JSON and SSZ; any 5xx, undocumented status, content type, header or body
# that does not match its schema fails. The document: BEACON_APIS, a checkout of
# ethereum/beacon-APIs v4.0.0 or its bundled JSON (default ../shared/beacon-apis). Report:
# target/conformance/report.md. The binary is the one `make test` builds (same features).
test-conformance:
	$(CARGO) build --workspace --all-features --bin arbor
	scripts/conformance/run.sh target/debug/arbor

# The same checks against the Gloas release of the document (ethereum/beacon-APIs
# v5.0.0-alpha.2, in $(SHARED)/beacon-apis-next) on a devnet that is Gloas from genesis. Report:
# target/conformance-gloas/report.md.
test-conformance-gloas:
	$(CARGO) build --workspace --all-features --bin arbor
	BEACON_APIS="$(SHARED)/beacon-apis-next" CONFORMANCE_GLOAS_EPOCH=0 CONFORMANCE_OUT="$(CURDIR)/target/conformance-gloas" scripts/conformance/run.sh target/debug/arbor

# The simulator's long profile (testing/simulator): four nodes as separate processes of the
# release binary (mock execution client, beacon node, validator client each), 26 epochs, with a
# SIGKILL and restart, a node offline for two epochs, and an execution client answering SYNCING.
# Its short profile runs in `make test` (beacon_node/tests/simulator.rs). Files under
# target/simulator/.
SIM_ARGS ?=
simulate: release
	$(CARGO) run --release -p simulator -- --arbor ./target/release/arbor --profile long --dir target/simulator $(SIM_ARGS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	$(CARGO) bench --workspace

clean:
	$(CARGO) clean

# The container image (Dockerfile: release `arbor` on Debian bookworm, non-root). Built with
# podman or buildah when present, docker otherwise. DOCKER_BUILD_FLAGS go to the build command,
# e.g. `--build-arg ARBOR_CARGO_FLAGS=--no-default-features` (no mock execution client), or, on a
# machine without a registry, `--pull=never` after scripts/docker/local-base-images.sh.
DOCKER_IMAGE ?= arbor:latest
DOCKER_BUILD_FLAGS ?=
.PHONY: docker
docker:
	@if command -v podman >/dev/null 2>&1; then build="podman build"; \
	elif command -v buildah >/dev/null 2>&1; then build="buildah bud"; \
	else build="docker build"; fi; \
	echo "$$build -t $(DOCKER_IMAGE) $(DOCKER_BUILD_FLAGS) ."; \
	$$build -t $(DOCKER_IMAGE) $(DOCKER_BUILD_FLAGS) .
