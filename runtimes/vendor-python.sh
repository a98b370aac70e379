#!/usr/bin/env bash
# Vendors pure-Python packages for the Python sandboxes: the supervisor mounts OUT_DIR read-only
# at /data, and the driver puts /data/site-packages on sys.path.
#
#   runtimes/vendor-python.sh OUT_DIR    # install vendor/python/requirements.lock into
#                                        # OUT_DIR/site-packages (normally target/runtimes/data)
#   runtimes/vendor-python.sh --relock   # resolve vendor/python/requirements.in again and
#                                        # rewrite vendor/python/requirements.lock
#
# Reproducible: every file is pinned by sha256 (pip's --require-hashes format) and only pure
# wheels (py3-none-any, py2.py3-none-any) are accepted, except the two packages in SDIST_PURE
# below, which have no pure wheel on PyPI: their hash-pinned sdist is unpacked without its
# optional C speedups. The result is checked: no .so/.pyd/.dll/.dylib, no ELF or Mach-O or PE
# file, no .pyc, no __pycache__. Idempotent: when OUT_DIR/site-packages was built from the same
# lock by the same script, nothing happens. Downloads are cached in target/dl/py; the network
# (PyPI) is only used for files not there yet.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
VENDOR="$ROOT/vendor/python"
SCRIPT="$ROOT/runtimes/vendor-python.sh"
PY=${PYTHON:-python3}
log() { echo "vendor-python: $*" >&2; }

