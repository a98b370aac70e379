//! Python installs: a requirement is checked (a PEP 508 name that is not native-only, an exact
//! version), answered from what the interpreter already has (the packages compiled into it, or
//! the vendored set), or else downloaded by pip as pure-Python wheels for Python 3.15 (the
//! compiled-in distributions satisfying dependencies on them) into the server's staging directory,
//! unpacked and checked there ([`wheel`]), and only then moved into the session's
//! `/app/.packages`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use sandbox_protocol::confined::{EntryKind, Follow, Root};

use super::install::{Staged, StagedFiles};
use sandbox_protocol::ErrorType;

use super::provided::{self, Provided};
use super::{
    InstallRefusal, Installation, PYTHON_PACKAGES_DIR, Sources, catalog, entry_names, names,
    normalize, pip, wheel,
};
use crate::inventory::{self, Distribution};
use crate::workspace::Staging;

/// How long a download may take before it is abandoned.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// Bounds of one Python install (the package and its dependencies, unpacked).
const WHEEL_LIMITS: wheel::Limits = wheel::Limits {
    max_entries: 20_000,
    max_bytes: 256 << 20,
};

/// Where installed packages appear inside the sandbox (on `sys.path` there).
const GUEST_PACKAGES_PATH: &str = "/app/.packages";

/// Makes a running Python interpreter see newly installed packages, binding no user names.
pub const PYTHON_REFRESH: &str = "(__import__('sys').path.append('/app/.packages') if '/app/.packages' not in __import__('sys').path else None, __import__('sys').path_importer_cache.pop('/app/.packages', None), __import__('importlib').invalidate_caches()) and None";

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

/// The Python version wheels must support (what pip resolves for).
const GUEST_PYTHON: &str = "3.15";

/// Checks a name and an optional exact version; returns the bare version.
fn checked_name<'v>(
    package: &str,
    version: Option<&'v str>,
) -> Result<Option<&'v str>, InstallRefusal> {
    names::python_name(package).map_err(|m| InstallRefusal::new(ErrorType::InvalidPackage, m))?;
    version
        .map(names::python_version)
        .transpose()
        .map_err(|m| InstallRefusal::new(ErrorType::InvalidPackage, m))
}

