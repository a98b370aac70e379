//! Packages: what is vendored (read-only under /data, measured first-import fuel), what a
//! session installed, and `install_package`.
//!
//! Installs run on the host, never in the guest, and treat everything the client or the guest
//! controls as hostile:
//! - the name and version are checked as names ([`names`]) before any tool runs;
//! - Python wheels are fetched by one fixed pip command ([`pip`]) into a server-owned staging
//!   directory, checked and unpacked there by the server ([`wheel`]);
//! - only then do they move into the session's `/app/.packages` (or `/app/node_modules`)
//!   through the confined layer: the directory must be a real directory (a guest's symlink in
//!   its place is refused), and each entry replaces what had its name by rename, so a guest's
//!   link or hard link there is replaced, never written through.

pub mod names;
pub mod pip;
pub mod wheel;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_protocol::confined::{ConfinedError, CopyLimits, EntryKind, Follow, Root};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::workspace::Staging;

/// Where installed Python packages live inside the workspace (on `sys.path` in the sandbox).
pub const PYTHON_PACKAGES_DIR: &str = ".packages";
/// Where installed JavaScript packages live inside the workspace (searched by requireVendor).
pub const JS_PACKAGES_DIR: &str = "node_modules";

/// How long a download may take before it is abandoned.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// Bounds of one Python install (the package and its dependencies, unpacked).
const WHEEL_LIMITS: wheel::Limits = wheel::Limits {
    max_entries: 20_000,
    max_bytes: 256 << 20,
};

/// Bounds of one JavaScript package copied from the operator's directory.
const JS_COPY_LIMITS: CopyLimits = CopyLimits {
    max_bytes: 64 << 20,
    max_files: 20_000,
    max_depth: 32,
};

/// The catalogue of the JavaScript standard library, helpers and vendored packages.
pub const JS_CATALOG: &str = include_str!("../../../vendor/js/catalog.json");

/// Distributions that only exist with compiled extensions, with what to use instead.
const NATIVE_ONLY: [(&str, &str); 22] = [
    (
        "numpy",
        "plain lists, the statistics and math modules, or sympy/mpmath for exact math",
    ),
    (
        "pandas",
        "the csv module, openpyxl/xlsxwriter for spreadsheets, tabulate for tables",
    ),
    ("scipy", "mpmath and sympy (vendored)"),
    ("scikit-learn", "pure-Python code on lists; statistics"),
    ("sklearn", "pure-Python code on lists; statistics"),
    (
        "matplotlib",
        "write data as CSV/JSON, or render text charts with rich",
    ),
    (
        "pillow",
        "no image library works in WebAssembly yet; process image metadata as bytes",
    ),
    ("pil", "no image library works in WebAssembly yet"),
    (
        "lxml",
        "xml.etree.ElementTree (stdlib), html5lib or beautifulsoup4 (vendored)",
    ),
    ("torch", "no deep-learning framework runs here"),
    ("tensorflow", "no deep-learning framework runs here"),
    ("opencv-python", "no computer-vision library runs here"),
    ("cryptography", "hashlib, hmac and secrets (stdlib)"),
    (
        "psycopg2",
        "there is no network in the sandbox; use sqlite3 (stdlib)",
    ),
    (
        "psycopg2-binary",
        "there is no network in the sandbox; use sqlite3 (stdlib)",
    ),
    ("regex", "the re module (stdlib)"),
    ("orjson", "the json module (stdlib)"),
    ("ujson", "the json module (stdlib)"),
    ("pydantic-core", "pydantic 1.10 (vendored, pure Python)"),
    ("rpds-py", "jsonschema 4.17 (vendored) does not need it"),
    ("grpcio", "there is no network in the sandbox"),
    (
        "requests",
        "there is no network in the sandbox: read files from /app instead",
    ),
];

/// One vendored Python import, from `import-fuel.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct VendoredImport {
    pub package: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub fuel: Option<u64>,
    #[serde(default)]
    pub ms: Option<f64>,
    #[serde(default)]
    pub over_default_budget: Option<bool>,
}

/// The vendored Python imports (import name → details), read from the data directory (the
/// operator's, not a session's).
pub fn vendored_python(data_dir: Option<&Path>) -> BTreeMap<String, VendoredImport> {
    #[derive(Deserialize)]
    struct File {
        python: BTreeMap<String, VendoredImport>,
    }
    data_dir
        .and_then(|d| std::fs::read_to_string(d.join("import-fuel.json")).ok())
        .and_then(|text| serde_json::from_str::<File>(&text).ok())
        .map(|f| f.python)
        .unwrap_or_default()
}

