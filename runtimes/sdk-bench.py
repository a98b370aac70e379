"""sandbox-bench's "official SDK" figures (issue 24): one MCP stdio server driven by the official
MCP Python SDK, a client we did not write and one that validates every result against the
tool's outputSchema, as many clients do. Prints one JSON object on stdout; sandbox-bench
(tests/src/bin/bench/sdk.rs) turns it into rows of its table.

    python3 runtimes/sdk-bench.py [--calls N] [--first-calls K] -- SERVER_COMMAND [ARGS...]
    python3 runtimes/sdk-bench.py --scientific-starts K -- SANDBOX_MCP_COMMAND
    python3 runtimes/sdk-bench.py --native-only

The second form measures only K new Python sessions of our server: create_session
plus the first call, then `import pandas` (sandbox-bench runs it with the worker pool off).
The third runs only the CPU-bound cell's loop natively, in this CPython: sandbox-bench runs it
once per run and holds every server's CPU-bound cell to it.

The server is started with this process's environment. Its code tool is found from its tool
list by the rules sandbox-bench's own client uses (`execute_code`, else the first tool with a
required string argument named like code), so peers such as `eryx serve` are measured with the
same calls. On one connection, after a warm-up, N rounds each time: an MCP ping; the Python cell
`print(sum(range(10)))` (in a session of its own when the server has sessions); the same with
the SDK's output validation switched off; the JavaScript cell in a session of its own, when the
server runs JavaScript. Rounds interleave the calls, so a slower second of the machine weighs on
all of them alike and "above ping" compares like with like. Then a CPU-bound cell, the size of
the Python cell's structuredContent and of the output schemas, and K first calls of new
sessions (on a server without sessions: K fresh servers, each timed from its first call, the
handshake not counted).

Exit status: 0 with the figures (a figure that failed carries {"failed": why}); 3 when the SDK
cannot be had (no venv, no network for pip): sandbox-bench then prints the section as n/a; 1
when the server cannot be started or used at all."""

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

# The SDK release the figures are measured with: the figures depend on what its client does per
# call (issue 24 measured 2.3.0), so it is pinned and installed in a venv of its own.
SDK_VERSION = "2.3.0"

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mcp_sdk  # noqa: E402

PYTHON_CELL = "print(sum(range(10)))"
# What both trivial cells print.
EXPECTED = "45"
JAVASCRIPT_CELL = "console.log([...Array(10).keys()].reduce((a,b)=>a+b))"
CPU_BOUND_CELL = "print(sum(i*i for i in range(3_000_000)))"
CPU_BOUND_EXPECTED = str(sum(i * i for i in range(3_000_000)))
WARM_UP_CALLS = 20
CPU_BOUND_CALLS = 5
# Runs of the loop natively (`--native-only`): cheap, and their spread is wide.
NATIVE_CALLS = 9
# create_session's limits for the CPU-bound cell, where the server takes them.
CPU_BOUND_LIMITS = {"fuel_budget": 10**12, "timeout": 300}
# Between two measured new sessions: as sandbox-bench's own figure, long enough for a pool of
# pre-started workers to refill, so each sample is what a user meets at a normal pace.
REFILL_PAUSE_S = 0.3
# A call that takes longer than this has hung: the figure fails instead of the run.
CALL_TIMEOUT_S = 120


