"""Drives sandbox-mcp over Streamable HTTP with the official MCP Python SDK, a client we did not
write, as a model's host would: initialize, list tools, execute Python and JavaScript, progress
notifications, both ways of cancelling, and session termination.

Usage: interop.py URL TOKEN

The script observes and the Rust test (tests/tests/e2e/http_sdk.rs) judges: stdout carries one
JSON object per line per check, `{"check": NAME, ...facts}`, or `{"check": NAME, "error": TEXT}`
when the step raised or timed out. The SDK's own log goes to stderr. Every step is bounded by
STEP_SECONDS, so a server that never answers fails one check instead of hanging the test.
"""

import json
import logging
import re
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

STEP_SECONDS = 20.0
"""Longest any one check may take: the slowest (progress) needs about 3 s."""

CANCEL_SESSION = "sdk-cancel"
"""The session the cancellation checks spin in, with fuel for minutes of looping."""

SPIN = "while True:\n    n += 1"
"""A loop that only a cancel ends within the test (its timeout is a minute away)."""

EXECUTION_ID = re.compile(r"exec-[0-9a-f]+")
"""How an execution id looks in a progress message ("execution exec-… running (0 s)")."""

Facts = dict[str, Any]


def report(check: str, facts: Facts) -> None:
    print(json.dumps({"check": check, **facts}), flush=True)


async def run_check(check: str, step: Callable[..., Awaitable[Facts]], *args: Any) -> None:
    """Runs one step under its time bound and reports its facts, or what went wrong."""
    try:
        with anyio.fail_after(STEP_SECONDS):
            facts = await step(*args)
    except Exception as error:  # every failure is a finding for the Rust side to show
        report(check, {"error": "".join(traceback.format_exception(error))})
        return
    report(check, facts)


class Wire:
    """What crossed HTTP, seen through httpx2's event hooks: the MCP session id the server
    assigned, the protocol version the SDK negotiated, the JSON-RPC methods it posted, and the
    answers to its DELETEs."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.posted: list[str] = []
        self.delete_statuses: list[int] = []

    async def on_request(self, request: httpx2.Request) -> None:
        self.protocol_version = request.headers.get("mcp-protocol-version", self.protocol_version)
        if request.method != "POST":
            return
        try:
            body = json.loads(request.content)
        except ValueError:
            return
        for message in body if isinstance(body, list) else [body]:
            if isinstance(message, dict) and "method" in message:
                self.posted.append(message["method"])

    async def on_response(self, response: httpx2.Response) -> None:
        if response.request.method == "DELETE":
            self.delete_statuses.append(response.status_code)
        elif self.session_id is None and "mcp-session-id" in response.headers:
            self.session_id = response.headers["mcp-session-id"]


class Warnings(logging.Handler):
    """Every warning or error the SDK logs (its `mcp` loggers), e.g. "Session termination
    failed: 202" when a DELETE gets an answer it does not expect."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


def outcome(result: Any) -> Facts:
    """The parts of an execute_code result the checks judge (the SDK has already validated a
    successful result against the tool's output schema). A field with nothing to say is left
    out of the result: a flag reads as false, anything else as None."""
    content = result.structured_content or {}
    keys = ("success", "result", "error_type", "execution_id", "session_id", "error_message",
            "restart_reason")
    flags = ("session_restarted", "worker_killed")
    return {"is_error": result.is_error, **{k: content.get(k) for k in keys},
            **{k: content.get(k, False) for k in flags}}


def data(result: Any) -> Facts:
    """The structured answer of a tool without an output schema."""
    return {"is_error": result.is_error, **(result.structured_content or {})}


async def execute(session: ClientSession, language: str, code: str, **extra: Any) -> Any:
    return await session.call_tool("execute_code", {"language": language, "code": code, **extra})


async def initialize(session: ClientSession) -> Facts:
    init = await session.initialize()
    return {"protocol_version": init.protocol_version, "server_name": init.server_info.name}


async def list_tools(session: ClientSession) -> Facts:
    listed = await session.list_tools()
    tools = {
        tool.name: {"output_schema_type": (tool.output_schema or {}).get("type")}
        for tool in listed.tools
    }
    return {"tools": tools, "next_cursor": listed.next_cursor}


async def state_kept(session: ClientSession, language: str, first: str, second: str) -> Facts:
    """Two calls in the MCP session's default session of `language`: the second reads what the
    first defined."""
    before = await execute(session, language, first)
    after = await execute(session, language, second)
    return {"first": outcome(before), "second": outcome(after)}


