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

# --- build -------------------------------------------------------------------
# rquickjs-sys would otherwise download wasi-sdk; we use Debian's clang and
# wasi-libc instead.
export RQUICKJS_SYS_NO_WASI_SDK=1
export CC_wasm32_wasip1=clang-19
export AR_wasm32_wasip1=llvm-ar-19
CARGO_HOME_DIR=${CARGO_HOME:-$HOME/.cargo}
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
