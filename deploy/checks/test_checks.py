"""Unit tests of the checks' own logic: the Containerfile model, the bubblewrap command, the
reply parser, quantities and the manifest cross-checks. Run by deploy/validate before the checks
(`python -m unittest discover -s deploy/checks`)."""

from __future__ import annotations

import copy
import tempfile
import unittest
from pathlib import Path

import image
import manifests
from image import CheckFailed

CONTAINERFILE = """\
FROM rust AS builder
WORKDIR /src
COPY . .
RUN make
FROM debian
COPY --from=builder /src/target/release/a /src/target/release/b /opt/x/bin/
COPY --from=builder /src/target/runtimes /opt/x/runtimes
COPY deploy/entry.sh /opt/x/bin/entry.sh
ENV SANDBOX_STATE_DIR=/var/lib/x/state SANDBOX_HTTP_ADDR=0.0.0.0:8765
VOLUME ["/var/lib/x"]
USER 10001:10002
WORKDIR /var/lib/x
EXPOSE 8765/tcp
ENTRYPOINT ["/opt/x/bin/entry.sh"]
CMD ["--flag"]
"""


class FinalStageTests(unittest.TestCase):
    def test_copy_lines_map_builder_paths_into_the_checkout(self):
        stage = image.parse_final_stage(CONTAINERFILE, Path("/repo"))
        self.assertEqual(
            stage.copies,
            [
                (Path("/repo/target/release/a"), "/opt/x/bin/a"),
                (Path("/repo/target/release/b"), "/opt/x/bin/b"),
                (Path("/repo/target/runtimes"), "/opt/x/runtimes"),
                (Path("/repo/deploy/entry.sh"), "/opt/x/bin/entry.sh"),
            ],
        )

    def test_the_rest_of_the_final_stage(self):
        stage = image.parse_final_stage(CONTAINERFILE, Path("/repo"))
        self.assertEqual(stage.env["SANDBOX_HTTP_ADDR"], "0.0.0.0:8765")
        self.assertEqual(stage.user, (10001, 10002))
        self.assertEqual(
            (stage.volumes, stage.workdir, stage.expose), (["/var/lib/x"], "/var/lib/x", [8765])
        )
        self.assertEqual((stage.entrypoint, stage.cmd), (["/opt/x/bin/entry.sh"], ["--flag"]))

    def test_a_builder_path_outside_its_workdir_is_refused(self):
        text = CONTAINERFILE.replace("/src/target/runtimes", "/usr/local/cargo")
        with self.assertRaisesRegex(CheckFailed, "outside the builder's WORKDIR"):
            image.parse_final_stage(text, Path("/repo"))

    def test_a_named_user_and_the_shell_form_are_refused(self):
        with self.assertRaisesRegex(CheckFailed, "not numeric"):
            named = CONTAINERFILE.replace("USER 10001:10002", "USER app")
            image.parse_final_stage(named, Path("/r"))
        shell_form = CONTAINERFILE.replace('ENTRYPOINT ["/opt/x/bin/entry.sh"]', "ENTRYPOINT run")
        with self.assertRaisesRegex(CheckFailed, "exec form"):
            image.parse_final_stage(shell_form, Path("/r"))