usage() {
  sed -n '2,8p' "$SCRIPT" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
[[ $# -eq 1 ]] || usage

read -r -d '' HELPER <<'PY' || true
import base64, hashlib, json, re, shutil, subprocess, sys, tarfile, tempfile, zipfile
from pathlib import Path

# Packages without a pure wheel on PyPI whose C extension is optional: the directories of their
# sdist that hold the pure-Python package. Only files with these suffixes are taken from there.
SDIST_PURE = {"markupsafe": ["src/markupsafe"], "pyyaml": ["lib/yaml"]}
SDIST_SUFFIXES = {".py", ".pyi", ".typed"}
PURE_WHEEL = re.compile(r"-(py3|py2\.py3|py3\d+)-none-any\.whl$")
NATIVE_SUFFIXES = (".so", ".pyd", ".dll", ".dylib", ".pyc", ".pyo")
# ELF, PE, Mach-O (64, 32, fat) and WebAssembly headers.
NATIVE_MAGIC = (b"\x7fELF", b"MZ\x90\x00", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe",
                b"\xca\xfe\xba\xbe", b"\x00asm")
PIP_PURE = ["--only-binary=:all:", "--platform", "any", "--python-version", "3.12",
            "--implementation", "py", "--abi", "none"]


def die(msg):
    sys.exit(f"vendor-python: {msg}")


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pip(*args):
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    subprocess.run(cmd, check=True, stdout=sys.stderr)


def read_lock(path):
    """[(name, version, [sha256, ...])] from a pip --require-hashes file."""
    text = re.sub(r"\\\n", " ", Path(path).read_text())
    entries = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"^([A-Za-z0-9._-]+)==([^\s;]+)\s+(.*)$", line)
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", line)
        if not m or not hashes:
            die(f"lock line is not `name==version --hash=sha256:...`: {line}")
        entries.append((norm(m[1]), m[2], hashes))
    return entries


def sdist_tree(sdist, name, dest):
    """Unpacks the pure-Python package of an sdist into dest, with a .dist-info made from its
    PKG-INFO. Returns the dist-info directory."""
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
        top = members[0].name.split("/")[0]
        pkg_info = tar.extractfile(f"{top}/PKG-INFO").read()
        written = []
        for sub in SDIST_PURE[name]:
            prefix = f"{top}/{sub}/"
            base = sub.rsplit("/", 1)[-1]
            for m in members:
                if not m.isfile() or not m.name.startswith(prefix):
                    continue
                rel = m.name[len(prefix):]
                if ".." in rel.split("/") or Path(rel).suffix not in SDIST_SUFFIXES:
                    continue
                out = dest / base / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(tar.extractfile(m).read())
                written.append(out)
    meta = dict(re.findall(r"^(Name|Version): (.*)$", pkg_info.decode(), re.M))
    dist_info = dest / f"{re.sub(r'[-_.]+', '_', meta['Name']).lower()}-{meta['Version']}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_bytes(pkg_info)
    (dist_info / "INSTALLER").write_text("vendor-python.sh\n")
    (dist_info / "WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: vendor-python.sh (pure part of the sdist)\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n")
    (dist_info / "top_level.txt").write_text(
        "".join(s.rsplit("/", 1)[-1] + "\n" for s in SDIST_PURE[name]))
    record = []
    meta_files = [dist_info / n for n in ("METADATA", "INSTALLER", "WHEEL", "top_level.txt")]
    for f in sorted(written + meta_files):
        data = f.read_bytes()
        digest = hashlib.sha256(data).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{f.relative_to(dest).as_posix()},sha256={b64},{len(data)}")
    record.append(f"{(dist_info / 'RECORD').relative_to(dest).as_posix()},,")
    (dist_info / "RECORD").write_text("\n".join(record) + "\n")
    return dist_info


def unpack_wheel(wheel, dest):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            parts = info.filename.split("/")
            if info.filename.startswith("/") or ".." in parts:
                die(f"{wheel.name}: unsafe path {info.filename}")
            if info.is_dir():
                continue
            out = dest.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(info))
            mode = info.external_attr >> 16
            out.chmod(0o755 if mode & 0o111 else 0o644)
        if any(n.split("/")[0].endswith(".data") for n in z.namelist()):
            # Scripts and headers are of no use in a sandbox; purelib/platlib would be wrong here.
            data = [n for n in z.namelist() if n.split("/")[0].endswith(".data")]
            if any("/purelib/" in n or "/platlib/" in n for n in data):
                die(f"{wheel.name}: .data/purelib is not supported")
            shutil.rmtree(dest / data[0].split("/")[0])


def check_pure(tree):
    for path in tree.rglob("*"):
        if path.is_dir():
            if path.name == "__pycache__":
                die(f"__pycache__ in the vendored tree: {path}")
            continue
        if path.name.endswith(NATIVE_SUFFIXES) or ".so." in path.name:
            die(f"native or compiled file in the vendored tree: {path}")
        with open(path, "rb") as f:
            head = f.read(4)
        if any(head.startswith(m) for m in NATIVE_MAGIC):
            die(f"binary executable in the vendored tree: {path}")


def install(lock, dl, out, stamp):
    entries = read_lock(lock)
    dl.mkdir(parents=True, exist_ok=True)
    by_hash = {}

    def scan():
        for f in dl.iterdir():
            if f.is_file() and f not in by_hash.values():
                by_hash[sha256(f)] = f

    def find(name, hashes):
        return next((by_hash[h] for h in hashes if h in by_hash), None)

    scan()
    missing = [e for e in entries if find(e[0], e[2]) is None]
    with tempfile.TemporaryDirectory() as tmp:
        wheels = [e for e in missing if e[0] not in SDIST_PURE]
        sdists = [e for e in missing if e[0] in SDIST_PURE]
        for group, flags in ((wheels, PIP_PURE),
                             (sdists, [f"--no-binary={','.join(e[0] for e in sdists)}"])):
            if not group:
                continue
            req = Path(tmp) / "req.txt"
            req.write_text("".join(
                f"{n}=={v} " + " ".join(f"--hash=sha256:{h}" for h in hs) + "\n"
                for n, v, hs in group))
            print(f"vendor-python: downloading {len(group)} files", file=sys.stderr)
            pip("download", "--quiet", "--no-deps", "--require-hashes", *flags,
                "-r", str(req), "-d", str(dl))
    scan()

    stage = out.with_name(out.name + ".new")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    for name, version, hashes in entries:
        f = find(name, hashes)
        if f is None:
            die(f"{name}=={version}: no downloaded file matches the pinned hash")
        if name in SDIST_PURE:
            sdist_tree(f, name, stage)
        elif PURE_WHEEL.search(f.name):
            unpack_wheel(f, stage)
        else:
            die(f"{f.name} is not a pure-Python wheel")
    check_pure(stage)
    found = {norm(d.name[:-len(".dist-info")].rsplit("-", 1)[0])
             for d in stage.glob("*.dist-info")}
    if found != {e[0] for e in entries}:
        differ = sorted(found ^ {e[0] for e in entries})
        die(f"installed distributions differ from the lock: {differ}")
    (stage / ".vendor-stamp").write_text(stamp + "\n")
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    stage.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    print(f"vendor-python: installed {len(entries)} distributions into {out}", file=sys.stderr)


def relock(req_in, lock):
    from pip._vendor.packaging.requirements import Requirement
    top = {}
    for line in Path(req_in).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            top[norm(Requirement(line).name)] = line
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sdist_dir, wheel_dir = tmp / "sdist", tmp / "wheels"
        wheel_dir.mkdir()
        # Pure wheels of the SDIST_PURE packages, only so that the resolver can see them.
        pip("download", "--quiet", "--no-deps", f"--no-binary={','.join(SDIST_PURE)}",
            "-d", str(sdist_dir), *(top.get(n, n) for n in SDIST_PURE))
        sdist_hash = {}
        for sdist in sdist_dir.iterdir():
            name = norm(re.match(r"(.+)-[^-]+\.tar\.gz$", sdist.name)[1])
            tree = tmp / "tree" / name
            dist_info = sdist_tree(sdist, name, tree)
            version = dist_info.name[:-len(".dist-info")].rsplit("-", 1)[1]
            whl = wheel_dir / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
            with zipfile.ZipFile(whl, "w") as z:
                for f in sorted(tree.rglob("*")):
                    if f.is_file():
                        z.write(f, f.relative_to(tree).as_posix())
            sdist_hash[name] = (version, sha256(sdist))
        report = tmp / "report.json"
        pip("install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
            "--target", str(tmp / "target"), *PIP_PURE, "--find-links", str(wheel_dir),
            *top.values())
        items = json.loads(report.read_text())["install"]
    resolved = {}
    for item in items:
        meta = item["metadata"]
        name, version = norm(meta["name"]), meta["version"]
        url = item["download_info"]["url"]
        if name in SDIST_PURE:
            if sdist_hash[name][0] != version:
                die(f"{name}: resolved {version}, sdist is {sdist_hash[name][0]}")
            digest = sdist_hash[name][1]
        else:
            if not PURE_WHEEL.search(url):
                die(f"{name}: {url} is not a pure wheel")
            digest = item["download_info"]["archive_info"]["hashes"]["sha256"]
        deps = []
        for spec in meta.get("requires_dist", []):
            r = Requirement(spec)
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                deps.append(norm(r.name))
        resolved[name] = (version, digest, deps)
    lines = [
        "# Generated by `runtimes/vendor-python.sh --relock` from requirements.in: do not edit.",
        "# One pure-Python wheel per line, except markupsafe and pyyaml (sdist, pure part only).",
        "",
    ]
    for name in sorted(resolved):
        version, digest, _ = resolved[name]
        via = sorted(p for p, (_, _, deps) in resolved.items() if name in deps)
        if name in top:
            via.insert(0, "-r requirements.in")
        lines.append(f"{name}=={version} \\\n    --hash=sha256:{digest}")
        lines.append(f"    # via {', '.join(via)}")
    Path(lock).write_text("\n".join(lines) + "\n")
    print(f"vendor-python: locked {len(resolved)} distributions in {lock}", file=sys.stderr)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "install":
        install(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5])
    elif cmd == "relock":
        relock(Path(sys.argv[2]), Path(sys.argv[3]))
