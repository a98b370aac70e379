"""The official MCP Python SDK for the measuring scripts (runtimes/measure-imports.py,
runtimes/python/measure.py, runtimes/sdk-bench.py): they talk to the real server as
any client would. `ensure()` re-runs the calling script in the venv ../shared/tools/mcp-call uses
(created on demand) when `mcp` is not importable here; `ensure(script, version)` in a venv of
that exact release, for figures that depend on what the SDK does per call."""

import os
import subprocess
import sys
from pathlib import Path

VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcp-sdk-venv"


class Unavailable(Exception):
    """The SDK could not be installed or imported (no venv module, no registry, ...)."""


def _has_sdk(version):
    """Whether `mcp` imports here, at `version` when one is given."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False
    if version is None:
        return True
    from importlib.metadata import version as installed

    return installed("mcp") == version


def ensure(script, version=None):
    """Returns when `mcp` (at `version`, if given) imports; otherwise replaces this process with
    `script` in the venv that has it, creating the venv first.

    Raises:
        Unavailable: the venv cannot be created or the SDK not installed, or it still does not
            import after the re-run.
    """
    if _has_sdk(version):
        return
    venv = VENV if version is None else VENV.with_name(f"mcp-sdk-{version}-venv")
    requirement = "mcp" if version is None else f"mcp=={version}"
    py = venv / "bin/python"
    if os.environ.get("MCP_SDK_REEXEC"):
        raise Unavailable(f"{requirement} is not importable from {py}")
    check = f"import mcp, importlib.metadata as m; assert {version!r} in (None, m.version('mcp'))"
    probe = [str(py), "-c", check]
    usable = py.exists() and subprocess.run(probe, stderr=subprocess.DEVNULL).returncode == 0
    if not usable:
        make = [sys.executable, "-m", "venv", str(venv)]
        for step in (make, [str(venv / "bin/pip"), "install", "-q", requirement]):
            done = subprocess.run(step, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                tail = done.stderr.strip().splitlines()[-3:]
                raise Unavailable(f"`{' '.join(step)}` failed: {' / '.join(tail)}")
    os.environ["MCP_SDK_REEXEC"] = "1"
    os.execv(str(py), [str(py), script, *sys.argv[1:]])
