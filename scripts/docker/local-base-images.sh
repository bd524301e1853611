#!/usr/bin/env bash
# Makes the Dockerfile's two base images locally, for a machine that has no container registry
# (or cannot reach one) but can reach a Debian mirror. Afterwards
# `make docker DOCKER_BUILD_FLAGS=--pull=never` (or `podman build --pull=never -t arbor .`)
# builds Arbor's image without pulling anything; cargo in the build stage still fetches crates
# from crates.io (pass EXTRA_CA_DIR below if egress re-signs TLS).
#
# Inside a container without CAP_SYS_RESOURCE and with hybrid cgroups (as on Arbor's dev
# machines), podman also needs `--runtime runc` (crun refuses hybrid cgroups; `apt-get install
# runc`) and rlimits it can set without CAP_SYS_RESOURCE: podman's defaults (1048576 open files
# and processes) are refused; open files up to `ulimit -Hn` and 32768 processes work, e.g.
#   make docker DOCKER_BUILD_FLAGS="--pull=never --runtime runc \
#     --ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=32768:32768"
#
#   runtime: docker.io/library/debian:bookworm-slim
#            a `debootstrap --variant=minbase bookworm` root filesystem, imported as an image.
#   builder: docker.io/library/rust:<version>-bookworm
#            the same minbase plus gcc, libc6-dev, make, pkg-config and ca-certificates, and this
#            machine's Rust toolchain (`rustc --print sysroot`: rustc, cargo, rust-std) laid out
#            as the official rust image does (CARGO_HOME=/usr/local/cargo on PATH), without rustup.
#
# The names are the ones the Dockerfile's RUST_IMAGE / RUNTIME_IMAGE default to, so the
# Dockerfile is the same for a registry build and a local one. Needs root, debootstrap and podman
# (Debian: `apt-get install -y debootstrap podman`).
#
# Environment:
#   DEBIAN_MIRROR  the mirror to debootstrap from (default: the first bookworm `main` source in
#                  /etc/apt/sources.list*, else http://deb.debian.org/debian)
#   WORK_DIR       where the root filesystems are made (default: /var/tmp/arbor-base-images);
#                  a finished debootstrap there is reused
#   RUST_VERSION   the builder's tag (default: `rustc --version`'s major.minor, e.g. 1.95)
#   ENGINE         podman (default) or buildah
#   EXTRA_CA_DIR   certificates (*.crt) the builder trusts besides Debian's, for a network whose
#                  egress re-signs TLS (default: /usr/local/share/ca-certificates, this machine's
#                  local CAs); cargo in the build stage fetches crates from crates.io through it
set -euo pipefail

ENGINE=${ENGINE:-podman}
EXTRA_CA_DIR=${EXTRA_CA_DIR:-/usr/local/share/ca-certificates}
WORK_DIR=${WORK_DIR:-/var/tmp/arbor-base-images}
SUITE=bookworm

die() { echo "error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "debootstrap needs root"
command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install -y debootstrap)"
command -v "$ENGINE" >/dev/null || die "$ENGINE not found (apt-get install -y $ENGINE)"
command -v rustc >/dev/null || die "rustc not found: the builder image takes this machine's toolchain"

# The mirror apt uses here: a deb822 `URIs:` line or a one-line `deb URI bookworm main` entry.
apt_mirror() {
  local f uri
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*; do
    [ -f "$f" ] || continue
    uri=$(awk -v s="$SUITE" '
      /^URIs:/ { u = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s && u != "") { print u; exit } }
      /^deb / { for (i = 3; i <= NF; i++) if ($i == s) { print $2; exit } }
    ' "$f")
    if [ -n "$uri" ]; then echo "$uri"; return; fi
  done
  echo http://deb.debian.org/debian
}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-$(apt_mirror)}

SYSROOT=$(rustc --print sysroot)
RUST_VERSION=${RUST_VERSION:-$(rustc --version | sed -E 's/^rustc ([0-9]+\.[0-9]+).*/\1/')}
RUNTIME_IMAGE=docker.io/library/debian:${SUITE}-slim
RUST_IMAGE=docker.io/library/rust:${RUST_VERSION}-${SUITE}

