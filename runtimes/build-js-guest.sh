#!/usr/bin/env bash
# Build the QuickJS-NG JavaScript guest (runtimes/js-guest) for wasm32-wasip1
# and copy it to OUT_DIR/quickjs-ng.wasm.
#
#   runtimes/build-js-guest.sh OUT_DIR
#
# Needs: cargo + the wasm32-wasip1 rustup target, clang-19 and llvm-ar-19
# (QuickJS is C), and Debian's wasi-libc headers. Fetches nothing but crates
# (and only if they are not in the cargo cache yet).
set -euo pipefail

die() {
  echo "build-js-guest: $*" >&2
  exit 1
}

[[ $# -eq 1 && -n "$1" ]] || die "usage: $0 OUT_DIR"
mkdir -p -- "$1"
OUT_DIR=$(cd -- "$1" && pwd)

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
CRATE="$HERE/js-guest"
TARGET=wasm32-wasip1
WASI_INCLUDE=/usr/include/wasm32-wasi

# --- toolchain checks, each saying what fixes it -----------------------------
command -v cargo >/dev/null || die "cargo not found (install Rust via rustup)"
command -v clang-19 >/dev/null || die "clang-19 not found: apt-get install -y clang-19"
command -v llvm-ar-19 >/dev/null || die "llvm-ar-19 not found: apt-get install -y llvm-19"
[[ -f "$WASI_INCLUDE/stdio.h" ]] ||
  die "WASI libc headers missing ($WASI_INCLUDE): apt-get install -y wasi-libc"
SYSROOT=$(rustc --print sysroot) || die "rustc not found (install Rust via rustup)"
[[ -d "$SYSROOT/lib/rustlib/$TARGET" ]] ||
  die "Rust target $TARGET not installed: rustup target add $TARGET"

CARGO_HOME_DIR=${CARGO_HOME:-$HOME/.cargo}

# --- QuickJS with our patches -------------------------------------------------
# rquickjs-sys vendors QuickJS-NG's C source. js-guest/patches/*.patch change
# it (REPL semantics for top-level let/const/class, see the patch), so the
# build uses a patched copy of the pinned crate: js-guest/Cargo.toml points
# [patch.crates-io] at target/patched/rquickjs-sys. The .crate comes from the
# cargo cache or crates.io and must match the checksum Cargo.lock pins.
QJS_SYS=rquickjs-sys-0.14.0
QJS_SYS_SHA256=cee271d0eeba64f0915b846cb7ae02e16faf3dfdffdca91731101d9d30fe3423
PATCHED="$CRATE/target/patched/rquickjs-sys"
stamp=$(cat "$CRATE"/patches/*.patch | sha256sum | cut -d' ' -f1)
if [[ "$(cat "$PATCHED/.sandbox-patches" 2>/dev/null)" != "$stamp" ]]; then
  command -v patch >/dev/null || die "patch not found: apt-get install -y patch"
  crate_file=$(ls "$CARGO_HOME_DIR"/registry/cache/*/"$QJS_SYS.crate" 2>/dev/null | head -n1 || true)
  if [[ -z "$crate_file" ]]; then
    # On a fresh machine neither the cargo cache nor target/ exists yet.
    mkdir -p -- "$CRATE/target"
    crate_file="$CRATE/target/$QJS_SYS.crate"
    curl -fsSL --retry 3 -o "$crate_file" \
      "https://static.crates.io/crates/rquickjs-sys/0.14.0/download" ||
      die "cannot download $QJS_SYS from crates.io"
  fi
  echo "$QJS_SYS_SHA256  $crate_file" | sha256sum -c --quiet - ||
    die "$crate_file does not match the pinned checksum"
  rm -rf -- "$PATCHED" "$PATCHED.tmp"
  mkdir -p -- "$PATCHED.tmp"
  tar -xzf "$crate_file" -C "$PATCHED.tmp" --strip-components=1
  for p in "$CRATE"/patches/*.patch; do
    patch -s -p1 -d "$PATCHED.tmp" < "$p" || die "patch $p does not apply"
  done
  echo "$stamp" > "$PATCHED.tmp/.sandbox-patches"
  mv -- "$PATCHED.tmp" "$PATCHED"
fi

# --- build -------------------------------------------------------------------
# rquickjs-sys would otherwise download wasi-sdk; we use Debian's clang and
# wasi-libc instead.
export RQUICKJS_SYS_NO_WASI_SDK=1
export CC_wasm32_wasip1=clang-19
export AR_wasm32_wasip1=llvm-ar-19
# Reproducible output: no absolute build paths in the C objects (QuickJS is
# compiled from a copy under target/) or in Rust panic locations.
export CFLAGS_wasm32_wasip1="-isystem $WASI_INCLUDE -ffile-prefix-map=$CRATE=. -ffile-prefix-map=$CARGO_HOME_DIR=/cargo"
REMAP="--remap-path-prefix=$CARGO_HOME_DIR=/cargo"

start=$(date +%s)
(
  cd "$CRATE"
  # --config appends to the rustflags in js-guest/.cargo/config.toml (stack
  # size etc.) rather than replacing them, unlike RUSTFLAGS.
  cargo build --release --locked --target "$TARGET" \
    --target-dir "$CRATE/target" \
    --config "target.$TARGET.rustflags=[\"$REMAP\"]"
)
elapsed=$(($(date +%s) - start))

WASM="$CRATE/target/$TARGET/release/sandbox_js_guest.wasm"
[[ -f "$WASM" ]] || die "build finished but $WASM is missing"
cp -- "$WASM" "$OUT_DIR/quickjs-ng.wasm"

size=$(stat -c %s "$OUT_DIR/quickjs-ng.wasm")
sha=$(sha256sum "$OUT_DIR/quickjs-ng.wasm" | cut -d' ' -f1)
echo "built $OUT_DIR/quickjs-ng.wasm"
echo "  size:   $size bytes"
echo "  sha256: $sha"
echo "  time:   ${elapsed}s"
