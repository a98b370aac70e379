//! install_package writes only where it means to: a `/app/.packages` or `/app/node_modules`
//! that guest code turned into a link out of `/app` is refused (`path_restriction`); links and
//! hard links a guest or the host planted *inside* them are replaced by the real package, never
//! written through; hostile wheels (`..`, absolute and symlink entries) are refused
//! (`invalid_package`) before anything is written; package names and versions must be PEP 508
//! names and PEP 440 versions; and no error message names a host path. Every test checks a
//! victim directory outside the sandbox is byte for byte unchanged.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use sandbox_tests::host::{self, HostPaths, Snapshot, Victim};
use sandbox_tests::{Reply, Server};
use serde_json::{Value, json};

/// Writes the wheels described by a JSON list of `{file, entries: [[name, content, symlink]]}`
/// with Python's zipfile; a symlink entry carries `S_IFLNK | 0777` in its external attributes.
const BUILD_WHEELS: &str = r#"
import json, sys, zipfile
out = sys.argv[1]
for wheel in json.loads(sys.argv[2]):
    with zipfile.ZipFile(out + "/" + wheel["file"], "w") as z:
        for name, content, link in wheel["entries"]:
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (0o120777 if link else 0o100644) << 16
            z.writestr(info, content)
"#;

/// A pure wheel `{dist}-1.0-py3-none-any.whl` with `entries` and a complete `.dist-info`
/// (unless `entries` already hold one of its files).
fn wheel(dist: &str, entries: &[(&str, &str, bool)]) -> Value {
    let info = format!("{dist}-1.0.dist-info");
    let mut all: Vec<Value> = entries
        .iter()
        .map(|(name, content, link)| json!([name, content, link]))
        .collect();
    let standard = [
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_owned(),
        ),
        (format!("{info}/top_level.txt"), format!("{dist}\n")),
        (format!("{info}/RECORD"), String::new()),
    ];
    for (name, content) in standard {
        if !entries.iter().any(|(n, ..)| *n == name) {
            all.push(json!([name, content, false]));
        }
    }
    json!({ "file": format!("{dist}-1.0-py3-none-any.whl"), "entries": all })
}

/// Test packages: a wheelhouse, a JavaScript package directory and the victim they must not
/// reach.
struct Fixture {
    wheelhouse: tempfile::TempDir,
    js_packages: tempfile::TempDir,
    victim: Victim,
    /// Where the absolute entry of the `absolute` wheel points (must never exist).
    abs_evil: PathBuf,
}

impl Fixture {
    fn new() -> Result<Self> {
        let victim = Victim::new()?;
        let wheelhouse = tempfile::tempdir()?;
        let abs_evil = std::env::temp_dir().join(format!("abs-evil-{}.py", std::process::id()));
        let into_victim = victim.path().join("abs-evil.py");
        let victim_top_level = victim.path().join("top_level.txt");
        let (abs_evil_name, into_victim_name, victim_top_level_name) = (
            abs_evil.display().to_string(),
            into_victim.display().to_string(),
            victim_top_level.display().to_string(),
        );
        let wheels = json!([
            wheel("goodpkg", &[("goodpkg/__init__.py", "VALUE = 7\n", false)]),
            wheel("goodmod", &[("goodmod.py", "VALUE = 8\n", false)]),
            wheel(
                "dotdot",
                &[
                    ("dotdot/__init__.py", "", false),
                    ("../evil_dotdot.py", "EVIL = 1\n", false),
                ],
            ),
            wheel(
                "absolute",
                &[
                    ("absolute/__init__.py", "", false),
                    (&abs_evil_name, "EVIL = 1\n", false),
                    (&into_victim_name, "EVIL = 1\n", false),
                ],
            ),
            wheel(
                "nested",
                &[
                    ("nested/__init__.py", "", false),
                    ("nested/../../evil_nested.py", "EVIL = 1\n", false),
                ],
            ),
            wheel(
                "linky",
                &[
                    ("linky/__init__.py", "", false),
                    ("linky/escape", "../../../../../../../../../../etc", true),
                ],
            ),
            wheel(
                "leaky",
                &[
                    ("leaky/__init__.py", "", false),
                    (
                        "leaky-1.0.dist-info/top_level.txt",
                        &victim_top_level_name,
                        true
                    ),
                ],
            ),
        ]);
        let status = std::process::Command::new("python3")
            .arg("-c")
            .arg(BUILD_WHEELS)
            .arg(wheelhouse.path())
            .arg(wheels.to_string())
            .status()
            .context("python3 builds the wheels")?;
        ensure!(status.success(), "building the wheelhouse failed");

        let js_packages = tempfile::tempdir()?;
        let leftpad = js_packages.path().join("leftpad");
        std::fs::create_dir(&leftpad)?;
        std::fs::write(
            leftpad.join("package.json"),
            r#"{"name": "leftpad", "version": "1.2.3", "main": "index.js"}"#,
        )?;
        std::fs::write(
            leftpad.join("index.js"),
            "module.exports = function (s, n) { s = String(s); while (s.length < n) s = '.' + s; return s; };\n",
        )?;
        Ok(Fixture {
            wheelhouse,
            js_packages,
            victim,
            abs_evil,
        })
    }

