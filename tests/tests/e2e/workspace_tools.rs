//! The tools around a session: execute_command (the worker's shell), get_workspace_info,
//! reset_workspace, install_package and list_available_packages, with their bad inputs.

use std::path::Path;

use sandbox_tests::{Server, rpc_error_type};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn execute_command_runs_a_confined_shell_over_the_session() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let s = json!({ "session_id": "sh" });
    server
        .exec(
            "python",
            "x = 41\nopen('data.csv', 'w').write('b,2\\na,1\\nc,3\\n')",
            s.clone(),
        )
        .await?;
    let call = |command: &str| {
        server.call(
            "execute_command",
            json!({ "command": command, "session_id": "sh" }),
        )
    };

    let piped = call(
        "sort data.csv | cut -d, -f1 | tr a-z A-Z > out.txt && cat out.txt && wc -l < data.csv",
    )
    .await?;
    assert!(!piped.is_error, "{piped:?}");
    assert_eq!(piped.str("stdout"), "A\nB\nC\n3\n");

    call("mkdir -p sub && cd sub && echo 'import sys; print(sys.argv[1:], sys.stdin.read().strip(), \"x\" in globals()); x = 0' > t.py").await?;
    let python = call("echo piped | python t.py one two").await?;
    assert_eq!(
        python.str("stdout"),
        "['one', 'two'] piped False\n",
        "cwd persisted; a fresh interpreter ran the script, without the session's x: {python:?}"
    );
    // The session's own language runs in a fresh interpreter too, as a shell starts a
    // process: `python -c` neither sees nor changes the session's variables; its errors and
    // exit status are a process's.
    let fresh = call(
        "python -c 'print(x)'; echo status=$?; python -c 'x = 1; print(x)'; \
         python -c 'import sys; sys.exit(3)'; echo status=$?; python -c '1/0' || echo failed",
    )
    .await?;
    assert_eq!(
        fresh.str("stdout"),
        "status=1\n1\nstatus=3\nfailed\n",
        "{fresh:?}"
    );
    assert!(
        fresh.str("stderr").contains("NameError")
            && fresh.str("stderr").contains("ZeroDivisionError"),
        "{fresh:?}"
    );
    assert!(fresh.value.get("session_restarted").is_none(), "{fresh:?}");
    let kept = server.exec("python", "print(x)", s.clone()).await?;
    assert_eq!(
        kept.str("stdout"),
        "41\n",
        "the session's x is untouched: {kept:?}"
    );
    let pwd = call("pwd; ls /app").await?;
    assert_eq!(pwd.str("stdout"), "/app/sub\ndata.csv\nout.txt\nsub\n");

    let escape = call("cat /etc/passwd").await?;
    assert!(escape.is_error);
    assert_eq!(escape.str("error_type"), "path_restriction", "{escape:?}");
    let up = call("cat ../../../../etc/passwd").await?;
    assert!(up.is_error, "{up:?}");
    assert_eq!(up.str("error_type"), "path_restriction", "{up:?}");
    assert_eq!(up.str("stdout"), "", "{up:?}");

    let unknown = call("frobnicate --now").await?;
    assert_eq!(unknown.u64("exit_code"), 127);
    assert_eq!(unknown.str("error_type"), "command_failed");
    assert!(
        unknown.str("stderr").contains("command not found")
            && unknown.str("stderr").contains("grep")
    );
    // The other language runs in a fresh interpreter of its own over the same files: it
    // sees /app, not the session's variables.
    server
        .exec("python", "secret = 41", json!({ "session_id": "sh" }))
        .await?;
    let node = call(
        "node -e 'console.log(typeof secret, scriptArgs.length)' a b; \
         node -e 'throw new Error(\"boom\")'; echo status=$?; \
         printf 'console.log(2 ** 10)' > p.js && node p.js",
    )
    .await?;
    assert!(!node.is_error, "{node:?}");
    assert_eq!(
        node.str("stdout"),
        "undefined 3\nstatus=1\n1024\n",
        "{node:?}"
    );
    assert!(node.str("stderr").contains("boom"), "{node:?}");
    assert!(
        node.u64("fuel_consumed") > 0,
        "the runs' fuel counts: {node:?}"
    );
    let after = server
        .exec("python", "print(secret + 1)", json!({ "session_id": "sh" }))
        .await?;
    assert_eq!(
        after.str("stdout"),
        "42\n",
        "the session's own state is untouched"
    );

    server
        .exec(
            "javascript",
            "var base = 10",
            json!({ "session_id": "jsh" }),
        )
        .await?;
    // node in a JavaScript session: a fresh QuickJS over the session's files, not its context.
    let js = server
        .call("execute_command", json!({ "command": "node -e 'console.log(typeof base, scriptArgs.length); var base = 99' a b; \
             printf 'console.log(typeof base, scriptArgs[0]); base = 1' > q.js && node q.js; \
             node -e 'throw new Error(\"bang\")'; echo status=$?; node -e 'base.x'; echo status=$?", "session_id": "jsh" }))
        .await?;
    // scriptArgs[0] is "-e", like sys.argv[0] == "-c" in Python.
    assert_eq!(
        js.str("stdout"),
        "undefined 3\nundefined /app/q.js\nstatus=1\nstatus=1\n",
        "{js:?}"
    );
    assert!(
        js.str("stderr").contains("bang") && js.str("stderr").contains("ReferenceError"),
        "{js:?}"
    );
    let base = server
        .exec(
            "javascript",
            "console.log(base)",
            json!({ "session_id": "jsh" }),
        )
        .await?;
    assert_eq!(
        base.str("stdout"),
        "10\n",
        "the session's base is untouched: {base:?}"
    );
    // Python in a JavaScript session: CPython from its image, numpy there, the session's files.
    let py = server
        .call(
            "execute_command",
            json!({ "command": "echo 7 > seven.txt; python -c 'import sys, numpy; print(sys.argv[1:], int(numpy.arange(int(open(\"seven.txt\").read())).sum()))' x y; python -c 'print(base)'; echo status=$?", "session_id": "jsh" }),
        )
        .await?;
    assert_eq!(py.str("stdout"), "['x', 'y'] 21\nstatus=1\n", "{py:?}");
    assert!(py.str("stderr").contains("NameError"), "{py:?}");
    // A run of the other language stops at the command line's timeout like any other.
    let spin = server
        .call(
            "execute_command",
            json!({ "command": "python -c 'while True: pass'", "session_id": "jsh", "timeout": 2 }),
        )
        .await?;
    assert_eq!(spin.str("error_type"), "timeout", "{spin:?}");
    // The cause is read in the inline program: a loop that never ends, which a longer
    // timeout does not help (so no call is proposed; one would be execute_command's).
    assert!(
        spin.value["actionable_guidance"][0]
            .as_str()
            .is_some_and(|fix| fix.contains("never ends")),
        "{spin:?}"
    );
    assert!(
        spin.value["next_call"].is_null() || spin.value["next_call"]["tool"] == "execute_command",
        "{spin:?}"
    );
    assert!(spin.value.get("session_restarted").is_none(), "{spin:?}");
    let still = server
        .exec(
            "javascript",
            "console.log(base)",
            json!({ "session_id": "jsh" }),
        )
        .await?;
    assert_eq!(
        still.str("stdout"),
        "10\n",
        "the session goes on: {still:?}"
    );
    // A session whose memory cap is too small for CPython says so, with the numbers.
    server
        .call(
            "create_session",
            json!({ "session_id": "small", "language": "javascript", "memory_bytes": 48 << 20 }),
        )
        .await?;
    let small = server
        .call(
            "execute_command",
            json!({ "command": "python -c 'print(1)'", "session_id": "small" }),
        )
        .await?;
    assert_eq!(small.u64("exit_code"), 127, "{small:?}");
    assert!(
        small.str("stderr").contains("memory cap is 48 MiB"),
        "{small:?}"
    );
    server.stop().await
}