/// Distributions installed into a workspace (from their `.dist-info` directories). Names only:
/// nothing inside the guest-writable directory is read.
pub fn installed_python(app: &Root) -> Vec<(String, String)> {
    let Ok(packages) = app.open_dir_nofollow(Path::new(PYTHON_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = entry_names(&packages)
        .into_iter()
        .filter_map(|(name, _)| {
            let stem = name.strip_suffix(".dist-info")?;
            let (dist, version) = stem.rsplit_once('-')?;
            Some((dist.to_owned(), version.to_owned()))
        })
        .collect();
    found.sort();
    found
}

/// JavaScript packages installed into a workspace: real directories in `node_modules`, and
/// `@scope/name` one level down.
pub fn installed_js(app: &Root) -> Vec<String> {
    let Ok(modules) = app.open_dir_nofollow(Path::new(JS_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for (name, kind) in entry_names(&modules) {
        if kind != EntryKind::Dir {
            continue;
        }
        if name.starts_with('@') {
            if let Ok(scope) = modules.open_dir_nofollow(Path::new(&name)) {
                names.extend(
                    entry_names(&scope)
                        .into_iter()
                        .filter(|(_, k)| *k == EntryKind::Dir)
                        .map(|(pkg, _)| format!("{name}/{pkg}")),
                );
            }
        } else {
            names.push(name);
        }
    }
    names.sort();
    names
}

/// The names and kinds (links not followed) of a directory's entries.
fn entry_names(dir: &Root) -> Vec<(String, EntryKind)> {
    let Ok(entries) = dir.dir().entries() else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let kind = EntryKind::of(e.metadata().ok()?.file_type());
            Some((e.file_name().to_string_lossy().into_owned(), kind))
        })
        .collect()
}

/// Normalised distribution name (PEP 503).
pub fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// Why an install did not happen, with advice.
#[derive(Debug, Clone)]
pub struct InstallRefusal {
    pub error_type: &'static str,
    pub message: String,
    pub alternatives: Vec<String>,
}

impl InstallRefusal {
    fn new(error_type: &'static str, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
            alternatives: Vec::new(),
        }
    }

    fn with(mut self, alternative: impl Into<String>) -> Self {
        self.alternatives.push(alternative.into());
        self
    }

    fn system(what: &str, e: impl std::fmt::Display) -> Self {
        Self::new("system_error", format!("{what}: {e}"))
    }

    /// `dir` in `/app` is not a real directory: the guest put something else there.
    fn not_a_directory(dir: &str, error: &ConfinedError) -> Self {
        let what = match error {
            ConfinedError::NotDirectory(kind) => format!("a {}", kind.name()),
            other => other.to_string(),
        };
        Self::new(
            "path_restriction",
            format!(
                "/app/{dir} is {what}, not a directory: the server installs only into a real directory and never writes through a link"
            ),
        )
        .with(format!(
            "remove it with execute_command {{\"command\": \"rm -r /app/{dir}\"}} and call install_package again"
        ))
    }
}

/// Where `install_package` may get Python packages.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Directory of wheels (offline).
    pub wheelhouse: Option<PathBuf>,
    /// Whether the supervisor may download from the package index.
    pub index: bool,
    /// The operator's directory of JavaScript packages (`SANDBOX_JS_PACKAGES`).
    pub js_packages: Option<PathBuf>,
}

impl Sources {
    pub fn from_env() -> Self {
        let path = |name| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Self {
            wheelhouse: path("SANDBOX_WHEELHOUSE"),
            index: std::env::var("SANDBOX_ALLOW_PYPI").is_ok_and(|v| v == "1" || v == "true"),
            js_packages: path("SANDBOX_JS_PACKAGES"),
        }
    }
}

/// What an install did.
#[derive(Debug, Clone)]
pub struct Installed {
    pub package: String,
    pub version: String,
    pub dependencies: Vec<String>,
    /// Top-level names to import.
    pub import_names: Vec<String>,
}

