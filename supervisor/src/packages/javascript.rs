//! JavaScript installs. QuickJS has no npm: a package is either vendored (under `/data/js`,
//! loaded with `requireVendor`) or copied from the operator's local package directory
//! (`SANDBOX_JS_PACKAGES`, directories and regular files only) through the server's staging
//! directory into the session's `/app/node_modules`.

use std::path::{Path, PathBuf};

use sandbox_protocol::ErrorType;
use sandbox_protocol::confined::{ConfinedError, CopyLimits, Follow, Root};
use serde_json::Value;

use super::install::{Staged, StagedFiles};
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

/// Prepares a JavaScript package: the vendored set needs nothing; otherwise a package
/// directory of the operator's `SANDBOX_JS_PACKAGES` is copied (directories and regular files
/// only) into `staging`, to move into the session's `/app/node_modules` (a scope is a
/// directory level).
///
/// # Errors
/// An [`InstallRefusal`] when the name is not an npm name or the package is unknown.
pub fn stage_js(
    package: &str,
    data_dir: Option<&Path>,
    staging: Staging,
    sources: &Sources,
) -> Result<Staged, InstallRefusal> {
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
        return Ok(Staged::nothing_to_move(installation(
            "vendored".into(),
            format!("{package} is vendored: use requireVendor('{package}') directly"),
        )));
    }
    let version = stage_from_operator(package, &staging, sources)?;
    let mut into = vec![JS_PACKAGES_DIR.to_owned()];
    let name = match package.split_once('/') {
        Some((scope, name)) => {
            into.push(scope.to_owned());
            name
        }
        None => package,
    };
    let from = staging
        .root
        .try_clone()
        .map_err(|e| InstallRefusal::system("cannot open the staging directory", e))?;
    Ok(Staged::files(
        installation(
            version,
            format!("installed into /app/node_modules/{package}: use requireVendor('{package}')"),
        ),
        StagedFiles {
            staging,
            from,
            into,
            entries: vec![(PathBuf::from(STAGED), PathBuf::from(name))],
            replaces_dists: Vec::new(),
        },
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
        let stage_leftpad = || stage_js("leftpad", None, dirs.staging().unwrap(), &sources);
        let install_leftpad = || stage_leftpad()?.move_in(&files.app);
        let victim = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(victim.path(), files.app_path.join("node_modules")).unwrap();
        // Refused when its growth is measured (before the quota is asked), and when moved.
        let err = stage_leftpad().unwrap().growth(&files.app).unwrap_err();
        assert_eq!(err.error_type, ErrorType::PathRestriction);
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
        let err = stage_js("../x", None, dirs.staging().unwrap(), &sources).unwrap_err();
        assert_eq!(err.error_type, ErrorType::InvalidPackage);
    }

    /// What an install adds to the session's files, as the disk quota is asked for it: the
    /// package and the directories made for it, less what it replaces.
    #[test]
    fn an_install_measures_what_it_adds_less_what_it_replaces() {
        let state = tempfile::tempdir().unwrap();
        let dirs = crate::workspace::StateDirs::create(state.path()).unwrap();
        let files = dirs.create_session("s").unwrap();
        let operator = tempfile::tempdir().unwrap();
        let package = operator.path().join("@acme/big");
        std::fs::create_dir_all(package.join("lib")).unwrap();
        std::fs::write(package.join("package.json"), r#"{"version": "2.0.0"}"#).unwrap();
        std::fs::write(package.join("lib/data.bin"), vec![7u8; 10_000]).unwrap();
        let sources = Sources {
            js_packages: Some(operator.path().to_path_buf()),
            ..Sources::default()
        };
        let stage = || stage_js("@acme/big", None, dirs.staging().unwrap(), &sources).unwrap();
        // node_modules, @acme, big, package.json, lib, lib/data.bin.
        let first = stage().growth(&files.app).unwrap();
        assert_eq!((first.bytes, first.entries), (10_020, 6), "{first:?}");
        stage().move_in(&files.app).unwrap();
        let used = files.app.usage(u64::MAX);
        assert_eq!((used.bytes, used.entries), (first.bytes, first.entries));
        // A reinstall replaces what it adds: nothing more.
        let again = stage().growth(&files.app).unwrap();
        assert_eq!((again.bytes, again.entries), (0, 0), "{again:?}");
        // A vendored package moves nothing.
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join("js/lodash")).unwrap();
        let vendored = stage_js(
            "lodash",
            Some(data.path()),
            dirs.staging().unwrap(),
            &sources,
        );
        let vendored = vendored.unwrap().growth(&files.app).unwrap();
        assert_eq!((vendored.bytes, vendored.entries), (0, 0));
    }
}
