//! install_package as a user meets it: a Python package with its dependency from the operator's
//! wheelhouse (and a dependency that cannot be found, which installs nothing), installed
//! packages surviving a worker restart and gone after reset_workspace, JavaScript packages
//! from `SANDBOX_JS_PACKAGES` (plain and scoped), and an install into a session while an
//! execution runs in it. Every check is on exact values: versions, dependency lists, import
//! names, what `list_available_packages` reports, and what the guest then computes.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use sandbox_tests::host::Snapshot;
use sandbox_tests::{Server, eventually, statuses};
use serde_json::{Value, json};

/// Writes pure wheels with python3's zipfile, from `[{file, entries: [[name, content]]}]` on
/// stdin; a content `{"repeat": text, "times": n}` stands for `text * n` (large files do not
/// pass through JSON), and is deflated.
const BUILD_WHEELS: &str = r#"
import json, sys, zipfile
out = sys.argv[1]
for wheel in json.load(sys.stdin):
    with zipfile.ZipFile(out + "/" + wheel["file"], "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in wheel["entries"]:
            if isinstance(content, dict):
                content = content["repeat"] * content["times"]
            z.writestr(name, content)
"#;

/// Writes `wheels` (built with [`wheel`]) into `dir`.
pub(crate) fn write_wheels(dir: &Path, wheels: &Value) -> Result<()> {
    use std::io::Write;
    let mut python = std::process::Command::new("python3")
        .arg("-c")
        .arg(BUILD_WHEELS)
        .arg(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .context("python3 builds the wheels")?;
    python
        .stdin
        .take()
        .context("stdin")?
        .write_all(wheels.to_string().as_bytes())?;
    ensure!(python.wait()?.success(), "building the wheels failed");
    Ok(())
}

/// A pure wheel `{dist}-1.0.0-py3-none-any.whl` whose METADATA declares `requires` (as
/// `Requires-Dist:` lines, which pip resolves from the same wheelhouse), with `files`.
pub(crate) fn wheel(dist: &str, requires: &[&str], files: &[(&str, &str)]) -> Value {
    let files: Vec<(&str, Value)> = files.iter().map(|(n, c)| (*n, json!(c))).collect();
    wheel_of(dist, requires, &files)
}

/// [`wheel`], with contents as [`BUILD_WHEELS`] reads them (text, or a repeated text).
pub(crate) fn wheel_of(dist: &str, requires: &[&str], files: &[(&str, Value)]) -> Value {
    let info = format!("{dist}-1.0.0.dist-info");
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: 1.0.0\n",
        dist.replace('_', "-")
    );
    for requirement in requires {
        metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    let top_level = files
        .iter()
        .filter_map(|(name, _)| name.split('/').next())
        .map(|top| top.trim_end_matches(".py"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join("\n");
    let mut entries: Vec<Value> = files.iter().map(|(n, c)| json!([n, c])).collect();
    entries.push(json!([format!("{info}/METADATA"), metadata]));
    entries.push(json!([
        format!("{info}/WHEEL"),
        "Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ]));
    entries.push(json!([
        format!("{info}/top_level.txt"),
        format!("{top_level}\n")
    ]));
    entries.push(json!([format!("{info}/RECORD"), ""]));
    json!({ "file": format!("{dist}-1.0.0-py3-none-any.whl"), "entries": entries })
}

/// The wheelhouse: `dep_base` (BASE = 40), `with_dep` (needs dep-base; VALUE = BASE + 2),
/// `demo_pkg` (VALUE = 42), `orphan` (needs `not-in-the-wheelhouse`), `frame_tools` (needs
/// pandas 2 or later, numpy and dep-base) and `old_frames` (needs pandas before 2).
fn build_wheelhouse(dir: &Path) -> Result<()> {
    let wheels = json!([
        wheel("dep_base", &[], &[("dep_base/__init__.py", "BASE = 40\n")]),
        wheel(
            "with_dep",
            &["dep-base"],
            &[(
                "with_dep/__init__.py",
                "from dep_base import BASE\nVALUE = BASE + 2\n",
            )],
        ),
        wheel("demo_pkg", &[], &[("demo_pkg/__init__.py", "VALUE = 42\n")]),
        wheel(
            "orphan",
            &["not-in-the-wheelhouse"],
            &[("orphan/__init__.py", "")],
        ),
        wheel(
            "frame_tools",
            &["pandas>=2", "numpy", "dep-base", "pytest; extra == 'test'"],
            &[(
                "frame_tools/__init__.py",
                "import pandas as pd\nfrom dep_base import BASE\n\
                 def total(rows):\n    return int(pd.DataFrame(rows)['n'].sum()) + BASE\n",
            )],
        ),
        wheel(
            "old_frames",
            &["pandas<2"],
            &[("old_frames/__init__.py", "")]
        ),
    ]);
    write_wheels(dir, &wheels)
}

/// The JavaScript package directory: `padder` 2.0.1 and the scoped `@acme/greet` 0.3.0.
fn build_js_packages(dir: &Path) -> Result<()> {
    let padder = dir.join("padder");
    std::fs::create_dir(&padder)?;
    std::fs::write(
        padder.join("package.json"),
        r#"{"name": "padder", "version": "2.0.1", "main": "index.js"}"#,
    )?;
    std::fs::write(
        padder.join("index.js"),
        "module.exports = (s, n) => String(s).padStart(n, '*');\n",
    )?;
    let greet = dir.join("@acme/greet");
    std::fs::create_dir_all(&greet)?;
    std::fs::write(
        greet.join("package.json"),
        r#"{"name": "@acme/greet", "version": "0.3.0", "main": "index.js"}"#,
    )?;
    std::fs::write(
        greet.join("index.js"),
        "exports.hello = (who) => 'hello ' + who;\n",
    )?;
    Ok(())
}

/// A server with the wheelhouse and the JavaScript packages; no reply may name a host path.
struct Fixture {
    wheelhouse: tempfile::TempDir,
    js_packages: tempfile::TempDir,
    server: Server,
}

impl Fixture {
    async fn start() -> Result<Self> {
        let wheelhouse = tempfile::tempdir()?;
        build_wheelhouse(wheelhouse.path())?;
        let js_packages = tempfile::tempdir()?;
        build_js_packages(js_packages.path())?;
        let server = Server::start_with_env(&[
            ("SANDBOX_WHEELHOUSE", wheelhouse.path().to_str().unwrap()),
            ("SANDBOX_JS_PACKAGES", js_packages.path().to_str().unwrap()),
        ])
        .await?;
        server.forbid_host_paths(
            server
                .host_paths()
                .with(wheelhouse.path())
                .with(js_packages.path()),
        );
        Ok(Self {
            wheelhouse,
            js_packages,
            server,
        })
    }

    async fn install(&self, session: &str, package: &str) -> Result<sandbox_tests::Reply> {
        self.server
            .call(
                "install_package",
                json!({ "package": package, "session_id": session }),
            )
            .await
    }

    /// What `list_available_packages` says the session installed.
    async fn installed(&self, session: &str) -> Result<Value> {
        let listed = self
            .server
            .call("list_available_packages", json!({ "session_id": session }))
            .await?;
        ensure!(!listed.is_error, "{listed:?}");
        Ok(listed.field("installed").clone())
    }

    /// Kills the session's worker and waits until it is gone: the next call restarts it.
    async fn stop(self) -> Result<()> {
        // The sources are read, never written.
        ensure!(Snapshot::of(self.wheelhouse.path()).paths().len() == 7);
        ensure!(Snapshot::of(self.js_packages.path()).paths().len() == 8);
        self.server.stop().await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_package_installs_with_its_dependency() -> Result<()> {
    let fx = Fixture::start().await?;
    let server = &fx.server;
    server.python("deps", "before = 'kept'").await?;
    let installed = fx.install("deps", "with-dep").await?;
    assert!(!installed.is_error, "{installed:?}");
    assert_eq!(installed.str("installed_version"), "1.0.0");
    assert_eq!(
        installed.field("dependencies_installed"),
        &json!(["dep_base==1.0.0"])
    );
    assert_eq!(installed.field("import_names"), &json!(["with_dep"]));
    assert_eq!(installed.str("location"), "/app/.packages");
    let used = server
        .python(
            "deps",
            "import with_dep, dep_base\n(with_dep.VALUE, dep_base.BASE, before)",
        )
        .await?;
    assert_eq!(
        used.str("result"),
        "(42, 40, 'kept')",
        "both import at once, state kept: {used:?}"
    );
    assert_eq!(
        fx.installed("deps").await?,
        json!([
            { "package": "dep_base", "version": "1.0.0" },
            { "package": "with_dep", "version": "1.0.0" },
        ])
    );

    // A dependency nobody has: refused, and nothing of the package is written.
    let orphan = fx.install("deps", "orphan").await?;
    assert!(orphan.is_error, "{orphan:?}");
    assert_eq!(orphan.str("error_type"), "package_not_found", "{orphan:?}");
    assert!(
        orphan
            .str("error_message")
            .contains("No matching distribution found for not-in-the-wheelhouse"),
        "{orphan:?}"
    );
    let app = server.workspace_of("deps").context("workspace")?;
    assert!(!app.join(".packages/orphan").exists());
    let missing = server
        .exec("python", "import orphan", json!({ "session_id": "deps" }))
        .await?;
    assert_eq!(missing.str("error_type"), "missing_module", "{missing:?}");
    fx.stop().await
}

/// A pure package that depends on numpy and pandas installs: those are the compiled-in ones (nothing of them is downloaded or written), its other pure
/// dependency comes from the wheelhouse; one that needs another pandas is refused, saying why.
#[tokio::test(flavor = "multi_thread")]
async fn a_package_on_top_of_the_scientific_stack_uses_its_compiled_in_dependencies() -> Result<()>
{
    let fx = Fixture::start().await?;
    let server = &fx.server;
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "sci" }),
        )
        .await?;
    let installed = fx.install("sci", "frame-tools").await?;
    assert!(!installed.is_error, "{installed:?}");
    assert_eq!(installed.str("installed_version"), "1.0.0");
    assert_eq!(
        installed.field("dependencies_installed"),
        &json!(["dep_base==1.0.0"]),
        "numpy and pandas are not installed again: {installed:?}"
    );
    let message = installed.str("message");
    assert!(
        message.contains("numpy 2.5.2") && message.contains("pandas 3.0.6"),
        "{installed:?}"
    );
    let app = server.workspace_of("sci").context("workspace")?;
    let packages: Vec<String> = std::fs::read_dir(app.join(".packages"))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<_>>()?;
    assert!(
        packages
            .iter()
            .all(|p| !p.starts_with("numpy") && !p.starts_with("pandas")),
        "{packages:?}"
    );
    let used = server
        .python(
            "sci",
            "import frame_tools, pandas\n(frame_tools.total([{'n': 1}, {'n': 1}]), pandas.__file__.startswith('/usr/local/lib/python315.zip'))",
        )
        .await?;
    assert_eq!(used.str("result"), "(42, True)", "{used:?}");

    let old = fx.install("sci", "old-frames").await?;
    assert!(old.is_error, "{old:?}");
    assert_eq!(old.str("error_type"), "package_not_found", "{old:?}");
    let said = old.str("error_message");
    assert!(
        said.contains("compiled into the sandbox's CPython") && said.contains("pandas<2"),
        "{old:?}"
    );
    assert!(!app.join(".packages/old_frames").exists());
    fx.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn installed_packages_survive_a_restart_and_go_with_a_reset() -> Result<()> {
    let fx = Fixture::start().await?;
    let server = &fx.server;
    let session = json!({ "session_id": "keep" });
    server.python("keep", "x = 1").await?;
    assert!(!fx.install("keep", "demo-pkg").await?.is_error);
    server.python("keep", "import demo_pkg").await?;

    fx.server.kill_worker_of("keep").await?;
    let restarted = server
        .exec(
            "python",
            "import demo_pkg\n(demo_pkg.VALUE, 'x' in globals())",
            session.clone(),
        )
        .await?;
    assert!(!restarted.is_error, "{restarted:?}");
    assert!(restarted.bool("session_restarted"), "{restarted:?}");
    assert_eq!(restarted.str("state_after_restart"), "resumed");
    assert_eq!(
        restarted.str("result"),
        "(42, True)",
        "the package outlives the interpreter: {restarted:?}"
    );
    assert_eq!(
        fx.installed("keep").await?,
        json!([{ "package": "demo_pkg", "version": "1.0.0" }])
    );

    let reset = server
        .call("reset_workspace", json!({ "session_id": "keep" }))
        .await?;
    assert!(!reset.is_error, "{reset:?}");
    let gone = server
        .exec("python", "import demo_pkg", session.clone())
        .await?;
    assert_eq!(gone.str("error_type"), "missing_module", "{gone:?}");
    assert_eq!(gone.str("error_name"), "ModuleNotFoundError", "{gone:?}");
    assert!(!gone.bool("session_restarted"), "{gone:?}");
    assert_eq!(fx.installed("keep").await?, json!([]));
    let app = server.workspace_of("keep").context("workspace")?;
    assert!(
        !app.join(".packages").exists(),
        "reset removed /app/.packages"
    );
    // And it installs again into the reset session.
    assert!(!fx.install("keep", "demo-pkg").await?.is_error);
    let again = server
        .exec("python", "import demo_pkg\ndemo_pkg.VALUE", session)
        .await?;
    assert_eq!(again.str("result"), "42", "{again:?}");
    fx.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_packages_install_from_the_operators_directory() -> Result<()> {
    let fx = Fixture::start().await?;
    let server = &fx.server;
    let session = json!({ "session_id": "js" });
    server
        .exec("javascript", "var kept = 1", session.clone())
        .await?;
    for (package, version) in [("padder", "2.0.1"), ("@acme/greet", "0.3.0")] {
        let installed = fx.install("js", package).await?;
        assert!(!installed.is_error, "{installed:?}");
        assert_eq!(installed.str("package"), package);
        assert_eq!(installed.str("installed_version"), version);
        assert_eq!(installed.field("dependencies_installed"), &json!([]));
        assert_eq!(
            installed.str("message"),
            format!("installed into /app/node_modules/{package}: use requireVendor('{package}')")
        );
    }
    let code = "[requireVendor('padder')(7, 3), requireVendor('@acme/greet').hello('you'), kept].join('|')";
    let used = server.exec("javascript", code, session.clone()).await?;
    assert_eq!(used.str("result"), "\"**7|hello you|1\"", "{used:?}");
    assert_eq!(fx.installed("js").await?, json!(["@acme/greet", "padder"]));

    let unknown = fx.install("js", "left-pad").await?;
    assert!(unknown.is_error);
    assert_eq!(
        unknown.str("error_type"),
        "package_not_found",
        "{unknown:?}"
    );
    assert!(
        unknown.str("error_message").starts_with(
            "left-pad is not vendored and not in the operator's local package directory"
        ),
        "{unknown:?}"
    );
    let vendored = fx.install("js", "lodash").await?;
    assert!(!vendored.is_error, "{vendored:?}");
    assert_eq!(vendored.str("installed_version"), "vendored");

    // The packages are files in /app: they outlive the interpreter, and go with a reset.
    fx.server.kill_worker_of("js").await?;
    let restarted = server
        .exec(
            "javascript",
            "[requireVendor('padder')('x', 2), typeof kept].join('|')",
            session.clone(),
        )
        .await?;
    assert!(restarted.bool("session_restarted"), "{restarted:?}");
    assert_eq!(restarted.str("result"), "\"*x|number\"", "{restarted:?}");
    server
        .call("reset_workspace", json!({ "session_id": "js" }))
        .await?;
    let gone = server
        .exec("javascript", "requireVendor('padder')", session)
        .await?;
    assert!(gone.is_error, "{gone:?}");
    assert_eq!(gone.str("error_type"), "runtime_error", "{gone:?}");
    assert!(
        gone.str("error_message")
            .contains("no vendored package 'padder'"),
        "{gone:?}"
    );
    assert_eq!(fx.installed("js").await?, json!([]));
    fx.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_install_while_an_execution_runs_waits_for_it_and_harms_nothing() -> Result<()> {
    let fx = Fixture::start().await?;
    let server = std::sync::Arc::new(fx.server);
    server
        .python("busy", "import os, time\nkept = 'yes'")
        .await?;
    let app = server.workspace_of("busy").context("workspace")?;
    let running = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .exec(
                    "python",
                    "while not os.path.exists('gate'):\n    time.sleep(0.01)\n'released'",
                    json!({ "session_id": "busy", "timeout": 60 }),
                )
                .await
        })
    };
    server
        .wait_for_executions("busy", Duration::from_secs(10), |l| {
            statuses(l) == ["running"]
        })
        .await?;
    let install = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .call(
                    "install_package",
                    json!({ "package": "demo-pkg", "session_id": "busy" }),
                )
                .await
        })
    };
    // The files land at once; the interpreter's import caches are refreshed by a call that
    // queues behind the running execution instead of disturbing it.
    assert!(
        eventually(Duration::from_secs(30), || {
            app.join(".packages/demo_pkg/__init__.py").is_file()
        })
        .await,
        "the package is unpacked into /app/.packages"
    );
    let listed = server
        .wait_for_executions("busy", Duration::from_secs(10), |l| l.len() == 2)
        .await?;
    assert_eq!(statuses(&listed), ["running", "queued"], "{listed:?}");
    std::fs::write(app.join("gate"), "")?;
    let running = running.await??;
    assert!(!running.is_error, "{running:?}");
    assert_eq!(running.str("result"), "'released'");
    assert!(!running.bool("session_restarted"), "{running:?}");
    let installed = install.await??;
    assert!(!installed.is_error, "{installed:?}");
    assert_eq!(installed.str("installed_version"), "1.0.0");
    let used = server
        .exec(
            "python",
            "import demo_pkg\n(demo_pkg.VALUE, kept)",
            json!({ "session_id": "busy" }),
        )
        .await?;
    assert_eq!(used.str("result"), "(42, 'yes')", "{used:?}");
    assert!(!used.bool("session_restarted"), "{used:?}");
    let fx = Fixture {
        server: std::sync::Arc::into_inner(server).expect("sole owner"),
        ..fx
    };
    fx.stop().await
}
