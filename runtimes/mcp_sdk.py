"""The official MCP Python SDK for the measuring scripts (runtimes/measure-imports.py,
runtimes/python-scientific/measure.py): they talk to the real server as any client would.
`ensure()` re-runs the calling script in the venv ../shared/tools/mcp-call uses (created on
demand) when `mcp` is not importable here."""

import os
import subprocess
import sys
from pathlib import Path

VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcp-sdk-venv"


def ensure(script):
    """Returns when `mcp` imports; otherwise replaces this process with `script` in the venv."""
    try:
        import mcp  # noqa: F401
        return
    except ImportError:
        pass
    py = VENV / "bin/python"
    if os.environ.get("MCP_SDK_REEXEC"):
        sys.exit(f"the MCP Python SDK is not importable from {py}")
    has_mcp = py.exists() and subprocess.run([str(py), "-c", "import mcp"]).returncode == 0
    if not has_mcp:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin/pip"), "install", "-q", "mcp"], check=True)
    os.environ["MCP_SDK_REEXEC"] = "1"
    os.execv(str(py), [str(py), script, *sys.argv[1:]])
