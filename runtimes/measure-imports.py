#!/usr/bin/env python3
"""Measures what the first import of every vendored package (and of common stdlib modules) costs
inside a real Python sandbox, and writes vendor/python/import-fuel.json.

    runtimes/measure-imports.py [--server target/release/sandbox-mcp]
                                [--site target/runtimes/data/site-packages]
                                [--out vendor/python/import-fuel.json] [--only yaml,sympy]

It drives the real server over MCP stdio with the official MCP Python SDK (as
../shared/tools/mcp-call does; it re-runs itself in that tool's venv when `mcp` is missing here).
Every import runs in a FRESH session (create_session with a large fuel budget, one execute_code,
destroy_session), so the number includes the package's own dependencies, as a user's first
import would. The cost of a trivial `pass` in a fresh session, measured the same way, is
subtracted. Fuel varies by under 1% between runs; milliseconds depend on the machine's load.

Needs: target/release/sandbox-mcp built and runtimes/vendor-python.sh target/runtimes/data run.
"""

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The default fuel budget of an execution (SANDBOX_DEFAULT_FUEL); an import above it needs a
# session created with a larger `fuel_budget`.
DEFAULT_FUEL = 10**10
# The budget of the measuring sessions: far above the heaviest import.
MEASURE_FUEL = 10**11

STDLIB = """json re csv datetime decimal sqlite3 hashlib pathlib collections itertools statistics
random math fractions typing dataclasses zoneinfo email html xml.etree.ElementTree urllib.parse
base64 zlib gzip bz2 tarfile zipfile io textwrap string difflib pprint copy functools operator
heapq bisect uuid time calendar struct unicodedata asyncio logging argparse shutil tempfile glob
fnmatch enum abc inspect ast dis timeit traceback""".split()

CATEGORIES = {
    "data formats": "pyyaml tomli tomli-w tomlkit xmltodict json5 jmespath",
    "documents/office": "openpyxl et-xmlfile xlsxwriter pypdf mammoth cobble",
    "text": "tabulate jinja2 markupsafe markdown rich pygments markdown-it-py mdurl python-slugify "
    "text-unidecode chardet pyparsing sqlparse humanize",
    "math/science": "sympy mpmath networkx",
    "dates/time": "python-dateutil pytz tzdata icalendar",
    "validation": "pydantic jsonschema attrs pyrsistent",
    "web/html": "beautifulsoup4 soupsieve html5lib webencodings markdownify html2text idna",
    "utilities": "more-itertools toolz packaging typing-extensions sortedcontainers cachetools "
    "tqdm faker six",
}
CATEGORY_OF = {dist: cat for cat, dists in CATEGORIES.items() for dist in dists.split()}
# Top-level names that are aliases or scripts rather than what a user imports.
SKIP_NAMES = {"isympy", "tlz"}


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def vendored_imports(site):
    """{import name: (dist name, version)} from the RECORD files of the installed dists."""
    found = {}
    for dist_info in sorted(site.glob("*.dist-info")):
        meta = (dist_info / "METADATA").read_text(errors="replace")
        name = norm(re.search(r"^Name: (.+)$", meta, re.M)[1].strip())
        version = re.search(r"^Version: (.+)$", meta, re.M)[1].strip()
        tops = set()
        for line in (dist_info / "RECORD").read_text().splitlines():
            path = line.rsplit(",", 2)[0]
            first = path.split("/")[0]
            if first.endswith((".dist-info", ".data")) or not first:
                continue
            if "/" in path or first.endswith(".py"):
                tops.add(first.removesuffix(".py"))
        for top in sorted(tops):
            if top.startswith("_") or top in SKIP_NAMES or not top.isidentifier():
                continue
            found[top] = (name, version)
    return found