/// Checks a Python requirement: a PEP 508 name that is not native-only, and an exact version.
/// Returns the pip requirement string.
///
/// # Errors
/// [`InstallRefusal`] with `invalid_package` or `native_package`.
pub fn python_requirement(package: &str, version: Option<&str>) -> Result<String, InstallRefusal> {
    let version = checked_name(package, version)?;
    let wanted = normalize(package);
    if let Some((_, instead)) = NATIVE_ONLY.iter().find(|(name, _)| *name == wanted) {
        return Err(InstallRefusal::new(
            ErrorType::NativePackage,
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

/// Prepares `package`: a distribution compiled into the interpreter is answered at once
/// (nothing to download), another native one is refused with what the interpreter has, the
/// vendored copy is used when the server ships it (nothing to move either), and a pure-Python
/// one is downloaded for Python 3.15 ([`stage_python`]).
///
/// # Errors
/// An [`InstallRefusal`]: bad name, another version of a compiled-in distribution, native
/// code, or what [`stage_python`] refuses.
pub async fn stage(
    package: &str,
    version: Option<&str>,
    staging: Staging,
    data_dir: Option<&Path>,
    sources: &Sources,
) -> Result<Staged, InstallRefusal> {
    if let Some(compiled) = compiled_in(package, version)? {
        return Ok(Staged::nothing_to_move(compiled));
    }
    if let Some(refusal) = installer_itself(package) {
        return Err(refusal);
    }
    python_requirement(package, version).map_err(|refusal| {
        match refusal.error_type {
            // Say what this interpreter has besides the generic alternatives.
            ErrorType::NativePackage if !network_only(package) => InstallRefusal::new(
                ErrorType::NativePackage,
                format!(
                    "{package} cannot run here: it needs compiled extensions, and the sandbox's CPython only has the ones built into it"
                ),
            )
            .with(format!(
                "compiled in and ready to import: {}",
                inventory::catalogue().versions_of(&inventory::HEADLINE)
            ))
            .with("call list_available_packages to see every compiled-in package"),
            _ => refusal,
        }
    })?;
    let vendored = catalog::vendored_python(data_dir);
    if let Some((import, v)) = catalog::vendored_import(&vendored, package) {
        return Ok(Staged::nothing_to_move(Installation {
            installed_version: v.version.clone().unwrap_or_else(|| "vendored".into()),
            dependencies_installed: Vec::new(),
            import_names: Some(vec![import.to_owned()]),
            location: None,
            message: format!(
                "{package} is vendored (read-only under /data): `import {import}` works in every session"
            ),
            refresh_interpreter: false,
        }));
    }
    stage_python(package, version, staging, sources).await
}

/// The refusal for pip itself (`pip install --upgrade pip`, `install_package {package:
/// "pip"}`): the server installs packages with its own pip, outside the sandbox, and the sandbox
/// has none to install or upgrade. Not `install_disabled`, which would say installs are off
/// when they are not the point. `None` for any other name.
fn installer_itself(package: &str) -> Option<InstallRefusal> {
    (normalize(package) == "pip").then(|| {
        InstallRefusal::new(
            ErrorType::InvalidPackage,
            "pip is not needed here, so nothing was installed: the server installs packages with its own pip, outside the sandbox, and the sandbox has no pip to install or upgrade".to_owned(),
        )
        .with("install the package you need directly: install_package {package: \"NAME\"}, or `pip install NAME` in execute_command")
    })
}

/// True for a native-only name whose real problem is the missing network (a database driver,
/// an HTTP client): no runtime helps, so its refusal stays as it is.
fn network_only(package: &str) -> bool {
    let wanted = normalize(package);
    NATIVE_ONLY
        .iter()
        .any(|(name, instead)| *name == wanted && instead.contains("network"))
}

/// The answer for a distribution compiled into the interpreter (`None`: it is not).
fn compiled_in(
    package: &str,
    version: Option<&str>,
) -> Result<Option<Installation>, InstallRefusal> {
    let version = checked_name(package, version)?;
    let Some((name, dist)) = inventory::catalogue().distribution(package) else {
        return Ok(None);
    };
    if let Some(wanted) = version.filter(|v| *v != dist.version) {
        return Err(InstallRefusal::new(
            ErrorType::InvalidPackage,
            format!(
                "{name} {} is compiled into the sandbox's CPython; version {wanted} cannot replace it",
                dist.version
            ),
        )
        .with(format!(
            "use {name} {}: `import {}` works as is",
            dist.version, dist.imports[0]
        )));
    }
    let import = dist.imports.first().map_or(name, String::as_str);
    Ok(Some(Installation {
        installed_version: dist.version.clone(),
        dependencies_installed: Vec::new(),
        import_names: Some(dist.imports.clone()),
        location: None,
        message: format!(
            "{name} {} is already available: it is compiled into the sandbox's CPython, so `import {import}` works in this session",
            dist.version
        ),
        refresh_interpreter: false,
    }))
}

/// Prepares a pure-Python distribution and its pure-Python dependencies, resolved for the
/// sandbox's Python (its compiled-in distributions satisfy dependencies on them), for
/// `/app/.packages`: fetched and unpacked in `staging`.
///
/// # Errors
/// An [`InstallRefusal`]: bad name, native code, no source configured, download failure, or a
/// hostile archive.
pub async fn stage_python(
    package: &str,
    version: Option<&str>,
    staging: Staging,
    sources: &Sources,
) -> Result<Staged, InstallRefusal> {
    let requirement = python_requirement(package, version)?;
    if sources.wheelhouse.is_none() && !sources.index {
        return Err(InstallRefusal::new(
            ErrorType::InstallDisabled,
            format!(
                "{package} is not vendored, and this server has no package source: the operator can set SANDBOX_WHEELHOUSE (a directory of wheels) or SANDBOX_ALLOW_PYPI=1"
            ),
        )
        .with("call list_available_packages for the vendored packages"));
    }
    let compiled_in = &inventory::catalogue().distributions;
    let provided = provided::write(&staging, compiled_in)?;
    let download = download(
        &requirement,
        GUEST_PYTHON,
        &staging,
        sources,
        Some(&provided),
    )
    .await?;
    let (wheels, from_runtime): (Vec<String>, Vec<String>) = downloaded_wheels(&download)?
        .into_iter()
        .partition(|wheel| provided_by(compiled_in, wheel).is_none());
    let unpacked = unpack(&download, &wheels, &staging)?;
    let mut installation = describe(package, &wheels, &unpacked);
    if !from_runtime.is_empty() {
        let names: Vec<String> = from_runtime
            .iter()
            .filter_map(|wheel| provided_by(compiled_in, wheel))
            .collect();
        installation.message = format!(
            "{}; its dependencies {} are the ones compiled into the sandbox's CPython",
            installation.message,
            names.join(", ")
        );
    }
    let entries = wheel::top_level_entries(&unpacked)
        .map_err(|e| InstallRefusal::system("cannot read the unpacked package", e))?
        .into_iter()
        .map(|(name, _)| (name.clone(), name))
        .collect();
    let replaces_dists = wheels
        .iter()
        .filter_map(|w| w.split('-').next())
        .map(normalize)
        .collect();
    Ok(Staged::files(
        installation,
        StagedFiles {
            staging,
            from: unpacked,
            into: vec![PYTHON_PACKAGES_DIR.to_owned()],
            entries,
            replaces_dists,
        },
    ))
}

/// The compiled-in distribution (`name version`) whose stub `wheel` is, if it is one.
fn provided_by(compiled_in: &BTreeMap<String, Distribution>, wheel: &str) -> Option<String> {
    compiled_in
        .iter()
        .find(|(name, dist)| provided::wheel_file_name(name, &dist.version) == wheel)
        .map(|(name, dist)| format!("{name} {}", dist.version))
}

/// Downloads `requirement` and its dependencies as wheels for Python `python_version` into
/// `download/` of `staging` (with `provided`, dependencies on those resolve to their stubs).
async fn download(
    requirement: &str,
    python_version: &str,
    staging: &Staging,
    sources: &Sources,
    provided: Option<&Provided>,
) -> Result<Root, InstallRefusal> {
    let download = staging
        .root
        .create_private_dir("download")
        .map_err(|e| InstallRefusal::system("cannot create a download directory", e))?;
    let command = pip::download_command(
        &pip::python3(),
        requirement,
        python_version,
        (&staging.path, &staging.path.join("download")),
        sources,
        provided,
    );
    let output = run_pip(command).await?;
    if output.status.success() {
        return Ok(download);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if provided.is_some() && stderr.contains("ResolutionImpossible") {
        // pip says what conflicts on stdout: "X 1.0 depends on pandas<2", "The user requested
        // (constraint) pandas==3.0.6".
        let stdout = String::from_utf8_lossy(&output.stdout);
        let conflict: Vec<&str> = stdout
            .lines()
            .map(str::trim)
            .filter(|l| l.contains(" depends on ") || l.starts_with("The user requested"))
            .take(8)
            .collect();
        return Err(InstallRefusal::new(
            ErrorType::PackageNotFound,
            format!(
                "its requirements conflict with the versions compiled into the sandbox's CPython, which cannot change: {}",
                conflict.join("; ")
            ),
        )
        .with("install a release of the package that supports the compiled-in versions (install_package with a version)")
        .with("call list_available_packages to see the compiled-in versions"));
    }
    let missing = stderr
        .lines()
        .find(|l| l.contains("No matching distribution found for"))
        .map(|l| l.trim().to_owned());
    Err(match missing {
        Some(line) => InstallRefusal::new(
            ErrorType::PackageNotFound,
            format!(
                "no pure-Python wheel found ({line}): the package does not exist, or it (or a dependency) only ships compiled extensions, which cannot run in WebAssembly"
            ),
        )
        .with("check the spelling on pypi.org")
        .with("call list_available_packages for the vendored packages"),
        None => InstallRefusal::new(
            ErrorType::SystemError,
            format!("pip failed: {}", stderr.lines().last().unwrap_or_default()),
        ),
    })
}

/// Unpacks every downloaded wheel into `unpacked/` of `staging`, within one shared budget.
fn unpack(download: &Root, wheels: &[String], staging: &Staging) -> Result<Root, InstallRefusal> {
    let unpacked = staging
        .root
        .create_private_dir("unpacked")
        .map_err(|e| InstallRefusal::system("cannot create an unpack directory", e))?;
    let mut budget = wheel::Budget::default();
    for name in wheels {
        let (file, _) = download
            .open_regular(Path::new(name), Follow::No)
            .map_err(|e| InstallRefusal::system("cannot open a downloaded wheel", e))?;
        wheel::unpack(file.into_std(), name, &unpacked, WHEEL_LIMITS, &mut budget).map_err(
            |e| match e {
                wheel::WheelError::Refused { .. } => InstallRefusal::new(
                    ErrorType::InvalidPackage,
                    format!("the package was refused: {e}"),
                )
                .with("nothing was installed; choose another version or package"),
                wheel::WheelError::Native { .. } => {
                    InstallRefusal::new(ErrorType::NativePackage, e.to_string())
                }
                wheel::WheelError::Io { .. } => InstallRefusal::system("cannot unpack", e),
            },
        )?;
    }
    Ok(unpacked)
}

/// What the unpacked wheels install: the version and import names of `package`, and the
/// other distributions as dependencies.
fn describe(package: &str, wheels: &[String], unpacked: &Root) -> Installation {
    let mut installation = Installation {
        installed_version: String::new(),
        dependencies_installed: Vec::new(),
        import_names: Some(Vec::new()),
        location: Some(GUEST_PACKAGES_PATH.to_owned()),
        message: "importable in the next execute_code, no sys.path changes needed".to_owned(),
        refresh_interpreter: true,
    };
    let wanted = normalize(package);
    for name in wheels {
        let mut parts = name.splitn(3, '-');
        let (dist, version) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        if normalize(dist) == wanted {
            installation.installed_version = version.to_owned();
            if let Some(info) = wheel::dist_info(unpacked, dist) {
                installation.import_names = Some(wheel::top_level_names(unpacked, &info));
            }
        } else {
            installation
                .dependencies_installed
                .push(format!("{dist}=={version}"));
        }
    }
    installation
}

/// Runs pip with its timeout.
async fn run_pip(
    mut command: tokio::process::Command,
) -> Result<std::process::Output, InstallRefusal> {
    match tokio::time::timeout(DOWNLOAD_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(InstallRefusal::system("cannot run pip on the server", e)),
        Err(_) => Err(InstallRefusal::new(
            ErrorType::SystemError,
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
            ErrorType::NativePackage,
            format!("{native} contains compiled code, which cannot run in WebAssembly"),
        ));
    }
    if wheels.is_empty() {
        return Err(InstallRefusal::new(
            ErrorType::PackageNotFound,
            "pip downloaded no wheel",
        ));
    }
    Ok(wheels)
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
            assert_eq!(err.error_type, ErrorType::InvalidPackage, "{name}");
        }
        let err = python_requirement("numpy", None).unwrap_err();
        assert_eq!(err.error_type, ErrorType::NativePackage);
        assert!(err.alternatives[0].contains("statistics"));
        assert_eq!(normalize("Python_Dateutil"), "python-dateutil");
    }

    #[tokio::test]
    async fn no_source_means_no_install() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let sources = Sources::default();
        let staging = dirs.staging().unwrap();
        let err = stage_python("somepkg", None, staging, &sources)
            .await
            .unwrap_err();
        assert_eq!(err.error_type, ErrorType::InstallDisabled);
    }

    #[tokio::test]
    async fn what_is_compiled_in_is_answered_at_once() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let sources = &Sources::default();
        let (app, dirs) = (&files.app, &dirs);
        let install = |name, version| async move {
            let staged = stage(name, version, dirs.staging().unwrap(), None, sources).await?;
            staged.move_in(app)
        };
        // (asked for, version, the version answered, its import names)
        let cases = [
            ("numpy", None, "2.5.2", vec!["numpy"]),
            ("scikit-learn", None, "1.9.1", vec!["sklearn"]),
            ("sklearn", None, "1.9.1", vec!["sklearn"]),
            ("Pillow", Some("13.0.0"), "13.0.0", vec!["PIL"]),
            ("pyyaml", None, "6.0.3", vec!["yaml"]),
        ];
        for (name, version, answered, imports) in cases {
            let done = install(name, version).await.unwrap();
            assert_eq!(done.installed_version, answered, "{name}");
            assert_eq!(done.import_names.unwrap(), imports, "{name}");
            assert!(done.location.is_none() && !done.refresh_interpreter);
            assert!(done.message.contains("already available"), "{name}");
        }
        assert!(
            !files.app_path.join(".packages").exists(),
            "nothing downloaded"
        );

        let other_version = install("pandas", Some("2.2.0")).await.unwrap_err();
        assert_eq!(other_version.error_type, ErrorType::InvalidPackage);
        assert!(other_version.message.contains("pandas 3.0.6 is compiled"));

        let torch = install("torch", None).await.unwrap_err();
        assert_eq!(torch.error_type, ErrorType::NativePackage);
        assert!(torch.alternatives[0].contains("numpy 2.5.2, pandas 3.0.6"));

        let network = install("requests", None).await.unwrap_err();
        assert!(
            network.alternatives[0].contains("no network"),
            "{network:?}"
        );

        let bad = install("../x", None).await.unwrap_err();
        assert_eq!(bad.error_type, ErrorType::InvalidPackage);
        // Not compiled in and pure: it goes to pip, which this server does not have.
        let pure = install("somepkg", None).await.unwrap_err();
        assert_eq!(pure.error_type, ErrorType::InstallDisabled);
        // pip itself is not a package to install, with or without a source.
        for name in ["pip", "PIP"] {
            let pip = install(name, None).await.unwrap_err();
            assert_eq!(pip.error_type, ErrorType::InvalidPackage, "{pip:?}");
            assert!(pip.message.contains("pip is not needed"), "{pip:?}");
            assert!(pip.alternatives[0].contains("install_package"), "{pip:?}");
        }
    }

    #[tokio::test]
    async fn a_vendored_package_is_answered_without_installing() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(
            data.path().join("import-fuel.json"),
            r#"{"python": {"humanize": {"package": "humanize", "version": "4.9.0"}}}"#,
        )
        .unwrap();
        let sources = &Sources::default();
        let (app, dirs, data_dir) = (&files.app, &dirs, Some(data.path()));
        let install_named = |name| async move {
            let staged = stage(name, None, dirs.staging().unwrap(), data_dir, sources).await?;
            staged.move_in(app)
        };
        let vendored = install_named("humanize").await.unwrap();
        assert_eq!(vendored.installed_version, "4.9.0");
        assert_eq!(
            vendored.import_names.as_deref(),
            Some(&["humanize".to_owned()][..])
        );
        assert!(vendored.location.is_none() && !vendored.refresh_interpreter);
        assert!(!files.app_path.join(".packages").exists());
        let err = install_named("torch").await.unwrap_err();
        assert_eq!(
            err.error_type,
            ErrorType::NativePackage,
            "checked before the vendored set"
        );
        let compiled = install_named("pyyaml").await.unwrap();
        assert_eq!(
            compiled.installed_version, "6.0.3",
            "the compiled-in copy wins over a vendored one"
        );
    }
}
