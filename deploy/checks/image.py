"""The Containerfile's final stage as data, and its rehearsal on this host.

No container engine or image registry is reachable here, so the image itself cannot be built.
What can be checked is what the final stage promises: the files its COPY lines put in place are
all there is (each becomes a read-only bind mount of the file the builder stage would have made,
which `runtimes/prepare.sh` already made in this checkout), the server runs from them as the
image's numeric USER with the image's ENV, on a read-only root with only the VOLUME and /tmp
writable, and answers MCP over HTTP. Debian bookworm's /usr and /etc of this host stand in for
the slim base image. The final stage's RUN lines are not executed; the one that creates the
volume directory is mirrored by handing the server a fresh directory owned by that uid.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from email.message import Message
from pathlib import Path

import dockerfile


class CheckFailed(Exception):
    """A check found something wrong; the message says what."""


@dataclass
class FinalStage:
    """What the last stage of a Containerfile puts into the image and how it starts it."""

    #: (file on this host, path in the image), one per COPY source.
    copies: list[tuple[Path, str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    user: tuple[int, int] | None = None
    volumes: list[str] = field(default_factory=list)
    workdir: str = "/"
    expose: list[int] = field(default_factory=list)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)


def parse_final_stage(text: str, context: Path) -> FinalStage:
    """Reads a Containerfile with BuildKit's own parser. COPY sources of an earlier stage are
    looked up in `context`: the builder's WORKDIR holds the build context, and what the builder
    makes lands where the same commands make it in this checkout."""
    commands = dockerfile.parse_string(text)
    stage_workdirs: dict[str, str] = {}
    stage_name, workdir = "", "/"
    final = FinalStage()
    for command in commands:
        name = command.cmd.upper()
        if name == "FROM":
            if stage_name:
                stage_workdirs[stage_name] = workdir
            words = command.value
            stage_name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else "final"
            workdir, final = "/", FinalStage()
        elif name == "WORKDIR":
            workdir = final.workdir = command.value[0]
        elif name == "COPY":
            final.copies.extend(copy_sources(command, stage_workdirs, context))
        elif name == "ENV":
            pairs = command.value
            final.env.update(zip(pairs[0::2], pairs[1::2], strict=True))
        elif name == "USER":
            final.user = numeric_user(command.value[0])
        elif name == "VOLUME":
            final.volumes.extend(command.value)
        elif name == "EXPOSE":
            final.expose.extend(int(port.split("/")[0]) for port in command.value)
        elif name in ("ENTRYPOINT", "CMD"):
            if not command.json:
                raise CheckFailed(f"line {command.start_line}: {name} must use the exec form")
            setattr(final, name.lower(), list(command.value))
    return final


def copy_sources(command, stage_workdirs: dict[str, str], context: Path) -> list[tuple[Path, str]]:
    """The (host file, image path) pairs of one COPY line."""
    source_stage = next(
        (flag.split("=", 1)[1] for flag in command.flags if flag.startswith("--from=")), None
    )
    *sources, dest = command.value
    into_directory = dest.endswith("/") or len(sources) > 1
    pairs = []
    for source in sources:
        if source_stage is None:
            host = context / source
        else:
            base = stage_workdirs.get(source_stage)
            if base is None:
                raise CheckFailed(f"line {command.start_line}: unknown stage {source_stage}")
            relative = os.path.relpath(source, base)
            if relative.startswith(".."):
                raise CheckFailed(
                    f"line {command.start_line}: {source} is outside the builder's WORKDIR {base}"
                )
            host = context / relative
        target = dest.rstrip("/") + "/" + Path(source).name if into_directory else dest
        pairs.append((host, target))
    return pairs


def numeric_user(spec: str) -> tuple[int, int]:
    """`UID[:GID]` as numbers: Kubernetes' runAsNonRoot can only verify a numeric user."""
    uid, _, gid = spec.partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        raise CheckFailed(f"USER {spec} is not numeric")
    return int(uid), int(gid or uid)


def bwrap_command(stage: FinalStage, volume: Path, env: dict[str, str]) -> list[str]:
    """The bubblewrap command line that runs the stage's ENTRYPOINT and CMD like the image would
    (read-only root, writable volume and /tmp, the stage's user, environment and files)."""
    if stage.user is None or not stage.entrypoint:
        raise CheckFailed("the final stage needs a USER and an ENTRYPOINT")
    if len(stage.volumes) != 1:
        raise CheckFailed(f"expected one VOLUME, found {stage.volumes}")
    uid, gid = stage.user
    args = ["bwrap", "--unshare-user", "--uid", str(uid), "--gid", str(gid)]
    args += ["--unshare-ipc", "--unshare-uts", "--die-with-parent", "--clearenv"]
    # The base image: this host's Debian, read-only (merged /usr: the top-level links).
    for top in ("bin", "lib", "lib64", "sbin"):
        link = Path("/") / top
        if link.is_symlink():
            args += ["--symlink", os.readlink(link), f"/{top}"]
        elif link.is_dir():
            args += ["--ro-bind", str(link), f"/{top}"]
    args += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--ro-bind", "/sys", "/sys"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for host, target in stage.copies:
        if not host.exists():
            raise CheckFailed(f"COPY source missing: {host} (for {target})")
        args += ["--ro-bind", str(host), target]
    args += ["--bind", str(volume), stage.volumes[0]]
    for name, value in {**stage.env, **env}.items():
        args += ["--setenv", name, value]
    args += ["--remount-ro", "/", "--chdir", stage.workdir]
    return args + stage.entrypoint + stage.cmd


