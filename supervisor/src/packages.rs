//! Packages: what is vendored (read-only under /data, measured first-import fuel), what a
//! session installed, and `install_package`, which fetches pure-Python wheels on the host (never
//! in the guest) from a local wheelhouse or, when the operator allows it, the package index,
//! refuses anything with compiled code, and unpacks them into the session's `/app/.packages`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

/// Where installed Python packages live inside the workspace (on `sys.path` in the sandbox).
pub const PYTHON_PACKAGES_DIR: &str = ".packages";
/// Where installed JavaScript packages live inside the workspace (searched by requireVendor).
pub const JS_PACKAGES_DIR: &str = "node_modules";

/// How long a download may take before it is abandoned.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// The catalogue of the JavaScript standard library, helpers and vendored packages.
pub const JS_CATALOG: &str = include_str!("../../vendor/js/catalog.json");

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

/// The vendored Python imports (import name → details), read from the data directory.
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

/// Distributions installed into a workspace (from their `.dist-info` directories).
pub fn installed_python(workspace: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(workspace.join(PYTHON_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".dist-info")?;
            let (dist, version) = stem.rsplit_once('-')?;
            Some((dist.to_owned(), version.to_owned()))
        })
        .collect();
    found.sort();
    found
}

/// JavaScript packages installed into a workspace.
pub fn installed_js(workspace: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(workspace.join(JS_PACKAGES_DIR)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Normalised distribution name (PEP 503).
pub fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// A package name a model may ask for: PEP 508 names, npm names.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '@')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./@".contains(c))
        && !name.contains("..")
}

fn valid_version(version: &str) -> bool {
    !version.is_empty()
        && version.len() <= 64
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".*+!_-".contains(c))
}

/// Why an install did not happen, with advice.
#[derive(Debug, Clone)]
pub struct InstallRefusal {
    pub error_type: &'static str,
    pub message: String,
    pub alternatives: Vec<String>,
}

/// Where `install_package` may get Python packages.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Directory of wheels (offline).
    pub wheelhouse: Option<PathBuf>,
    /// Whether the supervisor may download from the package index.
    pub index: bool,
}

