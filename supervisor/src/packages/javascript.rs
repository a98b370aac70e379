//! JavaScript installs. QuickJS has no npm: a package is either vendored (under `/data/js`,
//! loaded with `requireVendor`) or copied from the operator's local package directory
//! (`SANDBOX_JS_PACKAGES`, directories and regular files only) through the server's staging
//! directory into the session's `/app/node_modules`.

use std::path::Path;

use sandbox_protocol::ErrorType;
use sandbox_protocol::confined::{ConfinedError, CopyLimits, Follow, Root};
use serde_json::Value;

use super::{InstallRefusal, Installation, JS_PACKAGES_DIR, Sources, names};
use crate::workspace::Staging;

/// Bounds of one JavaScript package copied from the operator's directory.
const JS_COPY_LIMITS: CopyLimits = CopyLimits {
    max_bytes: 64 << 20,
    max_files: 20_000,
    max_depth: 32,
};

/// Where the package is copied inside the staging directory before it moves into /app.
const STAGED: &str = "package";

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
) -> Result<Installation, InstallRefusal> {
    names::js_name(package).map_err(|m| InstallRefusal::new(ErrorType::InvalidPackage, m))?;
    let installation = |installed_version: String, message: String| Installation {
        installed_version,
        dependencies_installed: Vec::new(),
        import_names: None,
        location: None,
        message,
        refresh_interpreter: false,
    };
    if data_dir.is_some_and(|d| d.join("js").join(package).is_dir()) {
        return Ok(installation(
            "vendored".into(),
            format!("{package} is vendored: use requireVendor('{package}') directly"),
        ));
    }
    let version = stage_from_operator(package, staging, sources)?;
    move_into_workspace(package, app, staging)?;
    Ok(installation(
        version,
        format!("installed into /app/node_modules/{package}: use requireVendor('{package}')"),
    ))
}

/// Copies `package` from the operator's directory into the staging directory; returns the
/// version its `package.json` states ("unknown" without one).
fn stage_from_operator(
    package: &str,
    staging: &Staging,
    sources: &Sources,
) -> Result<String, InstallRefusal> {
    let not_found = || {
        InstallRefusal::new(
            ErrorType::PackageNotFound,
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
    if source.open_dir_nofollow(Path::new(package)).is_err() {
        return Err(not_found());
    }
    source
        .copy_tree_into(
            Path::new(package),
            &staging.root,
            Path::new(STAGED),
            JS_COPY_LIMITS,
        )
        .map_err(|e| match e {
            ConfinedError::TooLarge { .. } => InstallRefusal::new(
                ErrorType::InvalidPackage,
                format!("{package} is too large to install: {e}"),
            ),
            other => InstallRefusal::system("copy failed", other),
        })?;
    Ok(staging
        .root
        .read_regular(&Path::new(STAGED).join("package.json"), Follow::No, 1 << 20)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| v.get("version").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "unknown".into()))
}

/// Moves the staged package to `/app/node_modules/<package>` (a scope is a directory level),
/// replacing what had its name.
fn move_into_workspace(package: &str, app: &Root, staging: &Staging) -> Result<(), InstallRefusal> {
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
        .replace_from(Path::new(name), &staging.root, Path::new(STAGED))
        .map_err(|e| InstallRefusal::system("cannot move the package into /app/node_modules", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packages::catalog::installed_js;

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
        let install_leftpad = || {
            install_js(
                "leftpad",
                None,
                &files.app,
                &dirs.staging().unwrap(),
                &sources,
            )
        };
        let victim = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(victim.path(), files.app_path.join("node_modules")).unwrap();
        let err = install_leftpad().unwrap_err();
        assert_eq!(err.error_type, ErrorType::PathRestriction);
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);

        std::fs::remove_file(files.app_path.join("node_modules")).unwrap();
        std::fs::create_dir(files.app_path.join("node_modules")).unwrap();
        std::os::unix::fs::symlink(victim.path(), files.app_path.join("node_modules/leftpad"))
            .unwrap();
        let done = install_leftpad().unwrap();
        assert_eq!(done.installed_version, "1.3.0");
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
        assert_eq!(err.error_type, ErrorType::InvalidPackage);
    }
}