PY

if [[ $1 == --relock ]]; then
  # Resolve with a CPython 3.12 (the sandbox's version) so environment markers match it.
  py312=${PYTHON312:-}
  if [[ -z $py312 ]]; then
    for c in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
      if "$c" -c 'import pip' 2>/dev/null; then py312=$c && break; fi
    done
  fi
  if [[ -z $py312 ]]; then
    log "no python3.12 with pip found (set PYTHON312): markers are evaluated for $($PY -V)"
    py312=$PY
  fi
  exec "$py312" -c "$HELPER" relock "$VENDOR/requirements.in" "$VENDOR/requirements.lock"
fi

[[ $1 != -* ]] || usage
OUT=$1
mkdir -p "$OUT"
OUT=$(cd -- "$OUT" && pwd)
# One install at a time (the target directory may be shared by several checkouts' builds).
mkdir -p "$ROOT/target/dl"
exec 9>"$ROOT/target/dl/.vendor-python.lock"
flock 9
stamp=$(cat "$VENDOR/requirements.lock" "$SCRIPT" | sha256sum | cut -d' ' -f1)
if [[ $(cat "$OUT/site-packages/.vendor-stamp" 2>/dev/null) == "$stamp" ]]; then
  log "up to date ($OUT/site-packages)"
else
  "$PY" -c "$HELPER" install "$VENDOR/requirements.lock" "$ROOT/target/dl/py" \
    "$OUT/site-packages" "$stamp"
fi
if [[ -f $VENDOR/import-fuel.json ]]; then
  cp "$VENDOR/import-fuel.json" "$OUT/import-fuel.json"
fi