/// Checks a Python requirement: a PEP 508 name that is not native-only, and an exact version.
/// Returns the pip requirement string.
///
/// # Errors
/// [`InstallRefusal`] with `invalid_package` or `native_package`.
pub fn python_requirement(package: &str, version: Option<&str>) -> Result<String, InstallRefusal> {
    names::python_name(package).map_err(|m| InstallRefusal::new("invalid_package", m))?;
    let version = version
        .map(names::python_version)
        .transpose()
        .map_err(|m| InstallRefusal::new("invalid_package", m))?;
    let wanted = normalize(package);
    if let Some((_, instead)) = NATIVE_ONLY.iter().find(|(name, _)| *name == wanted) {
        return Err(InstallRefusal::new(
            "native_package",
            format!(
                "{package} cannot run here: it needs compiled (C/Rust) extensions or the network, and this sandbox runs CPython compiled to WebAssembly, which only loads pure-Python code"
            ),
        )
        .with(format!("use instead: {instead}"))
        .with("call list_available_packages to see what is vendored"));
    }
    Ok(match version {
        Some(v) => format!("{package}=={v}"),
        None => package.to_owned(),
    })
}

/// Installs a pure-Python distribution and its pure-Python dependencies into `app`'s
/// `.packages`, fetching and unpacking them in `staging` first.
///
/// # Errors
/// An [`InstallRefusal`]: bad name, native code, no source configured, download failure, a
/// hostile archive, or a guest-made `.packages` that is not a directory.
pub async fn install_python(
    package: &str,
    version: Option<&str>,
    app: &Root,
    staging: &Staging,
    sources: &Sources,
) -> Result<Installed, InstallRefusal> {
    let requirement = python_requirement(package, version)?;
    if sources.wheelhouse.is_none() && !sources.index {
        return Err(InstallRefusal::new(
            "install_disabled",
            format!(
                "{package} is not vendored, and this server has no package source: the operator can set SANDBOX_WHEELHOUSE (a directory of wheels) or SANDBOX_ALLOW_PYPI=1"
            ),
        )
        .with("call list_available_packages for the vendored packages"));
    }
    let download = staging
        .root
        .create_private_dir("download")
        .map_err(|e| InstallRefusal::system("cannot create a download directory", e))?;
    let command = pip::download_command(
        &pip::python3(),
        &requirement,
        &staging.path,
        &staging.path.join("download"),
        sources,
    );
    let output = run_pip(command).await?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let missing = stderr
            .lines()
            .find(|l| l.contains("No matching distribution found for"))
            .map(|l| l.trim().to_owned());
        return Err(match missing {
            Some(line) => InstallRefusal::new(
                "package_not_found",
                format!(
                    "no pure-Python wheel found ({line}): the package does not exist, or it (or a dependency) only ships compiled extensions, which cannot run in WebAssembly"
                ),
            )
            .with("check the spelling on pypi.org")
            .with("call list_available_packages for the vendored packages"),
            None => InstallRefusal::new(
                "system_error",
                format!("pip failed: {}", stderr.lines().last().unwrap_or_default()),
            ),
        });
    }
    let unpacked = staging
        .root
        .create_private_dir("unpacked")
        .map_err(|e| InstallRefusal::system("cannot create an unpack directory", e))?;
    let wheels = downloaded_wheels(&download)?;
    let mut budget = wheel::Budget::default();
    for name in &wheels {
        let (file, _) = download
            .open_regular(Path::new(name), Follow::No)
            .map_err(|e| InstallRefusal::system("cannot open a downloaded wheel", e))?;
        wheel::unpack(file.into_std(), name, &unpacked, WHEEL_LIMITS, &mut budget).map_err(
            |e| match e {
                wheel::WheelError::Refused { .. } => {
                    InstallRefusal::new("invalid_package", format!("the package was refused: {e}"))
                        .with("nothing was installed; choose another version or package")
                }
                wheel::WheelError::Native { .. } => {
                    InstallRefusal::new("native_package", e.to_string())
                }
                wheel::WheelError::Io { .. } => InstallRefusal::system("cannot unpack", e),
            },
        )?;
    }
    let mut installed = Installed {
        package: package.to_owned(),
        version: String::new(),
        dependencies: Vec::new(),
        import_names: Vec::new(),
    };
    let wanted = normalize(package);
    for name in &wheels {
        let mut parts = name.splitn(3, '-');
        let (dist, version) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        if normalize(dist) == wanted {
            installed.version = version.to_owned();
            if let Some(info) = wheel::dist_info(&unpacked, dist) {
                installed.import_names = wheel::top_level_names(&unpacked, &info);
            }
        } else {
            installed.dependencies.push(format!("{dist}=={version}"));
        }
    }
    move_python_packages(app, &unpacked, &wheels)?;
    Ok(installed)
}