# debootstrap into $1 with extra packages $2, unless a finished root is there (debootstrap
# removes its /debootstrap directory when it completes).
make_root() {
  local dir=$1 include=$2
  if [ -x "$dir/usr/bin/apt-get" ] && [ ! -e "$dir/debootstrap" ]; then
    echo "reusing $dir"
  else
    rm -rf "$dir"
    echo "debootstrap $SUITE into $dir from $DEBIAN_MIRROR ${include:+(with $include)}"
    debootstrap --variant=minbase ${include:+--include="$include"} "$SUITE" "$dir" "$DEBIAN_MIRROR"
  fi
  # What the slim images leave out: downloaded packages and apt's lists.
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
}

# Imports the root filesystem $1 as image $2, with `--change` instructions $3...
import_root() {
  local dir=$1 name=$2
  shift 2
  local changes=()
  for c in "$@"; do changes+=(--change "$c"); done
  if [ "$ENGINE" = buildah ]; then
    # buildah has no import: a scratch container with the root copied in, committed.
    local ctr
    ctr=$(buildah from scratch)
    local mnt
    mnt=$(buildah mount "$ctr")
    tar -C "$dir" -c . | tar -C "$mnt" -x
    buildah umount "$ctr" >/dev/null
    for c in "$@"; do buildah config --env "${c#ENV }" "$ctr"; done
    buildah commit --rm "$ctr" "$name" >/dev/null
  else
    tar -C "$dir" -c . | podman import "${changes[@]}" - "$name" >/dev/null
  fi
  echo "imported $name"
}

mkdir -p "$WORK_DIR"

# ---- runtime base ----
make_root "$WORK_DIR/runtime" ""
import_root "$WORK_DIR/runtime" "$RUNTIME_IMAGE" \
  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# ---- builder base: the C toolchain the -sys crates need (blst, c-kzg, secp256k1, aws-lc) ----
make_root "$WORK_DIR/builder" "gcc,libc6-dev,make,pkg-config,ca-certificates"
# This machine's Rust toolchain, without its docs, laid out as the official image's.
toolchain="$WORK_DIR/builder/usr/local/rustup/toolchains/${RUST_VERSION}-x86_64-unknown-linux-gnu"
rm -rf "$WORK_DIR/builder/usr/local/rustup" "$WORK_DIR/builder/usr/local/cargo"
mkdir -p "$toolchain" "$WORK_DIR/builder/usr/local/cargo/bin"
for d in bin lib libexec etc; do
  [ -e "$SYSROOT/$d" ] && cp -a "$SYSROOT/$d" "$toolchain/"
done
for b in cargo rustc rustdoc; do
  ln -s "../../rustup/toolchains/${RUST_VERSION}-x86_64-unknown-linux-gnu/bin/$b" \
    "$WORK_DIR/builder/usr/local/cargo/bin/$b"
done
# This machine's extra CAs, so cargo can reach crates.io from the build where egress is re-signed.
if ls "$EXTRA_CA_DIR"/*.crt >/dev/null 2>&1; then
  mkdir -p "$WORK_DIR/builder/usr/local/share/ca-certificates"
  cp "$EXTRA_CA_DIR"/*.crt "$WORK_DIR/builder/usr/local/share/ca-certificates/"
  chroot "$WORK_DIR/builder" update-ca-certificates >/dev/null
fi
import_root "$WORK_DIR/builder" "$RUST_IMAGE" \
  "ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  "ENV CARGO_HOME=/usr/local/cargo" \
  "ENV RUSTUP_HOME=/usr/local/rustup"

"$ENGINE" images --format '{{.Repository}}:{{.Tag}} {{.Size}}' 2>/dev/null \
  | grep -E "(debian:${SUITE}-slim|rust:${RUST_VERSION}-${SUITE})" || true
