# Arbor's container image: `arbor` (beacon node, validator client and the devnet tools) on Debian
# bookworm, run as a non-root user. Build with `make docker` (podman or buildah when present,
# docker otherwise), or e.g. `docker build -t arbor .`.
#
# Base images: the official `rust` and `debian` images by default. On a machine without a
# container registry, scripts/docker/local-base-images.sh makes local images under these same
# names (a debootstrapped bookworm, plus the host's Rust toolchain for the builder); build with
# `--pull=never` then. Either name can be overridden with `--build-arg`.
#
# Features: the default build keeps the `mock-el` feature (`arbor dev`, `arbor mock-el`,
# `arbor new-testnet`), since the image's first users are devnets and CI. A production image
# without any mock code: `--build-arg ARBOR_CARGO_FLAGS=--no-default-features`.
ARG RUST_IMAGE=docker.io/library/rust:1.95-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

# ---- builder: the release binary ---------------------------------------------------------------
FROM ${RUST_IMAGE} AS builder
ARG ARBOR_CARGO_FLAGS=""
WORKDIR /src
COPY . .
# The target directory and the crate registry are cache mounts, so rebuilds are incremental and
# neither ends up in a layer; the binary is copied out within the same step.
RUN --mount=type=cache,id=arbor-target,target=/src/target \
    --mount=type=cache,id=arbor-cargo-registry,target=/usr/local/cargo/registry \
    cargo build --release --locked --bin arbor ${ARBOR_CARGO_FLAGS} \
    && install -D -m 0755 target/release/arbor /out/arbor

# ---- runtime: the binary only -------------------------------------------------------------------
# `arbor` links only glibc, libm and libgcc_s (TLS is rustls, compiled in), all in bookworm's base,
# so nothing is installed here. https URLs (checkpoint sync, relays) are checked against the
# system's trusted roots, taken from the builder image's ca-certificates bundle.
FROM ${RUNTIME_IMAGE} AS runtime
COPY --from=builder /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN groupadd --gid 10001 arbor \
    && useradd --uid 10001 --gid arbor --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin arbor \
    && mkdir -p /data \
    && chown arbor:arbor /data
COPY --from=builder /out/arbor /usr/local/bin/arbor
USER arbor:arbor
ENV HOME=/data
WORKDIR /data
# The datadir (`--datadir`, default `~/.arbor/<network>`, i.e. under /data).
VOLUME ["/data"]
# p2p: TCP and discv5 on 9000, QUIC on 9001; Beacon API 5052; Prometheus metrics 5054. The HTTP
# servers listen on 127.0.0.1 unless `--http-address 0.0.0.0` / `--metrics-address 0.0.0.0`.
EXPOSE 9000/tcp 9000/udp 9001/udp 5052/tcp 5054/tcp
ENTRYPOINT ["arbor"]
CMD ["--help"]