async def measure(args):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    site = Path(args.site)
    targets = [(n, d[0], d[1]) for n, d in vendored_imports(site).items()]
    targets += [(m, "stdlib", None) for m in STDLIB]
    if args.only:
        wanted = set(args.only.split(","))
        targets = [t for t in targets if t[0] in wanted]

    params = StdioServerParameters(command=args.server, args=[],
                                   env={**os.environ, "RUST_LOG": "warn"})
    counter = iter(range(1, 1_000_000))
    conn = {"stack": None, "session": None, "server": ""}

    async def connect():
        if conn["stack"] is not None:
            try:
                await conn["stack"].aclose()
            except Exception:  # the server is already gone
                pass
        stack = contextlib.AsyncExitStack()
        r, w = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        session = await stack.enter_async_context(ClientSession(r, w))
        init = await session.initialize()
        conn.update(stack=stack, session=session,
                    server=f"{init.server_info.name} {init.server_info.version}")

    async def fresh_run_once(code):
        s = conn["session"]
        sid = f"m-{next(counter)}"
        created = await s.call_tool("create_session", {
            "language": "python", "session_id": sid, "fuel_budget": MEASURE_FUEL})
        if created.is_error:
            raise RuntimeError(f"create_session failed: {created.content}")
        try:
            res = await s.call_tool("execute_code", {
                "language": "python", "session_id": sid, "code": code, "timeout": 300},
                read_timeout_seconds=600)
            return res.structured_content or {}
        finally:
            await s.call_tool("destroy_session", {"session_id": sid})

    async def fresh_run(code):
        # The target directory is shared: a rebuild or a crash may take the server away.
        for attempt in range(3):
            try:
                return await fresh_run_once(code)
            except Exception as err:  # noqa: BLE001
                print(f"retrying after: {err!r}", file=sys.stderr)
                await asyncio.sleep(2 * (attempt + 1))
                await connect()
        return await fresh_run_once(code)

    await connect()
    try:
        return await measure_all(args, targets, fresh_run, conn)
    finally:
        await conn["stack"].aclose()


async def measure_all(args, targets, fresh_run, conn):
    probe = await fresh_run("import sys\nprint('/data/site-packages' in sys.path)")
    if probe.get("stdout") != "True\n":
        sys.exit("/data/site-packages is not on sys.path in the sandbox: run "
                 "runtimes/vendor-python.sh target/runtimes/data first")
    base = [await fresh_run("pass") for _ in range(3)]
    base_fuel = statistics.median(b["fuel_consumed"] for b in base)
    base_ms = statistics.median(b["execution_time_ms"] for b in base)
    print(f"baseline: fuel {base_fuel:,} ms {base_ms:.1f}", file=sys.stderr)

    out = {}
    for name, dist, version in targets:
        res = await fresh_run(f"import {name}")
        entry = {"package": dist}
        if version:
            entry["version"] = version
        entry["category"] = "stdlib" if dist == "stdlib" else CATEGORY_OF.get(dist)
        if entry["category"] is None:
            print(f"warning: no category for {dist}", file=sys.stderr)
            entry["category"] = "utilities"
        if res.get("success"):
            fuel = max(0, res["fuel_consumed"] - base_fuel)
            entry.update(available=True, fuel=int(fuel),
                         ms=round(max(0.0, res["execution_time_ms"] - base_ms), 1),
                         over_default_budget=fuel > DEFAULT_FUEL)
        else:
            entry.update(available=False, error=(
                f"{res.get('error_name')}: {res.get('error_message')}"))
        out[name] = entry
        shown = f"{entry['fuel']:>16,} {entry['ms']:>9.1f} ms" if entry["available"] \
            else f"unavailable: {entry['error']}"
        print(f"{name:<28} {dist:<18} {shown}", file=sys.stderr)

    return {
        "meta": {
            "what": "first-import cost in a fresh Python sandbox, minus a fresh `pass`; "
                    "written by runtimes/measure-imports.py",
            "server": conn["server"],
            "interpreter": "CPython 3.12.0 (WASI)",
            "default_fuel_budget": DEFAULT_FUEL,
            "baseline": {"fuel": int(base_fuel), "ms": round(base_ms, 1)},
            "note": "fuel varies by under 1% between runs (hash randomization); ms is wall "
                    "time on the measuring machine (2 shared cores) and varies with load. "
                    "over_default_budget: the import alone needs a session with a larger "
                    "fuel_budget (create_session).",
        },
        "python": out,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default=str(ROOT / "target/release/sandbox-mcp"))
    ap.add_argument("--site", default=str(ROOT / "target/runtimes/data/site-packages"))
    ap.add_argument("--out", default=str(ROOT / "vendor/python/import-fuel.json"))
    ap.add_argument("--only", help="comma-separated import names (writes nothing unless --out)")
    args = ap.parse_args()
    result = asyncio.run(measure(args))
    if args.only and "--out" not in sys.argv:
        print(json.dumps(result, indent=2))
        return
    Path(args.out).write_text(json.dumps(result, indent=2, sort_keys=False) + "\n")
    print(f"wrote {args.out} ({len(result['python'])} modules)", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import mcp_sdk

    mcp_sdk.ensure(__file__)
    main()