def compact_size(value):
    """Bytes of `value` as compact JSON in UTF-8 (as a server sends it)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def takes_code(name):
    name = name.lower()
    return name in ("code", "script", "source") or name.endswith(("_code", "_script", "_source"))


def names_language(name):
    name = name.lower()
    return name == "lang" or name.startswith("language")


def is_string(prop):
    kind = prop.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def language_values(tool, language_arg):
    """{"python": value, "javascript": value} for the languages the code tool runs."""
    names = {"python": ("python", "python3", "py"), "javascript": ("javascript", "js", "node")}
    if language_arg:
        enum = tool.input_schema["properties"][language_arg].get("enum")
        if not enum:
            return {"python": "python", "javascript": "javascript"}
        found = {}
        for lang, options in names.items():
            value = next((v for v in enum if isinstance(v, str) and v.lower() in options), None)
            if value is not None:
                found[lang] = value
        return found
    words = {w.lower() for w in "".join(c if c.isalnum() else " " for c in tool.name).split()}
    found = {lang: lang for lang, options in names.items() if words & set(options)}
    if "javascript" not in found and words & {"nodejs", "typescript", "ts", "deno"}:
        found["javascript"] = "javascript"
    return found or {"python": "python", "javascript": "javascript"}


class Server:
    """How a server runs code, learnt from its tool list."""

    def __init__(self, tools):
        def code_argument(tool):
            props = tool.input_schema.get("properties", {})
            required = tool.input_schema.get("required", [])
            code = [r for r in required if takes_code(r) and is_string(props.get(r, {}))]
            return code[0] if code else None

        chosen = next((t for t in tools if t.name == "execute_code" and code_argument(t)), None)
        chosen = chosen or next((t for t in tools if code_argument(t)), None)
        if chosen is None:
            names = [t.name for t in tools]
            raise RuntimeError(f"no tool takes code as a required string argument (tools: {names})")
        props = chosen.input_schema.get("properties", {})
        self.tool = chosen.name
        self.code = code_argument(chosen)
        self.language = next((p for p in props if names_language(p)), None)
        self.session = "session_id" if "session_id" in props else None
        self.languages = language_values(chosen, self.language)
        create = next((t for t in tools if t.name == "create_session"), None)
        self.create_session = list(create.input_schema.get("properties", {})) if create else None
        schemas = [t.output_schema for t in tools if t.output_schema]
        code_schema = chosen.output_schema
        self.code_tool_schema_bytes = compact_size(code_schema) if code_schema else 0
        self.all_schemas_bytes = sum(compact_size(schema) for schema in schemas)
        self.next_session = 0

    def has_sessions(self):
        return self.create_session is not None and self.session is not None

    def does_not_run(self, lang):
        """The figure of a language the code tool does not run."""
        name = {"python": "Python", "javascript": "JavaScript"}[lang]
        return {"n/a": f"its tool {self.tool} does not run {name}"}

    def arguments(self, lang, code, session):
        args = {self.code: code}
        if self.language:
            args[self.language] = self.languages.get(lang, lang)
        if self.session and session:
            args[self.session] = session
        return args

    async def new_session(self, client, lang, **limits):
        """A new session's id, or None on a server without sessions. `limits` are passed on
        where `create_session` takes them."""
        if not self.has_sessions():
            return None
        self.next_session += 1
        sid = f"sdk-bench-{lang}-{self.next_session}"
        # `runtime` as sandbox-bench's own rows: the plain interpreter, not one chosen by imports.
        args = {"session_id": sid, "language": lang, "runtime": lang, **limits}
        args = {k: v for k, v in args.items() if k in self.create_session}
        await call(client, "create_session", args)
        return sid

    async def run(self, client, lang, code, session, expected=None):
        result = await call(client, self.tool, self.arguments(lang, code, session))
        if expected is not None and expected not in text_of(result):
            raise RuntimeError(f"{self.tool} did not print {expected}: {text_of(result)[:200]!r}")
        return result


def text_of(result):
    parts = [getattr(c, "text", "") for c in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content))
    return " ".join(parts)


async def call(client, tool, args):
    result = await client.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT_S)
    if result.is_error:
        raise RuntimeError(f"{tool} answered an error: {text_of(result)[:300]}")
    return result


async def skip_validation(name, result):
    """Stands in for ClientSession.validate_tool_result: accepts every result unchecked."""


def unvalidated(client):
    """The client with its output validation off: mcp's ClientSession.call_tool validates every
    successful result's structuredContent through its (public) validate_tool_result, against the
    outputSchema cached from tools/list; an instance attribute shadows the method for one call."""

    class Off:
        def __enter__(self):
            client.validate_tool_result = skip_validation

        def __exit__(self, *exc):
            del client.validate_tool_result

    return Off()


def described(error):
    return f"{type(error).__name__}: {error}"


def ms_since(started):
    return (time.perf_counter() - started) * 1000


async def timed(coro):
    started = time.perf_counter()
    await coro
    return ms_since(started)


def figure(samples=None, failed=None, **extra):
    if failed is not None:
        return {"failed": failed}
    return {"samples_ms": samples, **extra} if samples is not None else extra


# The servers' stderr: kept out of ours (sandbox-bench reads ours for the reason of a failure)
# and quoted when a server cannot be used.
SERVER_STDERR = tempfile.TemporaryFile(mode="w+")


def server_stderr_tail(chars=200):
    """The end of the servers' stderr on one line, without terminal colours: sandbox-bench shows
    a reason in a table cell, and the cause is usually last."""
    SERVER_STDERR.flush()
    SERVER_STDERR.seek(0)
    text = re.sub(r"\x1b\[[0-9;]*m", "", SERVER_STDERR.read())
    SERVER_STDERR.seek(0, os.SEEK_END)
    line = " / ".join(part.strip() for part in text.splitlines() if part.strip())
    return ("..." + line[-chars:] if len(line) > chars else line) or "(nothing)"


async def connect(command, stack):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=SERVER_STDERR))
    client = await stack.enter_async_context(ClientSession(read, write))
    init = await client.initialize()
    tools = (await client.list_tools()).tools
    return client, init, tools


async def warm_figures(client, server, calls):
    """Interleaved rounds of ping, the Python cell (validated and not) and the JavaScript cell."""
    out = {}
    py = await server.new_session(client, "python")
    js = None
    runs_js = "javascript" in server.languages
    if runs_js:
        js = await server.new_session(client, "javascript")
    steps = {
        "ping": lambda: client.send_ping(),
        "python_warm": lambda: server.run(client, "python", PYTHON_CELL, py, EXPECTED),
        "python_warm_unvalidated": lambda: server.run(client, "python", PYTHON_CELL, py, EXPECTED),
    }
    if runs_js:
        steps["javascript_warm"] = lambda: server.run(
            client, "javascript", JAVASCRIPT_CELL, js, EXPECTED
        )
    samples = {key: [] for key in steps}
    failed = {}
    for round_ in range(WARM_UP_CALLS + calls):
        for key, step in steps.items():
            if key in failed:
                continue
            try:
                if key.endswith("_unvalidated"):
                    with unvalidated(client):
                        elapsed = await timed(step())
                else:
                    elapsed = await timed(step())
            except Exception as error:  # a figure that fails is reported, the others go on
                failed[key] = described(error)
                continue
            if round_ >= WARM_UP_CALLS:
                samples[key].append(elapsed)
    for key in steps:
        out[key] = figure(failed=failed[key]) if key in failed else figure(samples[key])
    if not runs_js:
        out["javascript_warm"] = server.does_not_run("javascript")
    try:
        result = await server.run(client, "python", PYTHON_CELL, py, EXPECTED)
        out["python_structured_bytes"] = (
            {"bytes": compact_size(result.structured_content)}
            if result.structured_content is not None
            else {"n/a": "its result has no structuredContent"}
        )
    except Exception as error:
        out["python_structured_bytes"] = figure(failed=described(error))
    try:
        # A session of its own whose budget lets the cell finish: it needs more than a default
        # call's fuel on our server (10^10, about a second of CPU).
        heavy = await server.new_session(client, "python", **CPU_BOUND_LIMITS)
        cpu = []
        for _ in range(CPU_BOUND_CALLS):
            run = server.run(client, "python", CPU_BOUND_CELL, heavy, CPU_BOUND_EXPECTED)
            cpu.append(await timed(run))
        out["python_cpu_bound"] = figure(cpu)
    except Exception as error:
        out["python_cpu_bound"] = figure(failed=described(error))
    return out


def native_cpu_bound():
    """The CPU-bound cell's loop in this process's own CPython, natively (`--native-only`):
    sandbox-bench runs it once per run, beside every server's column (issue 25 holds the
    sandbox to a multiple of native). The version goes with the figure: native speed differs a
    lot between CPython releases, and on these machines one CPython's runs of it fall into two
    groups (about 125 and 230 ms for 3.11), so it runs more often than the servers' cell."""
    namespace = {}
    loop = compile(CPU_BOUND_CELL.replace("print(", "(", 1), "<native>", "eval")
    samples = []
    for _ in range(NATIVE_CALLS):
        started = time.perf_counter()
        eval(loop, namespace)
        samples.append(ms_since(started))
    return figure(samples, python=sys.version.split()[0])


