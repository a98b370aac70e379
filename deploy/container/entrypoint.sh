#!/bin/sh
# The image's entry point: seeds the writable module cache (SANDBOX_CACHE_DIR, on the volume)
# with the .cwasm files compiled when the image was built, then runs sandbox-mcp with the
# arguments given.
#
# Why a copy: the root filesystem is read-only, and a .cwasm compiled on another CPU does not fit
# this one (its name carries the engine's compatibility hash, CPU features included), so the
# server must be able to compile into its cache. On a CPU like the build machine's, the seeded
# files are found and nothing is compiled. Files already in the cache are left alone, and a copy
# lands under its final name only when complete (rename), so a container killed mid-copy leaves
# no half module behind.
set -eu

shipped=${SANDBOX_RUNTIME_DIR:-/opt/sandbox-mcp/runtimes}/cache
cache=${SANDBOX_CACHE_DIR:-}

if [ -n "$cache" ] && [ "$cache" != "$shipped" ] && [ -d "$shipped" ]; then
  mkdir -p -- "$cache"
  for module in "$shipped"/*.cwasm; do
    [ -f "$module" ] || continue
    target="$cache/${module##*/}"
    [ -e "$target" ] && continue
    cp -- "$module" "$target.seed.$$"
    mv -- "$target.seed.$$" "$target"
  done
fi

exec /opt/sandbox-mcp/bin/sandbox-mcp "$@"