impl Sources {
    pub fn from_env() -> Self {
        Self {
            wheelhouse: std::env::var_os("SANDBOX_WHEELHOUSE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            index: std::env::var("SANDBOX_ALLOW_PYPI").is_ok_and(|v| v == "1" || v == "true"),
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

/// Installs a pure-Python distribution and its pure-Python dependencies into `workspace`.
///
/// # Errors
/// An [`InstallRefusal`]: unknown name, native code, no source configured, download failure.
pub async fn install_python(
    package: &str,
    version: Option<&str>,
    workspace: &Path,
    scratch: &Path,
    sources: &Sources,
) -> Result<Installed, InstallRefusal> {
    let refuse = |error_type, message: String, alternatives: Vec<String>| InstallRefusal {
        error_type,
        message,
        alternatives,
    };
    if !valid_name(package) || package.starts_with('@') {
        return Err(refuse(
            "invalid_package",
            format!("{package:?} is not a valid Python package name"),
            vec![],
        ));
    }
    if let Some(v) = version {
        if !valid_version(v) {
            return Err(refuse(
                "invalid_package",
                format!("{v:?} is not a valid version"),
                vec![],
            ));
        }
    }
    let wanted = normalize(package);
    if let Some((_, instead)) = NATIVE_ONLY.iter().find(|(name, _)| *name == wanted) {
        return Err(refuse(
            "native_package",
            format!(
                "{package} cannot run here: it needs compiled (C/Rust) extensions or the network, and this sandbox runs CPython compiled to WebAssembly, which only loads pure-Python code"
            ),
            vec![
                format!("use instead: {instead}"),
                "call list_available_packages to see what is vendored".into(),
            ],
        ));
    }
    if sources.wheelhouse.is_none() && !sources.index {
        return Err(refuse(
            "install_disabled",
            format!(
                "{package} is not vendored, and this server has no package source: the operator can set SANDBOX_WHEELHOUSE (a directory of wheels) or SANDBOX_ALLOW_PYPI=1"
            ),
            vec!["call list_available_packages for the vendored packages".into()],
        ));
    }
    let download = scratch.join(format!("pip-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&download).map_err(|e| {
        refuse(
            "system_error",
            format!("cannot create a download directory: {e}"),
            vec![],
        )
    })?;
    let requirement = match version {
        Some(v) if v.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
            format!("{package}=={v}")
        }
        Some(v) => format!("{package}{v}"),
        None => package.to_owned(),
    };
    let mut command = tokio::process::Command::new("python3");
    command
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .args([
            "--only-binary=:all:",
            "--platform",
            "any",
            "--python-version",
            "3.12",
            "--implementation",
            "py",
            "--abi",
            "none",
        ])
        .arg("--dest")
        .arg(&download);
    if let Some(wheelhouse) = &sources.wheelhouse {
        command.arg("--find-links").arg(wheelhouse);
    }
    if !sources.index {
        command.arg("--no-index");
    }
    command
        .arg(&requirement)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(DOWNLOAD_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            return Err(refuse(
                "system_error",
                format!("cannot run pip on the server: {e}"),
                vec![],
            ));
        }
        Err(_) => {
            return Err(refuse(
                "system_error",
                "the download timed out".into(),
                vec![],
            ));
        }
    };
    let cleanup = |dir: &Path| {
        let _ = std::fs::remove_dir_all(dir);
    };
    if !output.status.success() {
        cleanup(&download);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let missing = stderr
            .lines()
            .find(|l| l.contains("No matching distribution found for"))
            .map(|l| l.trim().to_owned());
        return Err(match missing {
            Some(line) => refuse(
                "package_not_found",
                format!(
                    "no pure-Python wheel found ({line}): the package does not exist, or it (or a dependency) only ships compiled extensions, which cannot run in WebAssembly"
                ),
                vec![
                    "check the spelling on pypi.org".into(),
                    "call list_available_packages for the vendored packages".into(),
                ],
            ),
            None => refuse(
                "system_error",
                format!("pip failed: {}", stderr.lines().last().unwrap_or_default()),
                vec![],
            ),
        });
    }
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(&download)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "whl"))
                .collect()
        })
        .unwrap_or_default();
    wheels.sort();
    // Pure wheels only: the tag says so, and no file inside may be a native library.
    for wheel in &wheels {
        let name = wheel
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !name.ends_with("-none-any.whl") {
            cleanup(&download);
            return Err(refuse(
                "native_package",
                format!("{name} contains compiled code, which cannot run in WebAssembly"),
                vec![],
            ));
        }
    }
    let target = workspace.join(PYTHON_PACKAGES_DIR);
    let script = "import sys, zipfile\nbad = ('.so', '.pyd', '.dll', '.dylib')\nfor whl in sys.argv[2:]:\n    z = zipfile.ZipFile(whl)\n    names = z.namelist()\n    if any(n.endswith(bad) for n in names):\n        sys.exit('native code in ' + whl)\n    z.extractall(sys.argv[1])\n";
    let unpack = tokio::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&target)
        .args(&wheels)
        .stdin(Stdio::null())
        .output()
        .await;
    cleanup(&download);
    match unpack {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            return Err(refuse(
                "native_package",
                String::from_utf8_lossy(&out.stderr).trim().to_owned(),
                vec![],
            ));
        }
        Err(e) => {
            return Err(refuse(
                "system_error",
                format!("cannot unpack: {e}"),
                vec![],
            ));
        }
    }
    let mut installed = Installed {
        package: package.to_owned(),
        version: String::new(),
        dependencies: Vec::new(),
        import_names: Vec::new(),
    };
    for wheel in &wheels {
        let name = wheel
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut parts = name.splitn(3, '-');
        let (dist, version) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        if normalize(dist) == wanted {
            installed.version = version.to_owned();
            installed.import_names = top_level_names(&target, dist, version);
        } else {
            installed.dependencies.push(format!("{dist}=={version}"));
        }
    }
    Ok(installed)
}