async def first_calls_in_sessions(client, server, lang, cell, samples):
    """create_session plus the first call, timed together; one unmeasured session first."""
    times = []
    for i in range(samples + 1):
        await asyncio.sleep(REFILL_PAUSE_S)
        started = time.perf_counter()
        sid = await server.new_session(client, lang)
        await server.run(client, lang, cell, sid, EXPECTED)
        elapsed = ms_since(started)
        try:
            await client.call_tool("destroy_session", {"session_id": sid})
        except Exception:
            pass
        if i > 0:
            times.append(elapsed)
    return times


async def first_calls_after_connecting(command, lang, cell, samples):
    """A server without sessions: a fresh server per sample, its first call timed."""
    from contextlib import AsyncExitStack

    times = []
    for _ in range(samples):
        async with AsyncExitStack() as stack:
            client, _, tools = await connect(command, stack)
            server = Server(tools)
            times.append(await timed(server.run(client, lang, cell, None, EXPECTED)))
    return times


async def measure(command, calls, first_calls):
    from contextlib import AsyncExitStack

    import mcp  # noqa: F401
    from importlib.metadata import version

    report = {"sdk": f"mcp {version('mcp')}"}
    async with AsyncExitStack() as stack:
        client, init, tools = await connect(command, stack)
        server = Server(tools)
        info = init.server_info
        report["server"] = f"{info.name} {info.version}".strip()
        report["code_tool"] = server.tool
        report["sessions"] = server.has_sessions()
        figures = {
            "code_tool_schema_bytes": {"bytes": server.code_tool_schema_bytes, "tool": server.tool},
            "all_schemas_bytes": {"bytes": server.all_schemas_bytes},
        }
        figures.update(await warm_figures(client, server, calls))
        for lang in ("python", "javascript"):
            if lang not in server.languages:
                figures[f"{lang}_first_call"] = server.does_not_run(lang)
        if server.has_sessions():
            cells = [("python", PYTHON_CELL), ("javascript", JAVASCRIPT_CELL)]
            for lang, cell in cells:
                if lang not in server.languages:
                    continue
                try:
                    figures[f"{lang}_first_call"] = figure(
                        await first_calls_in_sessions(client, server, lang, cell, first_calls)
                    )
                except Exception as error:
                    figures[f"{lang}_first_call"] = figure(failed=described(error))
    if not server.has_sessions():
        for lang, cell in [("python", PYTHON_CELL), ("javascript", JAVASCRIPT_CELL)]:
            if lang not in server.languages:
                continue
            try:
                samples = await first_calls_after_connecting(command, lang, cell, first_calls)
                figures[f"{lang}_first_call"] = figure(samples, fresh_server=True)
            except Exception as error:
                figures[f"{lang}_first_call"] = figure(failed=described(error))
    report["figures"] = figures
    return report