    /// A server with the wheelhouse and the package directory, whose every reply is checked
    /// for host paths.
    async fn server(&self) -> Result<Server> {
        let server = Server::start_with_env(&[
            (
                "SANDBOX_WHEELHOUSE",
                self.wheelhouse.path().to_str().unwrap(),
            ),
            (
                "SANDBOX_JS_PACKAGES",
                self.js_packages.path().to_str().unwrap(),
            ),
        ])
        .await?;
        server.forbid_host_paths(self.paths(&server));
        Ok(server)
    }

    /// Host paths no reply may hold: the server's, the wheelhouse, the package directory, the
    /// victim.
    fn paths(&self, server: &Server) -> HostPaths {
        server
            .host_paths()
            .with(self.wheelhouse.path())
            .with(self.js_packages.path())
            .with(self.victim.path())
    }
}

async fn install(server: &Server, args: Value) -> Result<Reply> {
    server.call("install_package", args).await
}

/// The host path of `path` in the session's `/app`.
fn in_app(server: &Server, session: &str, path: &str) -> Result<PathBuf> {
    Ok(server
        .workspace_of(session)
        .with_context(|| format!("workspace of {session}"))?
        .join(path))
}

/// What a package directory of the session holds (empty when it is missing or empty).
fn installed(server: &Server, session: &str, dir: &str) -> Result<Vec<PathBuf>> {
    Ok(Snapshot::of(&in_app(server, session, dir)?)
        .paths()
        .into_iter()
        .filter(|p| !p.as_os_str().is_empty())
        .collect())
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Files whose name contains "evil" anywhere under `root` (links not followed).
fn evil_files(root: &Path) -> Vec<PathBuf> {
    Snapshot::of(root)
        .paths()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("evil"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn links_planted_inside_the_package_dirs_are_replaced_not_written_through() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    let paths = fx.paths(&server);

    // Baseline: installed, importable in the next execute_code.
    server.python("base", "x = 1").await?;
    let base = install(
        &server,
        json!({ "package": "goodpkg", "session_id": "base" }),
    )
    .await?;
    ensure!(!base.is_error, "{base:?}");
    paths.check_reply("install goodpkg", &base);
    assert_eq!(base.value["import_names"], json!(["goodpkg"]));
    let imported = server
        .python("base", "import goodpkg\ngoodpkg.VALUE + x")
        .await?;
    assert_eq!(imported.str("result"), "8");

    // Links to a victim where the package and its .dist-info go (made by the guest), and to
    // a victim's file where a module goes (a guest's symlink, or a hard link only the host can
    // make). Each case has a victim and a session of its own; the wrong outcomes are reported
    // together.
    let mut failures = Vec::new();
    for (session, link, kind, package, value) in [
        ("pkglink", ".packages/goodpkg", "dir", "goodpkg", "7"),
        (
            "infolink",
            ".packages/goodpkg-1.0.dist-info",
            "dir",
            "goodpkg",
            "7",
        ),
        ("modlink", ".packages/goodmod.py", "file", "goodmod", "8"),
        ("modhard", ".packages/goodmod.py", "hard", "goodmod", "8"),
    ] {
        let victim = Victim::new()?;
        server
            .python(session, "import os\nos.makedirs('.packages')")
            .await?;
        let app = server.workspace_of(session).context("workspace")?;
        let target = match kind {
            "dir" => victim.path(),
            _ => victim.file(),
        };
        if kind == "hard" {
            std::fs::hard_link(&target, app.join(link))?;
        } else {
            let relative = host::relative_path(&app.join(".packages"), &target);
            server
                .python(
                    session,
                    &format!("import os\nos.symlink({:?}, {link:?})", relative.display()),
                )
                .await?;
            ensure!(
                app.join(link).canonicalize()? == target,
                "{link} leads to the victim"
            );
        }

        let reply = install(
            &server,
            json!({ "package": package, "session_id": session }),
        )
        .await?;
        let mut wrong = Vec::new();
        if reply.is_error {
            wrong.push(format!(
                "refused: {} {}",
                reply.str("error_type"),
                reply.str("error_message")
            ));
        } else if reply.value["import_names"] != json!([package]) {
            wrong.push(format!("import_names {}", reply.value["import_names"]));
        }
        let text = format!("{} {}", reply.text, reply.value);
        if let Some(path) = paths.clone().with(victim.path()).leak_in(&text) {
            wrong.push(format!("the reply names {path}"));
        }
        if text.contains(&victim.secret) {
            wrong.push("the reply quotes the victim's top_level.txt".into());
        }
        let changed = victim.changed();
        if !changed.is_empty() {
            wrong.push(format!(
                "written through the link: victim changed {changed:?}"
            ));
        }
        if std::fs::read_to_string(victim.file())? != victim.secret {
            wrong.push("the victim's file lost its content".into());
        }
        let planted = app.join(link);
        if is_symlink(&planted) {
            wrong.push("the link is still there".into());
        } else if std::fs::metadata(&planted)?.ino() == std::fs::metadata(victim.file())?.ino() {
            wrong.push("the module is still the victim's inode".into());
        }
        if !reply.is_error {
            let imported = server
                .exec(
                    "python",
                    &format!("import {package}\n{package}.VALUE"),
                    json!({ "session_id": session }),
                )
                .await?;
            if imported.str("result") != value {
                wrong.push(format!(
                    "import gave {:?} {}",
                    imported.str("result"),
                    imported.str("error_message")
                ));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!("{session}: {}", wrong.join("; ")));
        }
    }
    ensure!(
        failures.is_empty(),
        "{} planted links were not replaced cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    fx.victim.assert_unchanged("after every install");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_packages_dir_linked_out_of_app_is_refused() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    server.python("outlink", "1").await?;
    let app = server.workspace_of("outlink").context("workspace")?;
    let relative = host::relative_path(&app, &fx.victim.path());
    server
        .python(
            "outlink",
            &format!(
                "import os\nos.symlink({:?}, '.packages')",
                relative.display()
            ),
        )
        .await?;
    ensure!(app.join(".packages").canonicalize()? == fx.victim.path());
    for package in ["goodpkg", "goodmod"] {
        let refused = install(
            &server,
            json!({ "package": package, "session_id": "outlink" }),
        )
        .await?;
        ensure!(refused.is_error, "{package}: {refused:?}");
        assert_eq!(refused.str("error_type"), "path_restriction", "{refused:?}");
        fx.paths(&server).check_reply(package, &refused);
        fx.victim.assert_unchanged(package);
    }
    let pip = server
        .call(
            "execute_command",
            json!({ "command": "pip install goodpkg", "session_id": "outlink" }),
        )
        .await?;
    ensure!(
        pip.is_error && pip.str("error_type") == "path_restriction",
        "pip through the link: {pip:?}"
    );
    fx.paths(&server).check_reply("pip", &pip);
    fx.victim.assert_unchanged("pip install");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_wheels_are_refused_before_anything_is_written() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    let scratch = server
        .state_dir
        .parent()
        .context("scratch dir")?
        .to_path_buf();
    // Every wheel gets a session of its own, holding an installed package already; the
    // wrong outcomes are reported together.
    let mut failures = Vec::new();
    let mut evil_before = Vec::new();
    for package in ["dotdot", "absolute", "nested", "linky", "leaky"] {
        let session = format!("hostile-{package}");
        server.python(&session, "1").await?;
        let first = install(
            &server,
            json!({ "package": "goodpkg", "session_id": session }),
        )
        .await?;
        ensure!(!first.is_error, "{first:?}");
        let app = server.workspace_of(&session).context("workspace")?;
        let before = Snapshot::of(&app).without_times();
        let victim_before = fx.victim.changed();

        let reply = install(
            &server,
            json!({ "package": package, "session_id": session }),
        )
        .await?;
        let mut wrong = Vec::new();
        if !reply.is_error || reply.str("error_type") != "invalid_package" {
            wrong.push(format!(
                "answered {} {}",
                if reply.is_error {
                    reply.str("error_type")
                } else {
                    "success"
                },
                reply.str("error_message")
            ));
        }
        let text = format!("{} {}", reply.text, reply.value);
        if let Some(path) = fx.paths(&server).leak_in(&text) {
            wrong.push(format!("the reply names {path}"));
        }
        if text.contains(&fx.victim.secret) {
            wrong.push("the reply quotes the victim".into());
        }
        let after = Snapshot::of(&app).without_times();
        if after != before {
            let new: Vec<_> = after
                .paths()
                .into_iter()
                .filter(|p| !before.0.contains_key(p))
                .collect();
            wrong.push(format!("/app changed, new entries: {new:?}"));
        }
        let victim_now = fx.victim.changed();
        if victim_now != victim_before {
            wrong.push(format!("the victim changed: {victim_now:?}"));
        }
        if fx.abs_evil.exists() {
            wrong.push(format!("{} was written", fx.abs_evil.display()));
        }
        let evil = evil_files(&scratch);
        let new_evil: Vec<_> = evil.iter().filter(|p| !evil_before.contains(*p)).collect();
        if !new_evil.is_empty() {
            wrong.push(format!("written on the host: {new_evil:?}"));
        }
        evil_before = evil;
        if !wrong.is_empty() {
            failures.push(format!("{package}: {}", wrong.join("; ")));
        }
        let still = server
            .python(&session, "import goodpkg\ngoodpkg.VALUE")
            .await?;
        assert_eq!(still.str("result"), "7");
    }
    ensure!(
        failures.is_empty(),
        "{} hostile wheels were not refused cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    fx.victim.assert_unchanged("hostile wheels");
    server.stop().await
}

/// What is wrong with an install_package answer that should be an `invalid_package` tool
/// error naming no host path, if anything.
fn wrong_refusal(
    answer: &Result<Result<Reply, rmcp::model::ErrorData>>,
    paths: &HostPaths,
) -> Option<String> {
    match answer {
        Ok(Ok(reply)) if reply.is_error && reply.str("error_type") == "invalid_package" => paths
            .leak_in(&format!("{} {}", reply.text, reply.value))
            .map(|path| format!("the reply names {path}")),
        Ok(Ok(reply)) if reply.is_error => Some(format!(
            "{}: {}",
            reply.str("error_type"),
            reply.str("error_message")
        )),
        Ok(Ok(_)) => Some("installed".into()),
        Ok(Err(error)) => Some(format!("JSON-RPC error {error:?}")),
        Err(e) => Some(e.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn package_names_and_versions_must_be_pep_508_and_pep_440() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    let paths = fx.paths(&server);
    server.python("names", "1").await?;
    server
        .exec("javascript", "1", json!({ "session_id": "jsnames" }))
        .await?;
    let python_names = [
        "../etc",
        "/etc/passwd",
        "./x",
        "x/y",
        "https://evil.example/x.whl",
        "git+https://x/y",
        "x @ https://y/z.whl",
        "-e",
        "--index-url=http://evil",
        "x[extra]",
        "x;os_name==\"posix\"",
        "file:///etc/passwd",
        "~root",
        "a b",
    ];
    let mut cases: Vec<Value> = python_names
        .iter()
        .map(|name| json!({ "package": name, "session_id": "names" }))
        .collect();
    for version in ["1.0; rm -rf /", "../1", ">=1.0", "1.0 --pre"] {
        cases.push(json!({ "package": "goodpkg", "version": version, "session_id": "names" }));
    }
    for name in ["../x", "a/b/c", "@scope/../x", "http://x"] {
        cases.push(json!({ "package": name, "session_id": "jsnames" }));
    }
    // Every case is checked; the wrong answers are reported together.
    let mut failures = Vec::new();
    for args in &cases {
        let answer = server.call_rpc("install_package", args.clone()).await;
        if let Some(wrong) = wrong_refusal(&answer, &paths) {
            failures.push(format!("{args}: {wrong}"));
        }
    }
    ensure!(
        failures.is_empty(),
        "{} of {} answers are wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // The empty name may be refused as a bad argument instead.
    match server
        .call_rpc(
            "install_package",
            json!({ "package": "", "session_id": "names" }),
        )
        .await?
    {
        Ok(reply) => {
            assert!(reply.is_error, "{reply:?}");
            assert_eq!(reply.str("error_type"), "invalid_package", "{reply:?}");
        }
        Err(error) => assert_eq!(error.code.0, -32602, "{error:?}"),
    }
    for (session, dir) in [("names", ".packages"), ("jsnames", "node_modules")] {
        let found = installed(&server, session, dir)?;
        ensure!(found.is_empty(), "nothing was installed: {found:?}");
    }
    for version in ["==1.0", "1.0"] {
        let ok = install(
            &server,
            json!({ "package": "goodpkg", "version": version, "session_id": "names" }),
        )
        .await?;
        ensure!(!ok.is_error, "{version} is a version: {ok:?}");
        assert_eq!(ok.str("installed_version"), "1.0");
    }
    fx.victim.assert_unchanged("names");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn pip_install_in_a_command_takes_only_package_names() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    server.python("pip", "1").await?;
    for command in [
        "pip install ../x",
        "pip install ./x",
        "pip install https://evil.example/x.whl",
        "pip install git+https://x/y",
        "pip install file:///etc/passwd",
    ] {
        let reply = server
            .call(
                "execute_command",
                json!({ "command": command, "session_id": "pip" }),
            )
            .await?;
        ensure!(
            reply.is_error && reply.str("error_type") == "invalid_package",
            "{command}: {reply:?}"
        );
        ensure!(!reply.str("stdout").contains("Successfully"), "{reply:?}");
        fx.paths(&server).check_reply(command, &reply);
        let found = installed(&server, "pip", ".packages")?;
        ensure!(found.is_empty(), "{command}: installed {found:?}");
    }
    let good = server
        .call(
            "execute_command",
            json!({ "command": "pip install goodpkg==1.0", "session_id": "pip" }),
        )
        .await?;
    ensure!(!good.is_error, "a plain name installs: {good:?}");
    fx.victim.assert_unchanged("pip");
    server.stop().await
}

/// Makes `link` (in `/app`) a symlink to `target` from JavaScript guest code (QuickJS
/// `os.symlink`), or from the host when this QuickJS build has no `os.symlink`.
async fn js_symlink(server: &Server, session: &str, target: &Path, link: &str) -> Result<()> {
    let made = server
        .exec(
            "javascript",
            &format!(
                "typeof os.symlink === 'function' ? os.symlink({:?}, {link:?}) : 'none'",
                target.display().to_string()
            ),
            json!({ "session_id": session }),
        )
        .await?;
    ensure!(!made.is_error, "{made:?}");
    if made.str("result").contains("none") {
        eprintln!("QuickJS has no os.symlink here: {link} is planted on the host");
        std::os::unix::fs::symlink(target, in_app(server, session, link)?)?;
    } else {
        assert_eq!(made.str("result"), "0", "os.symlink: {made:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_packages_install_and_refuse_or_replace_links() -> Result<()> {
    let fx = Fixture::new()?;
    let server = fx.server().await?;
    let paths = fx.paths(&server);

    server
        .exec("javascript", "1", json!({ "session_id": "jsbase" }))
        .await?;
    let base = install(
        &server,
        json!({ "package": "leftpad", "language": "javascript", "session_id": "jsbase" }),
    )
    .await?;
    ensure!(!base.is_error, "{base:?}");
    paths.check_reply("leftpad", &base);
    let used = server
        .exec(
            "javascript",
            "requireVendor('leftpad')('x', 3)",
            json!({ "session_id": "jsbase" }),
        )
        .await?;
    assert_eq!(used.str("result"), "\"..x\"", "{used:?}");

    // /app/node_modules itself leads out: refused.
    server
        .exec("javascript", "1", json!({ "session_id": "jsdir" }))
        .await?;
    let app = server.workspace_of("jsdir").context("workspace")?;
    js_symlink(
        &server,
        "jsdir",
        &host::relative_path(&app, &fx.victim.path()),
        "node_modules",
    )
    .await?;
    ensure!(app.join("node_modules").canonicalize()? == fx.victim.path());
    let refused = install(
        &server,
        json!({ "package": "leftpad", "language": "javascript", "session_id": "jsdir" }),
    )
    .await?;
    ensure!(refused.is_error, "{refused:?}");
    assert_eq!(refused.str("error_type"), "path_restriction", "{refused:?}");
    paths.check_reply("node_modules link", &refused);
    fx.victim.assert_unchanged("node_modules link");

    // /app/node_modules/leftpad leads out: replaced by the package.
    server
        .exec(
            "javascript",
            "os.mkdir('node_modules')",
            json!({ "session_id": "jspkg" }),
        )
        .await?;
    let app = server.workspace_of("jspkg").context("workspace")?;
    js_symlink(
        &server,
        "jspkg",
        &host::relative_path(&app.join("node_modules"), &fx.victim.path()),
        "node_modules/leftpad",
    )
    .await?;
    ensure!(app.join("node_modules/leftpad").canonicalize()? == fx.victim.path());
    let replaced = install(
        &server,
        json!({ "package": "leftpad", "language": "javascript", "session_id": "jspkg" }),
    )
    .await?;
    ensure!(!replaced.is_error, "{replaced:?}");
    paths.check_reply("leftpad link", &replaced);
    fx.victim.assert_unchanged("node_modules/leftpad link");
    ensure!(!is_symlink(&app.join("node_modules/leftpad")));
    ensure!(app.join("node_modules/leftpad/index.js").is_file());
    let used = server
        .exec(
            "javascript",
            "requireVendor('leftpad')('y', 2)",
            json!({ "session_id": "jspkg" }),
        )
        .await?;
    assert_eq!(used.str("result"), "\".y\"", "{used:?}");
    server.stop().await
}
