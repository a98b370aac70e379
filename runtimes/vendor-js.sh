#!/usr/bin/env bash
# Put the vendored pure-JavaScript packages where the sandbox sees them:
# OUT_DIR/js/<name>/, which the supervisor mounts read-only at /data, so a
# script loads them with requireVendor("<name>") from /data/js/<name>.
#
#   runtimes/vendor-js.sh OUT_DIR        (OUT_DIR is normally target/runtimes/data)
#
# Two sources:
#   - our own packages, vendor/js/<name>/ (each has a package.json);
#   - npm packages pinned by vendor/js/package.json + package-lock.json,
#     installed with `npm ci --ignore-scripts` into target/vendor-js/ (npm
#     verifies every tarball against the sha512 integrity in the lock file).
#     Their transitive dependencies are copied too, so a package's
#     require("dep") finds /data/js/dep.
# OUT_DIR/js is rebuilt from scratch each run, so removed packages disappear.
#
# Needs: node + npm (npm ci only reaches the registry for tarballs that are
# not in the npm cache yet).
set -euo pipefail

die() {
  echo "vendor-js: $*" >&2
  exit 1
}

[[ $# -eq 1 && -n "$1" ]] || die "usage: $0 OUT_DIR"
mkdir -p -- "$1"
OUT_DIR=$(cd -- "$1" && pwd)

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$HERE/.." && pwd)
SRC="$REPO/vendor/js"
WORK="$REPO/target/vendor-js"
DEST="$OUT_DIR/js"

command -v npm >/dev/null || die "npm not found: apt-get install -y nodejs npm (Node 20+)"
[[ -f "$SRC/package.json" && -f "$SRC/package-lock.json" ]] ||
  die "$SRC/package.json or package-lock.json missing"

start=$(date +%s)

# --- npm packages, verified against the lock file ------------------------------
mkdir -p -- "$WORK"
cp -- "$SRC/package.json" "$SRC/package-lock.json" "$WORK/"
(
  cd "$WORK"
  npm ci --ignore-scripts --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error
) || die "npm ci failed (network, or package-lock.json out of date with package.json?)"

# --- assemble OUT_DIR/js -------------------------------------------------------
STAGE="$OUT_DIR/.js.tmp"
rm -rf -- "$STAGE"
mkdir -p -- "$STAGE"

own=()
for dir in "$SRC"/*/; do
  name=$(basename -- "$dir")
  [[ -f "$dir/package.json" ]] || continue # test/ and other non-packages
  cp -R -- "$dir" "$STAGE/$name"
  own+=("$name")
done

npm_pkgs=()
for dir in "$WORK"/node_modules/*/; do
  name=$(basename -- "$dir")
  [[ "$name" == .* ]] && continue # .bin, .package-lock.json
  [[ "$name" == @* ]] && die "scoped npm packages ($name) are not supported by this script yet"
  [[ -e "$STAGE/$name" ]] && die "npm package $name clashes with vendor/js/$name"
  cp -R -- "$dir" "$STAGE/$name"
  npm_pkgs+=("$name")
done

rm -rf -- "$DEST"
mv -- "$STAGE" "$DEST"

elapsed=$(($(date +%s) - start))
echo "vendored JavaScript packages into $DEST"
echo "  own: ${own[*]}"
echo "  npm: ${npm_pkgs[*]}"
echo "  size: $(du -sh -- "$DEST" | cut -f1)"
echo "  time: ${elapsed}s"