/// A shell's fresh interpreter shares the worker's memory limit (RLIMIT_DATA) with the
/// session's: beside a session that holds a large state it gets what is left, and says so when
/// that runs out, instead of the worker being killed; the session's state is not lost.
/// Python's `os.chmod`, `os.stat` and `os.access` see and set the same permission bits as the
/// shell's tools (through the host: WASI has no modes), so a script written and made
/// executable in Python runs as `./script`, and a `chmod` in the shell shows in Python.
#[tokio::test(flavor = "multi_thread")]
async fn python_and_the_shell_share_permission_bits() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let s = json!({ "session_id": "modes" });
    let made = server
        .exec(
            "python",
            "import os, shutil, pathlib, stat\n\
             open('run.sh', 'w').write('echo ran from python\\n')\n\
             print(oct(stat.S_IMODE(os.stat('run.sh').st_mode)), os.access('run.sh', os.X_OK))\n\
             os.chmod('run.sh', 0o755)\n\
             print(oct(stat.S_IMODE(os.stat('/app/run.sh').st_mode)), os.access('run.sh', os.X_OK))\n\
             shutil.copy('run.sh', 'copy.sh')\n\
             pathlib.Path('private.txt').write_text('x')\n\
             pathlib.Path('private.txt').chmod(0o600)\n\
             print(oct(os.stat('copy.sh').st_mode), oct(os.lstat('/app').st_mode))",
            s.clone(),
        )
        .await?;
    assert_eq!(
        made.str("stdout"),
        "0o644 False\n0o755 True\n0o100755 0o40755\n",
        "{made:?}"
    );
    let shell = server
        .call(
            "execute_command",
            json!({ "session_id": "modes", "command": "./run.sh && ls -l copy.sh private.txt run.sh | cut -c1-10 && chmod 640 copy.sh" }),
        )
        .await?;
    assert_eq!(
        shell.str("stdout"),
        "ran from python\n-rwxr-xr-x\n-rw-------\n-rwxr-xr-x\n",
        "{shell:?}"
    );
    // Back in Python: the shell's chmod shows, and what the sandbox refuses is said by name,
    // with no frame of the driver in the traceback.
    let seen = server
        .exec(
            "python",
            "print(oct(os.stat('copy.sh').st_mode & 0o777))\n\
             try:\n    os.chmod('run.sh', 0o4755)\nexcept PermissionError as e:\n    print(e)\n\
             try:\n    os.chmod('missing.sh', 0o755)\nexcept FileNotFoundError as e:\n    print(type(e).__name__)\n\
             os.chmod('/app', 0o700)",
            s.clone(),
        )
        .await?;
    assert_eq!(
        seen.str("stdout"),
        "0o640\n[Errno 63] the sandbox does not set the set-user-ID or set-group-ID bits: \
         'run.sh'\nFileNotFoundError\n",
        "{seen:?}"
    );
    let stderr = seen.str("stderr");
    assert!(
        stderr.contains("a mount point of the sandbox keeps its mode")
            && stderr.contains("os.chmod('/app', 0o700)")
            && !stderr.contains("<turn"),
        "{seen:?}"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_interpreter_is_bounded_beside_a_large_session() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let s = json!({ "session_id": "big" });
    server
        .call(
            "create_session",
            json!({ "session_id": "big", "language": "python", "memory_bytes": 512 << 20 }),
        )
        .await?;
    let held = server
        .exec("python", "big = b'x' * (400 << 20)\nlen(big)", s.clone())
        .await?;
    assert!(!held.is_error, "{held:?}");
    let fresh = server
        .call(
            "execute_command",
            json!({ "session_id": "big", "command": "python -c 'a = b\"y\" * (300 << 20)'; echo status=$?; python -c 'print(1)'" }),
        )
        .await?;
    assert_eq!(fresh.str("stdout"), "status=1\n1\n", "{fresh:?}");
    let stderr = fresh.str("stderr");
    assert!(
        stderr.contains("MemoryError") && stderr.contains("this fresh interpreter had"),
        "{fresh:?}"
    );
    let after = server.exec("python", "print(len(big))", s).await?;
    assert_eq!(after.str("stdout"), "419430400\n", "{after:?}");
    assert!(after.value.get("session_restarted").is_none(), "{after:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_info_and_reset() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let s = json!({ "session_id": "info" });
    server
        .exec(
            "python",
            "import json, wave\ntotal = 3\nnames = ['a', 'b']\nopen('notes.md', 'w').write('# hi')",
            s.clone(),
        )
        .await?;
    let info = server
        .call("get_workspace_info", json!({ "session_id": "info" }))
        .await?;
    assert!(!info.is_error, "{info:?}");
    let variables = info.value["variables"].as_array().unwrap();
    assert!(
        variables
            .iter()
            .any(|v| v["name"] == "total" && v["type"] == "int" && v["repr"] == "3"),
        "{variables:?}"
    );
    assert!(
        info.value["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "json")
    );
    assert!(
        info.value["imported_modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "wave")
    );
    assert_eq!(info.value["files"][0]["path"], "notes.md");
    assert_eq!(info.value["files"][0]["size"], 4);
    assert!(info.str("expires_at").ends_with('Z'));

    server
        .exec(
            "javascript",
            "var greeting = 'hi'; function f() {}",
            json!({ "session_id": "jinfo" }),
        )
        .await?;
    let js = server
        .call("get_workspace_info", json!({ "session_id": "jinfo" }))
        .await?;
    let names: Vec<&str> = js.value["variables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names, ["f", "greeting"], "{js:?}");

    let reset = server
        .call("reset_workspace", json!({ "session_id": "info" }))
        .await?;
    assert_eq!(reset.value["deleted_files"], json!(["notes.md"]));
    let after = server
        .exec(
            "python",
            "import os\n('total' in globals(), os.listdir('.'))",
            s,
        )
        .await?;
    assert_eq!(after.str("result"), "(False, [])", "{after:?}");
    assert!(
        !after.bool("session_restarted"),
        "a reset is not reported as a crash"
    );
    let nobody = server
        .call_refused("get_workspace_info", json!({ "session_id": "nobody" }))
        .await?;
    assert_eq!(nobody.code.0, -32602, "{nobody:?}");
    assert_eq!(
        rpc_error_type(&nobody),
        Some("invalid_session"),
        "{nobody:?}"
    );
    server.stop().await
}

/// A pure wheel `demo_pkg-1.0.0` (import `demo_pkg`, `VALUE = 42`) and a native one in `dir`.
fn build_wheelhouse(dir: &Path) -> anyhow::Result<()> {
    let script = r#"
import sys, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + "/demo_pkg-1.0.0-py3-none-any.whl", "w") as z:
    z.writestr("demo_pkg/__init__.py", "VALUE = 42\n")
    z.writestr("demo_pkg-1.0.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0.0\n")
    z.writestr("demo_pkg-1.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo_pkg-1.0.0.dist-info/top_level.txt", "demo_pkg\n")
    z.writestr("demo_pkg-1.0.0.dist-info/RECORD", "")
with zipfile.ZipFile(d + "/fast_native-1.0.0-cp312-cp312-manylinux_2_17_x86_64.whl", "w") as z:
    z.writestr("fast_native/_speed.cpython-312-x86_64-linux-gnu.so", "\x7fELF")
    z.writestr("fast_native-1.0.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fast-native\nVersion: 1.0.0\n")
"#;
    let status = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .status()?;
    anyhow::ensure!(status.success(), "building the test wheelhouse failed");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn packages_install_from_a_wheelhouse_and_natives_are_refused() -> anyhow::Result<()> {
    let wheelhouse = tempfile::tempdir()?;
    build_wheelhouse(wheelhouse.path())?;
    let server =
        Server::start_with_env(&[("SANDBOX_WHEELHOUSE", wheelhouse.path().to_str().unwrap())])
            .await?;
    let s = json!({ "session_id": "pkgs" });
    server.exec("python", "before = 1", s.clone()).await?;
    let installed = server
        .call(
            "install_package",
            json!({ "package": "demo-pkg", "session_id": "pkgs" }),
        )
        .await?;
    assert!(!installed.is_error, "{installed:?}");
    assert_eq!(installed.str("installed_version"), "1.0.0");
    assert_eq!(installed.value["import_names"], json!(["demo_pkg"]));
    let import = server
        .exec(
            "python",
            "import demo_pkg\ndemo_pkg.VALUE + before",
            s.clone(),
        )
        .await?;
    assert_eq!(
        import.str("result"),
        "43",
        "importable at once, no sys.path edits, state kept: {import:?}"
    );

    let native = server
        .call(
            "install_package",
            json!({ "package": "fast-native", "session_id": "pkgs" }),
        )
        .await?;
    assert!(native.is_error);
    assert_eq!(native.str("error_type"), "package_not_found", "{native:?}");
    assert!(native.str("error_message").contains("compiled"));
    let torch = server
        .call(
            "install_package",
            json!({ "package": "torch", "session_id": "pkgs" }),
        )
        .await?;
    assert_eq!(torch.str("error_type"), "native_package");
    assert!(
        !torch.value["actionable_guidance"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let numpy = server
        .call(
            "install_package",
            json!({ "package": "numpy", "session_id": "pkgs" }),
        )
        .await?;
    assert!(
        !numpy.is_error && numpy.str("message").contains("compiled into"),
        "numpy is already there: {numpy:?}"
    );
    let vendored = server
        .call(
            "install_package",
            json!({ "package": "humanize", "session_id": "pkgs" }),
        )
        .await?;
    assert!(
        !vendored.is_error && vendored.str("message").contains("vendored"),
        "{vendored:?}"
    );
    let bad = server
        .call(
            "install_package",
            json!({ "package": "../../etc", "session_id": "pkgs" }),
        )
        .await?;
    assert_eq!(bad.str("error_type"), "invalid_package");
    let pip = server
        .call(
            "execute_command",
            json!({ "command": "pip install demo-pkg==1.0.0", "session_id": "pkgs" }),
        )
        .await?;
    assert_eq!(
        pip.str("stdout"),
        "Successfully installed demo-pkg 1.0.0\n",
        "{pip:?}"
    );
    // pip itself is not a package: the answer says it is not needed, not that installs are off.
    for (tool, args) in [
        (
            "install_package",
            json!({ "package": "pip", "session_id": "pkgs" }),
        ),
        (
            "execute_command",
            json!({ "command": "pip install --upgrade pip", "session_id": "pkgs" }),
        ),
    ] {
        let pip = server.call(tool, args).await?;
        assert!(pip.is_error, "{pip:?}");
        assert_eq!(pip.str("error_type"), "invalid_package", "{pip:?}");
        assert!(
            pip.str("error_message").contains("pip is not needed"),
            "{pip:?}"
        );
        let fixes = pip.value["actionable_guidance"].to_string();
        assert!(fixes.contains("install_package"), "{pip:?}");
    }
    // A refused `pip install` line is advised like install_package's refusal.
    let native = server
        .call(
            "execute_command",
            json!({ "command": "pip install torch", "session_id": "pkgs" }),
        )
        .await?;
    assert!(native.is_error);
    assert_eq!(native.str("error_type"), "native_package");
    assert!(
        native.str("guidance_summary").contains("pure-Python"),
        "{native:?}"
    );
    assert!(
        native.value["actionable_guidance"]
            .as_array()
            .is_some_and(|fixes| fixes.len() >= 2),
        "{native:?}"
    );

    let listed = server
        .call("list_available_packages", json!({ "session_id": "pkgs" }))
        .await?;
    assert_eq!(listed.value["installed"][0]["package"], "demo_pkg");
    let data = &listed.value["python"]["vendored"]["by_category"]["data formats"];
    let yaml = data
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["import"] == "yaml")
        .expect("yaml is vendored");
    assert!(yaml["first_import_fuel"].as_u64().unwrap() > 0);
    assert!(
        listed.value.get("javascript").is_none(),
        "a Python session's listing is what it can import"
    );
    let js_only = server
        .call(
            "list_available_packages",
            json!({ "language": "javascript" }),
        )
        .await?;
    assert!(js_only.value.get("python").is_none());
    assert!(js_only.value["javascript"]["packages"]["csv-simple"].is_object());
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn shared_volume_is_read_only_unless_configured() -> anyhow::Result<()> {
    let shared = tempfile::tempdir()?;
    std::fs::write(shared.path().join("hello.txt"), "from the host")?;
    let dir = shared.path().to_str().unwrap();
    let server = Server::start_with_env(&[("SANDBOX_SHARED_DIR", dir)]).await?;
    let read = server
        .exec("python", "open('/shared/hello.txt').read()", json!({}))
        .await?;
    assert_eq!(read.str("result"), "'from the host'", "{read:?}");
    let js = server
        .exec("javascript", "readText('/shared/hello.txt')", json!({}))
        .await?;
    assert_eq!(js.str("result"), "\"from the host\"", "{js:?}");
    let write = server
        .exec(
            "python",
            "open('/shared/x.txt', 'w').write('no')",
            json!({}),
        )
        .await?;
    assert!(write.is_error, "read-only by default: {write:?}");
    // A write to a read-only mount is the guest's PermissionError (ENOTCAPABLE), classified
    // as the protocol defines path_restriction: a write to a read-only mount.
    assert_eq!(write.str("error_type"), "path_restriction", "{write:?}");
    assert_eq!(
        write.str("error_message"),
        "PermissionError: [Errno 63] Operation not permitted: '/shared/x.txt'"
    );
    assert!(!shared.path().join("x.txt").exists());
    server.stop().await?;

    let server = Server::start_with_env(&[
        ("SANDBOX_SHARED_DIR", dir),
        ("SANDBOX_SHARED_WRITABLE", "1"),
    ])
    .await?;
    let write = server
        .exec(
            "python",
            "open('/shared/x.txt', 'w').write('yes')",
            json!({}),
        )
        .await?;
    assert!(!write.is_error, "{write:?}");
    assert_eq!(std::fs::read_to_string(shared.path().join("x.txt"))?, "yes");
    let runtimes = server.call("list_runtimes", json!({})).await?;
    let python = &runtimes.value["runtimes"][0];
    assert!(
        python["vendored_packages"]["count"].as_u64().unwrap() >= 30,
        "{python}"
    );
    let javascript = runtimes.value["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["language"] == "javascript")
        .expect("javascript is listed");
    assert!(
        javascript["library"]["helpers"].is_object() || javascript["library"]["helpers"].is_array(),
        "{javascript}"
    );
    let info = server
        .call("get_workspace_info", json!({ "language": "python" }))
        .await?;
    assert!(
        info.u64("executions_run") >= 1 && info.u64("fuel_used_total") > 0,
        "{info:?}"
    );
    server.stop().await
}