/// The import names a distribution provides: `top_level.txt`, or its RECORD's first path parts.
fn top_level_names(target: &Path, dist: &str, version: &str) -> Vec<String> {
    let info = target.join(format!("{dist}-{version}.dist-info"));
    if let Ok(text) = std::fs::read_to_string(info.join("top_level.txt")) {
        return text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let mut names: Vec<String> = std::fs::read_to_string(info.join("RECORD"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(',').next())
        .filter_map(|p| p.split('/').next())
        .filter(|p| !p.ends_with(".dist-info") && !p.ends_with(".data"))
        .map(|p| p.trim_end_matches(".py").to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Makes a running Python interpreter see newly installed packages, binding no user names.
pub const PYTHON_REFRESH: &str = "(__import__('sys').path.append('/app/.packages') if '/app/.packages' not in __import__('sys').path else None, __import__('sys').path_importer_cache.pop('/app/.packages', None), __import__('importlib').invalidate_caches()) and None";

/// Installs a JavaScript package: the vendored set needs nothing; otherwise a directory of the
/// operator's `SANDBOX_JS_PACKAGES` is copied into the session's `/app/node_modules`.
///
/// # Errors
/// An [`InstallRefusal`] when the package is unknown.
pub fn install_js(
    package: &str,
    data_dir: Option<&Path>,
    workspace: &Path,
) -> Result<Value, InstallRefusal> {
    if !valid_name(package) {
        return Err(InstallRefusal {
            error_type: "invalid_package",
            message: format!("{package:?} is not a valid package name"),
            alternatives: vec![],
        });
    }
    if data_dir.is_some_and(|d| d.join("js").join(package).is_dir()) {
        return Ok(json!({
            "success": true,
            "package": package,
            "installed_version": "vendored",
            "dependencies_installed": [],
            "message": format!("{package} is vendored: use requireVendor('{package}') directly"),
        }));
    }
    let local = std::env::var_os("SANDBOX_JS_PACKAGES")
        .map(PathBuf::from)
        .map(|d| d.join(package))
        .filter(|d| d.is_dir());
    let Some(source) = local else {
        return Err(InstallRefusal {
            error_type: "package_not_found",
            message: format!(
                "{package} is not vendored and not in the operator's local package directory (SANDBOX_JS_PACKAGES); npm downloads are not available for QuickJS sessions"
            ),
            alternatives: vec!["call list_available_packages with language javascript".into(), "write the code yourself, or paste a small pure-JS library into /app and load it with requireVendor from /app/node_modules".into()],
        });
    };
    let target = workspace.join(JS_PACKAGES_DIR).join(package);
    copy_tree(&source, &target).map_err(|e| InstallRefusal {
        error_type: "system_error",
        message: format!("copy failed: {e}"),
        alternatives: vec![],
    })?;
    let version = std::fs::read_to_string(target.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("version").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    Ok(json!({
        "success": true,
        "package": package,
        "installed_version": version,
        "dependencies_installed": [],
        "message": format!("installed into /app/node_modules/{package}: use requireVendor('{package}')"),
    }))
}

/// Copies a directory tree, skipping symlinks (a package must not smuggle a link in).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions_are_checked() {
        for ok in [
            "tabulate",
            "python-dateutil",
            "zope.interface",
            "@scope/pkg",
            "Jinja2",
        ] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "../etc", "a b", "x;rm", "-e", "pkg==1"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(valid_version("1.2.3") && valid_version(">=1.0") == false);
        assert_eq!(normalize("Python_Dateutil"), "python-dateutil");
    }

    #[tokio::test]
    async fn native_packages_are_refused_before_any_download() {
        let dir = tempfile::tempdir().unwrap();
        let err = install_python("numpy", None, dir.path(), dir.path(), &Sources::default())
            .await
            .unwrap_err();
        assert_eq!(err.error_type, "native_package");
        assert!(err.alternatives[0].contains("statistics"));
        let err = install_python("somepkg", None, dir.path(), dir.path(), &Sources::default())
            .await
            .unwrap_err();
        assert_eq!(err.error_type, "install_disabled");
    }

    #[test]
    fn the_js_catalog_is_embedded() {
        let catalog: Value = serde_json::from_str(JS_CATALOG).unwrap();
        assert!(catalog["packages"]["csv-simple"].is_object());
    }
}