async def progress(session: ClientSession) -> Facts:
    """A call of about 2.5 s with a progress callback: what the SDK hands the callback."""
    seen: list[Facts] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append({"progress": value, "total": total, "message": message})

    result = await session.call_tool(
        "execute_code",
        {"language": "python", "code": "import time\ntime.sleep(2.5)\n'slept'"},
        progress_callback=on_progress,
    )
    return {"notifications": seen, "result": outcome(result)}


class Spin:
    """The SPIN loop in CANCEL_SESSION, called with a progress callback: like a model, it learns
    the execution id from the first progress message."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.execution_id: str | None = None
        self.id_known = anyio.Event()
        # The first message can come as the execution is handed to the worker, before its
        # code runs (a cancel then finds nothing ran); a later one comes while the loop runs.
        self.running = anyio.Event()
        self.messages = 0
        self.result: Any = None

    async def on_progress(self, value: float, total: float | None, message: str | None) -> None:
        self.messages += 1
        found = EXECUTION_ID.search(message or "")
        if found and self.execution_id is None:
            self.execution_id = found.group(0)
            self.id_known.set()
        if self.messages >= 2:
            self.running.set()

    async def run(self) -> None:
        self.result = await self.session.call_tool(
            "execute_code",
            {"language": "python", "session_id": CANCEL_SESSION, "code": SPIN, "timeout": 60},
            progress_callback=self.on_progress,
        )


async def cancel_by_id(session: ClientSession) -> Facts:
    """`cancel_execution` with the id a progress message named, while the loop runs."""
    created = await session.call_tool(
        "create_session",
        {"language": "python", "session_id": CANCEL_SESSION, "fuel_budget": 10**12},
    )
    if created.is_error:
        return {"error": f"create_session failed: {created.structured_content}"}
    await execute(session, "python", "n = 0", session_id=CANCEL_SESSION)
    spin = Spin(session)
    async with anyio.create_task_group() as group:
        group.start_soon(spin.run)
        await spin.id_known.wait()
        await spin.running.wait()
        cancelled = await session.call_tool(
            "cancel_execution", {"execution_id": spin.execution_id}
        )
    after = await execute(session, "python", "n > 0", session_id=CANCEL_SESSION)
    return {
        "execution_id": spin.execution_id,
        "cancel": data(cancelled),
        "spin": outcome(spin.result),
        "after": outcome(after),
    }


async def abandon(session: ClientSession, wire: Wire) -> Facts:
    """MCP request cancellation: the task awaiting the loop's call is cancelled, and the SDK
    tells the server (notifications/cancelled). The next call in that session queues behind the
    loop, so its answer shows the loop stopped; cancel_execution then says how it ended."""
    posted_before = len(wire.posted)
    spin = Spin(session)
    async with anyio.create_task_group() as group:
        group.start_soon(spin.run)
        await spin.id_known.wait()
        await spin.running.wait()
        group.cancel_scope.cancel()
    after = await execute(session, "python", "n > 0", session_id=CANCEL_SESSION)
    late = await session.call_tool("cancel_execution", {"execution_id": spin.execution_id})
    return {
        "execution_id": spin.execution_id,
        "answered_before_abandoned": spin.result is not None,
        "posted": wire.posted[posted_before:],
        "after": outcome(after),
        "late_cancel": data(late),
    }


async def terminated(http: httpx2.AsyncClient, url: str, wire: Wire, warnings: Warnings) -> Facts:
    """After the client context closed (and sent DELETE): what the SDK logged about it, and what
    a raw request with the old Mcp-Session-Id gets."""
    facts: Facts = {
        "session_id": wire.session_id,
        "delete_statuses": wire.delete_statuses,
        "sdk_warnings": warnings.messages,
    }
    if wire.session_id is None:
        return facts
    late = await http.post(
        url,
        headers={
            "Mcp-Session-Id": wire.session_id,
            "Mcp-Protocol-Version": wire.protocol_version or "2025-11-25",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    facts["old_session_status"] = late.status_code
    return facts


async def main(url: str, token: str) -> None:
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    wire = Wire()
    hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(STEP_SECONDS),
        event_hooks=hooks,
    ) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=STEP_SECONDS) as session:
                await run_check("initialize", initialize, session)
                await run_check("list_tools", list_tools, session)
                await run_check("python_state", state_kept, session, "python", "x = 41", "x + 1")
                await run_check(
                    "javascript_state", state_kept, session, "javascript", "var y = 41;", "y + 1"
                )
                await run_check("progress", progress, session)
                await run_check("cancel_execution", cancel_by_id, session)
                await run_check("request_cancellation", abandon, session, wire)
        await run_check("termination", terminated, http, url, wire, warnings)


if __name__ == "__main__":
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s"
    )
    anyio.run(main, sys.argv[1], sys.argv[2])
