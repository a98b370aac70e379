"""deploy/validate's checks, in order, each printed with its outcome and time; exits 1 when one
fails. Every check has a twin that feeds it something broken and expects a refusal, so a check
that can no longer fail is noticed."""

from __future__ import annotations

import copy
import filecmp
import secrets
import subprocess
import sys
import time
from pathlib import Path

import image
import manifests
from image import CheckFailed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
KUBERNETES = ROOT / "deploy" / "kubernetes"
CONTAINERFILE = ROOT / "Containerfile"
SERVER = ROOT / "target" / "release" / "sandbox-mcp"
WORK = ROOT / "target" / "deploy-validate"

#: A Containerfile with mistakes hadolint knows (latest tag, `cd` in RUN, root user).
BROKEN_CONTAINERFILE = "FROM debian:latest\nRUN cd /src && apt-get install curl\nUSER root\n"


def hadolint(text: str) -> subprocess.CompletedProcess:
    linter = Path(sys.executable).parent / "hadolint"
    return subprocess.run(
        [str(linter), "--no-color", "-"], input=text, text=True, capture_output=True, check=False
    )


def containerfile_lints_clean() -> str:
    result = hadolint(CONTAINERFILE.read_text())
    if result.returncode != 0:
        raise CheckFailed(result.stdout + result.stderr)
    return "hadolint: no findings"


def hadolint_rejects_a_broken_containerfile() -> str:
    result = hadolint(BROKEN_CONTAINERFILE)
    found = [code for code in ("DL3007", "DL3003", "DL3002") if code in result.stdout]
    if result.returncode == 0 or len(found) != 3:
        raise CheckFailed(f"hadolint let it pass: {result.stdout}")
    return f"refused: {', '.join(found)}"


def ignore_files_agree() -> str:
    if not filecmp.cmp(ROOT / ".containerignore", ROOT / ".dockerignore", shallow=False):
        raise CheckFailed(".dockerignore is not a copy of .containerignore")
    return ".dockerignore = .containerignore"


def manifests_match_the_schemas() -> str:
    versions = manifests.kubernetes_versions()
    count = 0
    for path in manifests.manifest_files(KUBERNETES):
        for resource in manifests.documents(path):
            manifests.validate_strict(resource, versions)
            count += 1
    return f"{count} resources, strict, Kubernetes {versions[0]} to {versions[-1]}"


def schemas_reject_broken_manifests() -> str:
    versions = manifests.kubernetes_versions()[-1:]
    deployment = manifests.documents(KUBERNETES / "base" / "deployment.yaml")[0]
    unknown_field = copy.deepcopy(deployment)
    unknown_field["spec"]["template"]["spec"]["containers"][0]["securityContext"][
        "readOnlyRootFileSystem"
    ] = True
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "8765"
    unknown_kind = {"apiVersion": "v1", "kind": "Sandbox", "metadata": {"name": "x"}}
    for broken in (unknown_field, wrong_type, unknown_kind):
        try:
            manifests.validate_strict(broken, versions)
        except CheckFailed:
            continue
        raise CheckFailed(f"accepted: {broken.get('kind')} with a planted mistake")
    return "refused: an unknown field, a string port, an unknown kind"


def kustomizations_are_complete() -> str:
    return "; ".join(manifests.check_kustomizations(KUBERNETES))


def final_stage() -> image.FinalStage:
    return image.parse_final_stage(CONTAINERFILE.read_text(), ROOT)


def manifests_agree_with_image_and_server() -> str:
    help_text = subprocess.run(
        [str(SERVER), "--help"], capture_output=True, text=True, check=True
    ).stdout
    known = manifests.server_variables(help_text)
    manifests.check_consistency(manifests.by_kind(KUBERNETES), final_stage(), known)
    return f"user, port, volume, probes, policy; {len(known)} variables known to the server"


def deployment_environment(token: str) -> dict[str, str]:
    """The variables the Deployment sets, over the image's, with `token` for the Secret's."""
    deployment = manifests.by_kind(KUBERNETES)["Deployment"][0]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e["value"] if "value" in e else token for e in container.get("env", [])}


def rehearsal_serves_mcp() -> str:
    """Runs the final stage as the image would, with the Deployment's environment, and drives
    one MCP session over HTTP."""
    stage = final_stage()
    volume = image.fresh_volume(WORK / "volume", *stage.user)
    token = secrets.token_urlsafe(24)
    rehearsal = image.start(stage, volume, deployment_environment(token), WORK / "server.log")
    try:
        listening = image.wait_for_port(rehearsal, 120)
        notes = drive_mcp(image.McpClient(rehearsal.port, token))
        probes = {
            path: image.poll_status(rehearsal.port, path, 200, 30)
            for path in ("/healthz", "/readyz")
        }
        if set(probes.values()) != {200}:
            raise CheckFailed(f"probes without a token answered {probes}")
    finally:
        status = rehearsal.stop()
    if status != 0:
        raise CheckFailed(f"exit status {status} after SIGTERM:\n{rehearsal.log_tail()}")
    # On the host that built them, the image's modules fit: they are used in place, read-only,
    # and nothing is compiled or copied onto the volume.
    compiled = sorted(p.name for p in (volume / "cache").glob("*.cwasm"))
    if compiled:
        raise CheckFailed(f"modules compiled onto the volume instead of used in place: {compiled}")
    return f"listening after {listening:.1f} s; {notes}; probes 200; image modules used in place"


