#!/usr/bin/env bash
# Installs a peer MCP server for sandbox-bench's side-by-side figures and prints the command line
# that starts it (for `--sdk-against` or `--against`). Nothing is committed: the peers live under
# target/sdk-peers and are installed on first use from PyPI and npm, at pinned versions.
#
#   runtimes/sdk-peers.sh eryx             # pyeryx[serve] 0.11.0 (CPython on Wasmtime): `eryx serve`
#   runtimes/sdk-peers.sh mcp-run-python   # mcp-run-python 0.0.22 (Pyodide on Deno, Deno from npm)
#
#   target/release/sandbox-bench --sdk-against "$(runtimes/sdk-peers.sh eryx)" \
#                                --sdk-against "$(runtimes/sdk-peers.sh mcp-run-python)"
#
# Progress goes to stderr, the command line alone to stdout; exit status 1 with the reason on
# stderr when the peer cannot be installed here.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
PEERS="$ROOT/target/sdk-peers"
ERYX_REQUIREMENT="pyeryx[serve]==0.11.0"
MCP_RUN_PYTHON_REQUIREMENT="mcp-run-python==0.0.22"
DENO_VERSION="2.9.6"
log() { echo "sdk-peers: $*" >&2; }

# A Python of at least 3.12 (pyeryx 0.11.0 has only cp312-abi3 wheels, and its sdist needs a Rust
# build of the whole sandbox): $SDK_PEERS_PYTHON, python3.13 or python3.12 that run, or one that
# pyenv installed.
python_3_12_or_later() {
  local candidate
  for candidate in "${SDK_PEERS_PYTHON:-}" python3.13 python3.12 python3 \
    "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    [[ -n "$candidate" ]] || continue
    if "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# A venv at $1 made by Python $2 with requirement $3, unless it already has it.
venv_with() {
  local venv=$1 python=$2 requirement=$3
  if [[ -f "$venv/.requirement" && "$(cat "$venv/.requirement")" == "$requirement" ]]; then
    return 0
  fi
  log "installing $requirement into ${venv#"$ROOT"/}"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q "$requirement" >&2
  echo "$requirement" >"$venv/.requirement"
}

case "${1:-}" in
  eryx)
    if ! python=$(python_3_12_or_later); then
      echo "sdk-peers: eryx needs Python 3.12 or later (pyeryx 0.11.0 ships cp312-abi3 wheels only); none found (set SDK_PEERS_PYTHON)" >&2
      exit 1
    fi
    venv_with "$PEERS/eryx" "$python" "$ERYX_REQUIREMENT"
    echo "$PEERS/eryx/bin/eryx serve"
    ;;
  mcp-run-python)
    if [[ ! -x "$PEERS/deno/node_modules/.bin/deno" ]] ||
      [[ "$("$PEERS/deno/node_modules/.bin/deno" --version 2>/dev/null | head -1)" != "deno $DENO_VERSION "* ]]; then
      log "installing deno $DENO_VERSION (npm) into target/sdk-peers/deno"
      mkdir -p "$PEERS/deno"
      npm install --silent --no-audit --no-fund --prefix "$PEERS/deno" "deno@$DENO_VERSION" >&2
    fi
    venv_with "$PEERS/mcp-run-python" python3 "$MCP_RUN_PYTHON_REQUIREMENT"
    # mcp-run-python starts `deno` from PATH.
    echo "env 'PATH=$PEERS/deno/node_modules/.bin:$PATH' $PEERS/mcp-run-python/bin/mcp-run-python stdio"
    ;;
  *)
    echo "usage: runtimes/sdk-peers.sh eryx|mcp-run-python" >&2
    exit 2
    ;;
esac