def as_user(command: list[str], uid: int, gid: int) -> list[str]:
    """Runs `command` as `uid` on this host too when we are root, so that the rehearsal's user
    is unprivileged outside its namespace as well."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *command]


@dataclass
class Rehearsal:
    """One server started from a final stage, with its log."""

    process: subprocess.Popen
    port: int
    token: str
    log: Path

    def stop(self) -> int:
        """SIGTERM to the entry point, as a container runtime sends it to the container's first
        process (bwrap itself only passes its child's exit status on); returns that status."""
        if self.process.poll() is None:
            children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
            pids = children.read_text().split() if children.exists() else []
            for pid in pids or [str(self.process.pid)]:
                os.kill(int(pid), signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise CheckFailed("the server did not stop within 30 s of SIGTERM") from None

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def start(stage: FinalStage, volume: Path, env: dict[str, str], log: Path) -> Rehearsal:
    """Starts the stage's entry point under bubblewrap on a free loopback-reachable port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = stage.env.get("SANDBOX_HTTP_ADDR", "0.0.0.0:8765").rsplit(":", 1)[0]
    env = {"SANDBOX_HTTP_ADDR": f"{address}:{port}", **env}
    uid, gid = stage.user or (0, 0)
    command = as_user(bwrap_command(stage, volume, env), uid, gid)
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    return Rehearsal(process, port, env.get("SANDBOX_HTTP_TOKEN", ""), log)


def fresh_volume(path: Path, uid: int, gid: int) -> Path:
    """An empty directory owned by the image's user, like the image's VOLUME directory."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    if os.geteuid() == 0:
        os.chown(path, uid, gid)
    path.chmod(0o700)
    return path


def with_env(stage: FinalStage, **changes: str) -> FinalStage:
    """The same stage with some ENV values changed (for the self-test)."""
    return replace(stage, env={**stage.env, **changes})


class McpClient:
    """Just enough Streamable HTTP to initialize a session and call tools."""

    def __init__(self, port: int, token: str):
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.token = token
        self.session = ""
        self.next_id = 0

    def _post(self, message: dict) -> tuple[int, Message, bytes]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        request = urllib.request.Request(self.url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.headers, response.read()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        _, headers, body = self._post(message)
        self.session = self.session or headers.get("Mcp-Session-Id", "")
        reply = find_reply(body, self.next_id)
        if "error" in reply:
            raise CheckFailed(f"{method}: {reply['error']}")
        return reply["result"]

    def notify(self, method: str) -> None:
        self._post({"jsonrpc": "2.0", "method": method})

    def call_tool(self, name: str, arguments: dict) -> dict:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return result.get("structuredContent") or {}


def find_reply(body: bytes, request_id: int) -> dict:
    """The JSON-RPC reply to `request_id` in a JSON body or an SSE stream of `data:` events."""
    text = body.decode()
    candidates = (
        [text]
        if text.lstrip().startswith("{")
        else [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    )
    for candidate in candidates:
        if not candidate:
            continue
        message = json.loads(candidate)
        if message.get("id") == request_id:
            return message
    raise CheckFailed(f"no reply to request {request_id} in: {text[:300]}")


def wait_for_port(rehearsal: Rehearsal, seconds: float) -> float:
    """Waits until the server accepts connections; returns how long that took."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if rehearsal.process.poll() is not None:
            raise CheckFailed(
                f"the server exited ({rehearsal.process.returncode}):\n{rehearsal.log_tail()}"
            )
        try:
            with socket.create_connection(("127.0.0.1", rehearsal.port), timeout=1):
                return time.monotonic() - started
        except OSError:
            time.sleep(0.2)
    raise CheckFailed(f"the server did not listen within {seconds:.0f} s:\n{rehearsal.log_tail()}")


def http_status(port: int, path: str) -> int:
    """The status of a plain GET, as a kubelet probe sends it (no token)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def poll_status(port: int, path: str, wanted: int, seconds: float) -> int:
    """GETs `path` until it answers `wanted` or `seconds` pass; returns the last status (a
    readiness probe fails until the interpreters are loaded and a worker started)."""
    deadline = time.monotonic() + seconds
    while True:
        status = http_status(port, path)
        if status == wanted or time.monotonic() > deadline:
            return status
        time.sleep(0.5)
