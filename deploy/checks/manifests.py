"""The Kubernetes manifests under deploy/kubernetes: strict schema validation against the
bundled schemas of `kubernetes-validate` (offline), the kustomizations' completeness, and the
facts the manifests must share with the Containerfile and the server (user, port, volume, the
environment variables the server knows, memory budget below the limit)."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import yaml

from image import CheckFailed, FinalStage

#: Versions validated against: the oldest we claim to support, up to the newest bundled.
OLDEST_KUBERNETES = (1, 30)

_QUANTITY = re.compile(r"^([0-9.]+)([a-zA-Z]*)$")
_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "m": 10**-3,
}


def quantity(text: str | int) -> float:
    """A Kubernetes resource quantity (`6Gi`, `500m`, `2`) as a number."""
    match = _QUANTITY.match(str(text))
    if not match or match[2] not in _SUFFIXES:
        raise CheckFailed(f"not a quantity: {text}")
    return float(match[1]) * _SUFFIXES[match[2]]


def manifest_files(directory: Path) -> list[Path]:
    """Every manifest (YAML that is not a kustomization) under `directory`."""
    return sorted(p for p in directory.rglob("*.yaml") if p.name != "kustomization.yaml")


def documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def kubernetes_versions() -> list[str]:
    versions = kubernetes_validate.utils.all_versions()
    return [v for v in versions if tuple(map(int, v.split(".")[:2])) >= OLDEST_KUBERNETES]


def validate_strict(resource: dict, versions: list[str]) -> None:
    """Validates one resource against every version's schema, unknown fields being errors and
    an unknown kind (no schema) too."""
    name = f"{resource.get('kind')}/{resource.get('metadata', {}).get('name')}"
    for version in versions:
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            where = ".".join(str(p) for p in error.path)
            raise CheckFailed(f"{name} (Kubernetes {version}): {where}: {error.message}") from None
        except kubernetes_validate.SchemaNotFoundError as error:
            raise CheckFailed(f"{name}: {error.message}") from None


def check_kustomizations(directory: Path) -> list[str]:
    """Every kustomization names only files that exist, and every manifest is in one."""
    listed: set[Path] = set()
    notes = []
    for kustomization in sorted(directory.rglob("kustomization.yaml")):
        spec = yaml.safe_load(kustomization.read_text())
        for entry in spec.get("resources", []):
            target = (kustomization.parent / entry).resolve()
            if not target.exists():
                raise CheckFailed(f"{kustomization}: {entry} does not exist")
            if target.is_dir() and not (target / "kustomization.yaml").is_file():
                raise CheckFailed(f"{kustomization}: {entry} has no kustomization.yaml")
            listed.add(target)
        notes.append(f"{kustomization.parent.name}: {len(spec.get('resources', []))} resources")
    unlisted = [p for p in manifest_files(directory) if p.resolve() not in listed]
    if unlisted:
        raise CheckFailed(f"in no kustomization: {', '.join(map(str, unlisted))}")
    return notes


def by_kind(directory: Path) -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for path in manifest_files(directory):
        for doc in documents(path):
            kinds.setdefault(doc["kind"], []).append(doc)
    return kinds


def server_variables(help_text: str) -> set[str]:
    """The environment variables `sandbox-mcp --help` documents."""
    return set(re.findall(r"\[env: ([A-Z0-9_]+)", help_text))


def check_consistency(kinds: dict[str, list[dict]], stage: FinalStage, known: set[str]) -> None:
    """What the Deployment, Service, NetworkPolicy and Containerfile must agree on."""
    deployment = only(kinds, "Deployment")
    pod = deployment["spec"]["template"]
    spec = pod["spec"]
    container = only_item(spec["containers"], "container")
    port = only_item(container["ports"], "container port")["containerPort"]
    expect(stage.user is not None, "the Containerfile has no USER")
    uid, gid = stage.user
    pod_security = spec.get("securityContext", {})
    expect(pod_security.get("runAsUser") == uid, f"runAsUser is not the image's USER {uid}")
    expect(pod_security.get("runAsGroup") == gid, f"runAsGroup is not the image's group {gid}")
    expect(pod_security.get("runAsNonRoot") is True, "runAsNonRoot is not set")
    security = container.get("securityContext", {})
    expect(security.get("readOnlyRootFilesystem") is True, "the root filesystem is writable")
    expect(security.get("allowPrivilegeEscalation") is False, "privilege escalation is allowed")
    expect(security.get("capabilities", {}).get("drop") == ["ALL"], "capabilities are kept")
    image_port = int(stage.env.get("SANDBOX_HTTP_ADDR", ":0").rsplit(":", 1)[1])
    expect(
        stage.expose == [port] == [image_port],
        f"ports differ: EXPOSE {stage.expose}, "
        f"SANDBOX_HTTP_ADDR {image_port}, containerPort {port}",
    )
    mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
    expect(set(stage.volumes) | {"/tmp"} <= set(mounts), f"not mounted: {stage.volumes} and /tmp")
    for name in ("SANDBOX_STATE_DIR", "SANDBOX_CACHE_DIR"):
        expect(
            stage.env.get(name, "").startswith(stage.volumes[0] + "/"),
            f"{name} is not on the volume {stage.volumes[0]}",
        )
    check_environment(container, stage, known)
    check_resources(container)
    probes = (container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"])
    expect([p["path"] for p in probes] == ["/healthz", "/readyz"], "probe paths")
    expect(all(p["port"] in (port, "http") for p in probes), "probes not on the HTTP port")
    annotations = pod["metadata"].get("annotations", {})
    expect(annotations.get("prometheus.io/port") == str(port), "the scrape port is not the port")
    policy = only(kinds, "NetworkPolicy")["spec"]
    expect(policy.get("egress") == [] and "Egress" in policy["policyTypes"], "egress is allowed")
    ports = [p["port"] for rule in policy["ingress"] for p in rule.get("ports", [])]
    expect(ports == [port], f"ingress is open on {ports}, not only {port}")
    service = only(kinds, "Service")
    service_ports = service["spec"]["ports"]
    expect([p["targetPort"] for p in service_ports] == ["http"], "the Service targets another port")
    for ingress in kinds.get("Ingress", []):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                expect(
                    backend["name"] == service["metadata"]["name"]
                    and backend["port"].get("name") in {p["name"] for p in service_ports},
                    f"an Ingress routes to {backend}, not to the Service's port",
                )


def check_environment(container: dict, stage: FinalStage, known: set[str]) -> None:
    """Every SANDBOX_* variable set is one the server knows, and the token is a secret."""
    env = {e["name"]: e for e in container.get("env", [])}
    for name in [*env, *stage.env]:
        if name.startswith("SANDBOX_"):
            expect(name in known, f"{name} is not a setting of sandbox-mcp (see --help)")
    token = env.get("SANDBOX_HTTP_TOKEN", {})
    expect("secretKeyRef" in token.get("valueFrom", {}), "SANDBOX_HTTP_TOKEN is not from a Secret")
    for name, variable in env.items():
        if name.endswith("_TOKEN"):
            expect("secretKeyRef" in variable.get("valueFrom", {}), f"{name} is not from a Secret")
            expect("value" not in variable, f"the manifest carries a value of {name}")


def check_resources(container: dict) -> None:
    """The admission budget fits under the memory limit, and requests do not exceed limits."""
    resources = container["resources"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    limit = quantity(resources["limits"]["memory"])
    budget = float(env.get("SANDBOX_MEMORY_BUDGET_BYTES") or 0)
    expect(0 < budget < limit, f"SANDBOX_MEMORY_BUDGET_BYTES {budget:.0f} is not below {limit:.0f}")
    expect("SANDBOX_MAX_SESSIONS" in env, "SANDBOX_MAX_SESSIONS is not set")
    for name, request in resources["requests"].items():
        expect(quantity(request) <= quantity(resources["limits"][name]), f"{name} request > limit")


def only(kinds: dict[str, list[dict]], kind: str) -> dict:
    found = kinds.get(kind, [])
    expect(len(found) == 1, f"expected one {kind}, found {len(found)}")
    return found[0]


def only_item(items: list, what: str):
    expect(len(items) == 1, f"expected one {what}, found {len(items)}")
    return items[0]


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)