/// Runs pip with its timeout.
async fn run_pip(
    mut command: tokio::process::Command,
) -> Result<std::process::Output, InstallRefusal> {
    match tokio::time::timeout(DOWNLOAD_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(InstallRefusal::system("cannot run pip on the server", e)),
        Err(_) => Err(InstallRefusal::new(
            "system_error",
            "the download timed out",
        )),
    }
}

/// The wheels pip downloaded: pure ones only (the tag says so; the unpacker checks the files).
fn downloaded_wheels(download: &Root) -> Result<Vec<String>, InstallRefusal> {
    let mut wheels: Vec<String> = entry_names(download)
        .into_iter()
        .filter(|(name, kind)| *kind == EntryKind::File && name.ends_with(".whl"))
        .map(|(name, _)| name)
        .collect();
    wheels.sort();
    if let Some(native) = wheels.iter().find(|w| !w.ends_with("-none-any.whl")) {
        return Err(InstallRefusal::new(
            "native_package",
            format!("{native} contains compiled code, which cannot run in WebAssembly"),
        ));
    }
    if wheels.is_empty() {
        return Err(InstallRefusal::new(
            "package_not_found",
            "pip downloaded no wheel",
        ));
    }
    Ok(wheels)
}

/// Moves every unpacked top-level entry into `/app/.packages`, replacing what had its name
/// (and older `.dist-info` directories of the same distributions).
fn move_python_packages(
    app: &Root,
    unpacked: &Root,
    wheels: &[String],
) -> Result<(), InstallRefusal> {
    let packages = app
        .ensure_dir(Path::new(PYTHON_PACKAGES_DIR))
        .map_err(|e| InstallRefusal::not_a_directory(PYTHON_PACKAGES_DIR, &e))?;
    let dists: Vec<String> = wheels
        .iter()
        .filter_map(|w| w.split('-').next())
        .map(normalize)
        .collect();
    for (name, _) in entry_names(&packages) {
        let stale = name
            .strip_suffix(".dist-info")
            .and_then(|stem| stem.rsplit_once('-'))
            .is_some_and(|(dist, _)| dists.contains(&normalize(dist)));
        if stale {
            packages
                .remove_tree(Path::new(&name))
                .map_err(|e| InstallRefusal::system("cannot remove an older version", e))?;
        }
    }
    let entries = wheel::top_level_entries(unpacked)
        .map_err(|e| InstallRefusal::system("cannot read the unpacked package", e))?;
    for (name, _) in entries {
        packages.replace_from(&name, unpacked, &name).map_err(|e| {
            InstallRefusal::system("cannot move the package into /app/.packages", e)
        })?;
    }
    Ok(())
}

/// Makes a running Python interpreter see newly installed packages, binding no user names.
pub const PYTHON_REFRESH: &str = "(__import__('sys').path.append('/app/.packages') if '/app/.packages' not in __import__('sys').path else None, __import__('sys').path_importer_cache.pop('/app/.packages', None), __import__('importlib').invalidate_caches()) and None";