async def measure_scientific_starts(command, samples):
    """Our Python runtime's new sessions (run with its pool off, issue 25): create_session
    plus the first call timed together, then `import pandas` in it, and a session created by
    its first execute_code alone (one call); a JavaScript session's create_session plus first
    call; one unmeasured round first."""
    from contextlib import AsyncExitStack

    from importlib.metadata import version

    report = {"sdk": f"mcp {version('mcp')}"}
    firsts, imports, autos, js_firsts = [], [], [], []
    async with AsyncExitStack() as stack:
        client, init, tools = await connect(command, stack)
        server = Server(tools)
        info = init.server_info
        report["server"] = f"{info.name} {info.version}".strip()
        for i in range(samples + 1):
            await asyncio.sleep(REFILL_PAUSE_S)
            sid = f"sdk-bench-scientific-{i}"
            args = {"session_id": sid, "language": "python"}
            started = time.perf_counter()
            await call(client, "create_session", args)
            await server.run(client, "python", PYTHON_CELL, sid, EXPECTED)
            first = ms_since(started)
            imported = await timed(
                server.run(client, "python", "import pandas as pd\nprint(pd.__version__)", sid, "3.")
            )
            await client.call_tool("destroy_session", {"session_id": sid})
            # What an agent does: one execute_code naming a session that does not exist yet.
            await asyncio.sleep(REFILL_PAUSE_S)
            auto = f"sdk-bench-auto-{i}"
            started = time.perf_counter()
            await server.run(client, "python", PYTHON_CELL, auto, EXPECTED)
            created_by_call = ms_since(started)
            await client.call_tool("destroy_session", {"session_id": auto})
            # A JavaScript session the same way (its spare made ahead too).
            await asyncio.sleep(REFILL_PAUSE_S)
            js = f"sdk-bench-js-start-{i}"
            started = time.perf_counter()
            await call(client, "create_session", {"session_id": js, "language": "javascript"})
            await server.run(client, "javascript", JAVASCRIPT_CELL, js, EXPECTED)
            js_first = ms_since(started)
            await client.call_tool("destroy_session", {"session_id": js})
            if i > 0:
                firsts.append(first)
                imports.append(imported)
                autos.append(created_by_call)
                js_firsts.append(js_first)
    report["figures"] = {
        "scientific_first_call": figure(firsts),
        "scientific_import_pandas": figure(imports),
        "scientific_created_by_call": figure(autos),
        "javascript_no_pool_first_call": figure(js_firsts),
    }
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--first-calls", type=int, default=5)
    parser.add_argument(
        "--scientific-starts", type=int, default=0,
        help="measure only this many new Python sessions: first call, then import pandas",
    )
    parser.add_argument(
        "--native-only", action="store_true",
        help="run only the CPU-bound cell's loop natively, in this CPython (no server)",
    )
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if args.native_only:
        figures = {"python_cpu_bound_native": native_cpu_bound()}
        print(json.dumps({"sdk": "none", "server": "native CPython", "figures": figures}))
        return
    if not args.command:
        parser.error("the server's command is missing")
    try:
        mcp_sdk.ensure(__file__, SDK_VERSION)
    except (mcp_sdk.Unavailable, OSError) as error:
        print(f"the MCP Python SDK {SDK_VERSION} cannot be had: {error}", file=sys.stderr)
        sys.exit(3)
    try:
        if args.scientific_starts:
            report = asyncio.run(measure_scientific_starts(args.command, args.scientific_starts))
        else:
            report = asyncio.run(measure(args.command, args.calls, args.first_calls))
    except Exception as error:
        # The server did not start, answer the handshake, or list a tool that runs code.
        why = "; ".join(f"{type(e).__name__}: {e}" for e in leaves(error))
        tail = server_stderr_tail()
        print(f"sdk-bench: {why}; the server's stderr ends: {tail}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(report))


def leaves(error):
    """The errors inside an exception group (anyio raises them), or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


if __name__ == "__main__":
    main()