class BwrapTests(unittest.TestCase):
    def stage(self, tmp: Path) -> image.FinalStage:
        (tmp / "bin").mkdir()
        return image.FinalStage(
            copies=[(tmp / "bin", "/opt/x/bin")],
            env={"A": "1"},
            user=(10001, 10001),
            volumes=["/var/lib/x"],
            workdir="/var/lib/x",
            entrypoint=["/opt/x/bin/entry.sh"],
            cmd=["--flag"],
        )

    def test_the_root_is_read_only_and_only_the_volume_is_writable(self):
        with tempfile.TemporaryDirectory() as tmp:
            command = image.bwrap_command(self.stage(Path(tmp)), Path("/vol"), {"A": "2"})
        joined = " ".join(command)
        self.assertIn(f"--ro-bind {tmp}/bin /opt/x/bin", joined)
        self.assertIn("--bind /vol /var/lib/x", joined)
        self.assertIn("--uid 10001 --gid 10001", joined)
        self.assertIn("--setenv A 2", joined, "overrides win over the image's ENV")
        self.assertLess(joined.index("--bind /vol"), joined.index("--remount-ro /"))
        self.assertEqual(command[-2:], ["/opt/x/bin/entry.sh", "--flag"])
        writable = [command[i + 2] for i, a in enumerate(command) if a == "--bind"]
        self.assertEqual(writable, ["/var/lib/x"])

    def test_a_missing_copy_source_is_named(self):
        stage = image.FinalStage(
            copies=[(Path("/nonexistent/x"), "/opt/x")],
            user=(1, 1),
            volumes=["/v"],
            entrypoint=["/e"],
        )
        with self.assertRaisesRegex(CheckFailed, "COPY source missing: /nonexistent/x"):
            image.bwrap_command(stage, Path("/vol"), {})


class ReplyTests(unittest.TestCase):
    def test_replies_are_found_in_sse_and_in_json(self):
        sse = (
            b'id: 1\ndata: {"jsonrpc":"2.0","method":"x"}\n\n'
            b'data: {"jsonrpc":"2.0","id":3,"result":{}}\n\n'
        )
        self.assertEqual(image.find_reply(sse, 3)["result"], {})
        self.assertEqual(image.find_reply(b'{"jsonrpc":"2.0","id":1,"result":1}', 1)["result"], 1)
        with self.assertRaises(CheckFailed):
            image.find_reply(sse, 4)


class ManifestTests(unittest.TestCase):
    def test_quantities(self):
        self.assertEqual(manifests.quantity("6Gi"), 6 * 2**30)
        self.assertEqual(manifests.quantity("500m"), 0.5)
        self.assertEqual(manifests.quantity("2"), 2)
        with self.assertRaises(CheckFailed):
            manifests.quantity("6GB")

    def test_server_variables_come_from_help(self):
        text = "  --max-sessions <N>\n          Most [env: SANDBOX_MAX_SESSIONS=] [default: 256]\n"
        self.assertEqual(manifests.server_variables(text), {"SANDBOX_MAX_SESSIONS"})

    def test_consistency_catches_each_disagreement(self):
        root = Path(__file__).resolve().parents[2]
        kinds = manifests.by_kind(root / "deploy" / "kubernetes")
        stage = image.parse_final_stage((root / "Containerfile").read_text(), root)
        container = kinds["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]
        known = {e["name"] for e in container["env"]} | set(stage.env)
        manifests.check_consistency(kinds, stage, known)

        def broken(change):
            changed = copy.deepcopy(kinds)
            change(changed["Deployment"][0]["spec"]["template"]["spec"])
            return changed

        def container(spec):
            return spec["containers"][0]

        mistakes = {
            "runAsUser": lambda s: s["securityContext"].update(runAsUser=0),
            "ports differ": lambda s: container(s)["ports"][0].update(containerPort=9000),
            "writable": lambda s: container(s)["securityContext"].update(
                readOnlyRootFilesystem=False
            ),
            "not below": lambda s: container(s)["resources"]["limits"].update(memory="1Gi"),
            "not from a Secret": lambda s: container(s)["env"].__setitem__(
                0, {"name": "SANDBOX_HTTP_TOKEN", "value": "t"}
            ),
            "probe paths": lambda s: container(s)["readinessProbe"]["httpGet"].update(path="/"),
            "SANDBOX_METRICS_TOKEN is not from a Secret": lambda s: container(s)["env"].__setitem__(
                1, {"name": "SANDBOX_METRICS_TOKEN", "value": "m"}
            ),
        }
        for message, change in mistakes.items():
            with self.subTest(message), self.assertRaisesRegex(CheckFailed, message):
                manifests.check_consistency(broken(change), stage, known)
        with self.assertRaisesRegex(CheckFailed, "not a setting of sandbox-mcp"):
            manifests.check_consistency(kinds, stage, known - {"SANDBOX_MAX_SESSIONS"})


if __name__ == "__main__":
    unittest.main()