def drive_mcp(client: image.McpClient) -> str:
    client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "deploy-validate", "version": "1"},
        },
    )
    client.notify("notifications/initialized")
    # The interpreter's stdlib zip and data directories are files of their own: numpy proves
    # they are mounted.
    calls = [
        ("python", {}, "6 * 7"),
        ("javascript", {}, "6 * 7"),
        ("numpy", {}, "import numpy\nint(numpy.arange(7).sum() * 2)"),
    ]
    answers = []
    for label, session, code in calls:
        language = "javascript" if label == "javascript" else "python"
        started = time.monotonic()
        result = client.call_tool("execute_code", {"language": language, "code": code, **session})
        if not result.get("success") or result.get("result") != "42":
            raise CheckFailed(f"{label}: {code!r}: {result}")
        answers.append(f"{label} 42 in {1000 * (time.monotonic() - started):.0f} ms")
    health = client.call_tool("list_runtimes", {}).get("health", {})
    return ", ".join(answers) + f"; jail: {jail_summary(health)}"


def jail_summary(health: dict) -> str:
    """The worker jail layers `list_runtimes` reports (health.jail), one word or so each."""
    jail = health.get("jail") or {}
    if not jail:
        raise CheckFailed(f"list_runtimes reports no jail: {health}")
    layers = ("seccomp", "landlock", "network", "nproc", "inherited_fds")
    return ", ".join(f"{layer} {str(jail.get(layer, '?')).split(':')[0][:40]}" for layer in layers)


def rehearsal_refuses_to_serve_without_a_token() -> str:
    stage = final_stage()
    volume = image.fresh_volume(WORK / "volume-no-token", *stage.user)
    rehearsal = image.start(stage, volume, {}, WORK / "no-token.log")
    status = wait_exit(rehearsal, 30)
    if status == 0 or "SANDBOX_HTTP_TOKEN" not in rehearsal.log.read_text():
        raise CheckFailed(f"status {status}:\n{rehearsal.log_tail()}")
    return f"exit status {status}, naming SANDBOX_HTTP_TOKEN"


def rehearsal_catches_a_write_outside_the_volume() -> str:
    """Moves the state directory onto the image's read-only root: the server must not start,
    which shows the root really is read-only and that the rehearsal notices."""
    stage = image.with_env(final_stage(), SANDBOX_STATE_DIR="/opt/sandbox-mcp/state")
    volume = image.fresh_volume(WORK / "volume-read-only", *stage.user)
    rehearsal = image.start(stage, volume, {"SANDBOX_HTTP_TOKEN": "x" * 24}, WORK / "read-only.log")
    status = wait_exit(rehearsal, 60)
    if status == 0:
        raise CheckFailed("the server started with its state on the read-only root")
    return f"exit status {status}: {rehearsal.log_tail(1)[:120]}"


def wait_exit(rehearsal: image.Rehearsal, seconds: float) -> int:
    try:
        return rehearsal.process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        rehearsal.stop()
        raise CheckFailed(f"still running after {seconds:.0f} s:\n{rehearsal.log_tail()}") from None


CHECKS = [
    containerfile_lints_clean,
    hadolint_rejects_a_broken_containerfile,
    ignore_files_agree,
    manifests_match_the_schemas,
    schemas_reject_broken_manifests,
    kustomizations_are_complete,
    manifests_agree_with_image_and_server,
    rehearsal_serves_mcp,
    rehearsal_refuses_to_serve_without_a_token,
    rehearsal_catches_a_write_outside_the_volume,
]


def main() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    failed = []
    for check in CHECKS:
        name = check.__name__.replace("_", " ")
        started = time.monotonic()
        try:
            note = check()
        except (CheckFailed, OSError, subprocess.CalledProcessError) as error:
            failed.append(name)
            print(f"FAIL {name} ({time.monotonic() - started:.1f} s)\n  {error}", flush=True)
        else:
            print(f"ok   {name} ({time.monotonic() - started:.1f} s): {note}", flush=True)
    if failed:
        print(f"deploy/validate: {len(failed)} of {len(CHECKS)} checks failed", flush=True)
        return 1
    print(f"deploy/validate: all {len(CHECKS)} checks hold", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