/// Installs a JavaScript package: the vendored set needs nothing; otherwise a package directory
/// of the operator's `SANDBOX_JS_PACKAGES` is copied (directories and regular files only) into
/// `staging`, then moved into the session's `/app/node_modules`.
///
/// # Errors
/// An [`InstallRefusal`] when the name is not an npm name, the package is unknown, or the
/// guest put something other than a directory at `/app/node_modules`.
pub fn install_js(
    package: &str,
    data_dir: Option<&Path>,
    app: &Root,
    staging: &Staging,
    sources: &Sources,
) -> Result<Value, InstallRefusal> {
    names::js_name(package).map_err(|m| InstallRefusal::new("invalid_package", m))?;
    if data_dir.is_some_and(|d| d.join("js").join(package).is_dir()) {
        return Ok(json!({
            "success": true,
            "package": package,
            "installed_version": "vendored",
            "dependencies_installed": [],
            "message": format!("{package} is vendored: use requireVendor('{package}') directly"),
        }));
    }
    let not_found = || {
        InstallRefusal::new(
            "package_not_found",
            format!(
                "{package} is not vendored and not in the operator's local package directory (SANDBOX_JS_PACKAGES); npm downloads are not available for QuickJS sessions"
            ),
        )
        .with("call list_available_packages with language javascript")
        .with("write the code yourself, or paste a small pure-JS library into /app and load it with requireVendor from /app/node_modules")
    };
    let source = sources
        .js_packages
        .as_deref()
        .and_then(|dir| Root::open_ambient(dir).ok())
        .ok_or_else(not_found)?;
    match source.open_dir_nofollow(Path::new(package)) {
        Ok(_) => {}
        Err(_) => return Err(not_found()),
    }
    source
        .copy_tree_into(
            Path::new(package),
            &staging.root,
            Path::new("package"),
            JS_COPY_LIMITS,
        )
        .map_err(|e| match e {
            ConfinedError::TooLarge { .. } => InstallRefusal::new(
                "invalid_package",
                format!("{package} is too large to install: {e}"),
            ),
            other => InstallRefusal::system("copy failed", other),
        })?;
    let version = staging
        .root
        .read_regular(Path::new("package/package.json"), Follow::No, 1 << 20)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| v.get("version").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    let modules = app
        .ensure_dir(Path::new(JS_PACKAGES_DIR))
        .map_err(|e| InstallRefusal::not_a_directory(JS_PACKAGES_DIR, &e))?;
    let (parent, name) = match package.split_once('/') {
        Some((scope, name)) => (
            modules.ensure_dir(Path::new(scope)).map_err(|e| {
                InstallRefusal::not_a_directory(&format!("{JS_PACKAGES_DIR}/{scope}"), &e)
            })?,
            name,
        ),
        None => (modules, package),
    };
    parent
        .replace_from(Path::new(name), &staging.root, Path::new("package"))
        .map_err(|e| InstallRefusal::system("cannot move the package into /app/node_modules", e))?;
    Ok(json!({
        "success": true,
        "package": package,
        "installed_version": version,
        "dependencies_installed": [],
        "message": format!("installed into /app/node_modules/{package}: use requireVendor('{package}')"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_are_checked_before_anything_runs() {
        assert_eq!(python_requirement("tabulate", None).unwrap(), "tabulate");
        assert_eq!(
            python_requirement("tabulate", Some("==0.9.0")).unwrap(),
            "tabulate==0.9.0"
        );
        for (name, version) in [("../etc", None), ("x", Some(">=1")), ("x @ http://y", None)] {
            let err = python_requirement(name, version).unwrap_err();
            assert_eq!(err.error_type, "invalid_package", "{name}");
        }
        let err = python_requirement("numpy", None).unwrap_err();
        assert_eq!(err.error_type, "native_package");
        assert!(err.alternatives[0].contains("statistics"));
        assert_eq!(normalize("Python_Dateutil"), "python-dateutil");
    }

    #[tokio::test]
    async fn no_source_means_no_install() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let staging = dirs.staging().unwrap();
        let err = install_python("somepkg", None, &files.app, &staging, &Sources::default())
            .await
            .unwrap_err();
        assert_eq!(err.error_type, "install_disabled");
    }

    #[test]
    fn js_installs_refuse_a_linked_node_modules_and_replace_linked_packages() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let operator = tempfile::tempdir().unwrap();
        std::fs::create_dir(operator.path().join("leftpad")).unwrap();
        std::fs::write(
            operator.path().join("leftpad/package.json"),
            r#"{"version": "1.3.0"}"#,
        )
        .unwrap();
        std::fs::write(operator.path().join("leftpad/index.js"), "x").unwrap();
        let sources = Sources {
            js_packages: Some(operator.path().to_path_buf()),
            ..Sources::default()
        };
        let victim = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(victim.path(), files.app_path.join("node_modules")).unwrap();
        let err = install_js(
            "leftpad",
            None,
            &files.app,
            &dirs.staging().unwrap(),
            &sources,
        )
        .unwrap_err();
        assert_eq!(err.error_type, "path_restriction");
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);

        std::fs::remove_file(files.app_path.join("node_modules")).unwrap();
        std::fs::create_dir(files.app_path.join("node_modules")).unwrap();
        std::os::unix::fs::symlink(victim.path(), files.app_path.join("node_modules/leftpad"))
            .unwrap();
        let done = install_js(
            "leftpad",
            None,
            &files.app,
            &dirs.staging().unwrap(),
            &sources,
        )
        .unwrap();
        assert_eq!(done["installed_version"], "1.3.0");
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);
        assert!(
            files
                .app_path
                .join("node_modules/leftpad/index.js")
                .is_file()
        );
        assert_eq!(installed_js(&files.app), ["leftpad"]);
        let err =
            install_js("../x", None, &files.app, &dirs.staging().unwrap(), &sources).unwrap_err();
        assert_eq!(err.error_type, "invalid_package");
    }

    #[test]
    fn the_js_catalog_is_embedded() {
        let catalog: Value = serde_json::from_str(JS_CATALOG).unwrap();
        assert!(catalog["packages"]["csv-simple"].is_object());
    }
}
