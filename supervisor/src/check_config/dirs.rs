//! The directories of `check-config`: the compiled-interpreter cache, the state directory (on
//! disk, not a tmpfs), `/data`, `/shared` and the package sources, each probed for what the
//! server will do with it (write, create, read) without creating or changing anything.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rustix::fs::Access;

use super::{Report, Subject, setting};
use crate::config::{Settings, absolute};

/// `statfs` magic numbers of the filesystems that keep files in memory.
const TMPFS_MAGIC: i128 = 0x0102_1994;
const RAMFS_MAGIC: i128 = 0x8584_58f6;

impl Report {
    /// Where precompile writes the compiled interpreters: writable, or creatable.
    pub(super) fn cache_dir(&mut self, settings: &Settings, runtime_dir: Option<&Path>) {
        let given = settings.paths.cache_dir.clone();
        let Some(dir) = given.or_else(|| runtime_dir.map(|r| r.join("cache"))) else {
            return;
        };
        let dir = absolute(dir);
        let fix = format!(
            "make it writable by this user, or set {} to a writable directory",
            setting("cache_dir")
        );
        let shown = dir.display();
        match probe_writable(&dir) {
            Ok(None) => {
                let message = format!("compiled interpreters cached in {shown}");
                self.ok(Subject::CacheDir, message);
            }
            Ok(Some(_)) => {
                let message = format!("the cache directory {shown} will be created");
                self.ok(Subject::CacheDir, message);
            }
            // Precompile only writes what is missing: a full read-only cache still serves.
            Err(why) if holds_compiled_modules(&dir) => {
                let message = format!(
                    "{why}: its compiled interpreters are used, but a changed interpreter \
                     cannot be compiled"
                );
                self.warn(Subject::CacheDir, message, fix);
            }
            Err(why) => {
                let message =
                    format!("{why}: the interpreters cannot be compiled, so no code can run");
                self.error(Subject::CacheDir, message, fix);
            }
        }
    }

    /// Sessions' workspaces and sockets: creatable or writable, ours, and on disk.
    pub(super) fn state_dir(&mut self, settings: &Settings) {
        if settings.paths.durable_sessions && settings.paths.state_dir.is_none() {
            let message = "durable sessions need a state directory that outlives the server, \
                           and none is set (the default is a new one per process)"
                .to_owned();
            let fix = format!(
                "set {} to a directory on disk, e.g. /var/lib/sandbox-mcp, or turn {} off",
                setting("state_dir"),
                setting("durable_sessions")
            );
            return self.error(Subject::StateDir, message, fix);
        }
        let dir = absolute(settings.paths.state_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("sandbox-mcp-{}", std::process::id()))
        }));
        let elsewhere = format!(
            "set {} to a directory on disk this user may create, e.g. /var/lib/sandbox-mcp \
             (systemd: StateDirectory=sandbox-mcp)",
            setting("state_dir")
        );
        let place = match probe_writable(&dir) {
            Ok(place) => place.unwrap_or_else(|| dir.clone()),
            Err(why) => return self.error(Subject::StateDir, why, elsewhere),
        };
        if let Some(owner) = foreign_owner(&dir) {
            let message = format!(
                "the state directory {} belongs to uid {owner}: start-up cannot make it \
                 private (0700)",
                dir.display()
            );
            return self.error(Subject::StateDir, message, elsewhere);
        }
        if on_tmpfs(&place) {
            let message = format!(
                "the state directory {} is on a tmpfs: the files sessions write are kept in RAM, \
                 which the memory budget does not count",
                dir.display()
            );
            return self.warn(Subject::StateDir, message, elsewhere);
        }
        let verb = if place == dir {
            "is"
        } else {
            "will be created"
        };
        let durable = if settings.paths.durable_sessions {
            "; sessions outlive the server in it"
        } else {
            ""
        };
        self.ok(
            Subject::StateDir,
            format!("state directory {} {verb} on disk{durable}", dir.display()),
        );
    }

    /// `/data` in every sandbox: optional, but readable when there.
    pub(super) fn data_dir(&mut self, settings: &Settings, runtime_dir: Option<&Path>) {
        let given = settings.paths.data_dir.clone();
        let Some(dir) = given
            .clone()
            .or_else(|| runtime_dir.map(|r| r.join("data")))
        else {
            return;
        };
        let dir = absolute(dir);
        if !dir.is_dir() {
            let message = format!("no /data: {} is not a directory", dir.display());
            if given.is_some() {
                let fix = format!(
                    "point {} at the vendored packages, or unset it",
                    setting("data_dir")
                );
                self.warn(Subject::DataDir, message, fix);
            } else {
                self.ok(
                    Subject::DataDir,
                    format!("{message} (vendored packages are optional)"),
                );
            }
        } else if rustix::fs::access(&dir, Access::READ_OK | Access::EXEC_OK).is_err() {
            let message = format!("the data directory {} is not readable", dir.display());
            self.error(
                Subject::DataDir,
                message,
                format!("chmod -R a+rX {}", dir.display()),
            );
        } else {
            self.ok(Subject::DataDir, format!("/data from {}", dir.display()));
        }
    }

    /// `/shared` in every sandbox: start-up refuses a missing one.
    pub(super) fn shared_dir(&mut self, settings: &Settings) {
        let paths = &settings.paths;
        let Some(dir) = &paths.shared_dir else {
            if paths.shared_writable {
                let message = "shared_writable is set but no shared_dir: it has no effect".into();
                self.warn(
                    Subject::SharedDir,
                    message,
                    format!("set {} or drop shared_writable", setting("shared_dir")),
                );
            }
            return;
        };
        let fix = format!("create it, or unset {}", setting("shared_dir"));
        if !dir.is_dir() {
            let message = format!(
                "the shared directory {} is not a directory: start-up refuses it",
                dir.display()
            );
            return self.error(Subject::SharedDir, message, fix);
        }
        if paths.shared_writable
            && rustix::fs::access(dir, Access::WRITE_OK | Access::EXEC_OK).is_err()
        {
            let message = format!(
                "the shared directory {} is not writable: sandboxes' writes to /shared fail",
                dir.display()
            );
            return self.warn(
                Subject::SharedDir,
                message,
                format!("chmod u+w {}, or drop shared_writable", dir.display()),
            );
        }
        let mode = if paths.shared_writable {
            "writable"
        } else {
            "read-only"
        };
        self.ok(
            Subject::SharedDir,
            format!("/shared ({mode}) from {}", dir.display()),
        );
    }

    /// Where `install_package` looks: a missing directory fails every install from it.
    pub(super) fn package_sources(&mut self, settings: &Settings) {
        let packages = &settings.packages;
        for (key, dir) in [
            ("wheelhouse", &packages.wheelhouse),
            ("js_packages", &packages.js_packages),
        ] {
            match dir {
                Some(dir) if !dir.is_dir() => {
                    let message = format!(
                        "{key} {} is not a directory: install_package cannot use it",
                        dir.display()
                    );
                    self.warn(
                        Subject::Packages,
                        message,
                        format!("create it, or unset {}", setting(key)),
                    );
                }
                Some(dir) => self.ok(Subject::Packages, format!("{key} {}", dir.display())),
                None => {}
            }
        }
    }
}

/// Whether the server can write in directory `dir`: `Ok(None)` when it exists and is writable,
/// `Ok(Some(ancestor))` when it does not exist and `ancestor`, its nearest existing ancestor,
/// lets it be created.
///
/// # Errors
/// Why it cannot be used, naming the path.
fn probe_writable(dir: &Path) -> Result<Option<PathBuf>, String> {
    let writable = |path: &Path| rustix::fs::access(path, Access::WRITE_OK | Access::EXEC_OK);
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(format!("{} is not a directory", dir.display())),
        Ok(_) => match writable(dir) {
            Ok(()) => Ok(None),
            Err(e) => Err(format!("{} is not writable ({e})", dir.display())),
        },
        // Missing, or under something that is not a directory: the nearest existing ancestor
        // decides.
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            let ancestor = dir
                .ancestors()
                .skip(1)
                .find(|a| a.symlink_metadata().is_ok());
            let ancestor = ancestor.unwrap_or(Path::new("/"));
            let cannot = |why: String| format!("{} cannot be created: {why}", dir.display());
            if !ancestor.is_dir() {
                return Err(cannot(format!("{} is not a directory", ancestor.display())));
            }
            match writable(ancestor) {
                Ok(()) => Ok(Some(ancestor.to_path_buf())),
                Err(e) => Err(cannot(format!(
                    "{} is not writable ({e})",
                    ancestor.display()
                ))),
            }
        }
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// Whether `dir` already holds compiled interpreters (`.cwasm` files).
fn holds_compiled_modules(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
    })
}

/// The owner of `dir` when it exists, is not ours, and we are not root (who may chmod it).
fn foreign_owner(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(dir).ok()?.uid();
    let me = rustix::process::geteuid();
    (!me.is_root() && owner != me.as_raw()).then_some(owner)
}

/// Whether `path` is on a filesystem that keeps its files in memory (tmpfs, ramfs).
pub fn on_tmpfs(path: &Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|stats| {
        let kind = i128::from(stats.f_type);
        kind == TMPFS_MAGIC || kind == RAMFS_MAGIC
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::check_config::Severity;

    /// The findings about `subject` for the settings `args`, with no runtime directory.
    fn findings(subject: Subject, args: &[&str]) -> Vec<(Severity, String)> {
        let settings =
            Settings::try_parse_args(std::iter::once("sandbox-mcp").chain(args.iter().copied()))
                .unwrap();
        let mut report = Report::default();
        report.cache_dir(&settings, None);
        report.state_dir(&settings);
        report.data_dir(&settings, None);
        report.shared_dir(&settings);
        report.package_sources(&settings);
        (report.about(subject))
            .map(|f| (f.severity, f.message.clone()))
            .collect()
    }

    /// The filesystem type mounted at `point`, from /proc/self/mounts.
    fn mounted_type(point: &str) -> Option<String> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
        mounts.lines().rev().find_map(|line| {
            let mut fields = line.split_whitespace().skip(1);
            (fields.next()? == point).then(|| fields.next().map(str::to_owned))?
        })
    }

    #[test]
    fn a_directory_is_writable_creatable_or_named_as_the_obstacle() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(probe_writable(root.path()), Ok(None));
        let deep = root.path().join("a/b/c");
        assert_eq!(probe_writable(&deep), Ok(Some(root.path().to_path_buf())));
        let file = root.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let under_file = probe_writable(&file.join("state")).unwrap_err();
        assert!(under_file.contains("is not a directory"), "{under_file}");
        assert!(
            probe_writable(&file)
                .unwrap_err()
                .contains("is not a directory")
        );
        if rustix::process::geteuid().is_root() {
            eprintln!("root writes anywhere: the read-only directory case is not checked");
            return;
        }
        let locked = root.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let why = probe_writable(&locked.join("state")).unwrap_err();
        assert!(
            why.contains("cannot be created") && why.contains("not writable"),
            "{why}"
        );
    }

    #[test]
    fn a_state_directory_that_cannot_be_made_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let state = file.join("state");
        let found = findings(Subject::StateDir, &["--state-dir", state.to_str().unwrap()]);
        assert!(
            matches!(&found[..], [(Severity::Error, why)] if why.contains("cannot be created")),
            "{found:?}"
        );
        let fine = root.path().join("state");
        let found = findings(Subject::StateDir, &["--state-dir", fine.to_str().unwrap()]);
        let on_disk = !on_tmpfs(root.path());
        assert_eq!(
            found[0].0,
            if on_disk {
                Severity::Ok
            } else {
                Severity::Warning
            }
        );
    }

    #[test]
    fn a_state_directory_on_a_tmpfs_is_a_warning() {
        assert!(!on_tmpfs(Path::new("/proc")));
        let shm = mounted_type("/dev/shm");
        assert_eq!(
            on_tmpfs(Path::new("/dev/shm")),
            shm.as_deref() == Some("tmpfs")
        );
        if shm.as_deref() != Some("tmpfs") {
            eprintln!("no tmpfs at /dev/shm on this host ({shm:?}): the warning is not checked");
            return;
        }
        let found = findings(
            Subject::StateDir,
            &["--state-dir", "/dev/shm/sandbox-mcp-check"],
        );
        assert!(
            matches!(&found[..], [(Severity::Warning, why)] if why.contains("on a tmpfs")),
            "{found:?}"
        );
    }

    #[test]
    fn an_unusable_cache_is_an_error_unless_it_holds_compiled_interpreters() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("cache");
        std::fs::write(&file, b"").unwrap();
        let found = findings(Subject::CacheDir, &["--cache-dir", file.to_str().unwrap()]);
        assert!(matches!(&found[..], [(Severity::Error, _)]), "{found:?}");
        let cache = root.path().join("full");
        std::fs::create_dir(&cache).unwrap();
        assert!(!holds_compiled_modules(&cache));
        std::fs::write(cache.join("python.cwasm"), b"").unwrap();
        assert!(holds_compiled_modules(&cache));
        let found = findings(Subject::CacheDir, &["--cache-dir", cache.to_str().unwrap()]);
        assert!(matches!(&found[..], [(Severity::Ok, _)]), "{found:?}");
    }

    #[test]
    fn missing_shared_data_and_package_directories_are_reported() {
        let missing = "/nonexistent/sandbox-mcp";
        let shared = findings(Subject::SharedDir, &["--shared-dir", missing]);
        assert!(matches!(&shared[..], [(Severity::Error, _)]), "{shared:?}");
        let stray = findings(Subject::SharedDir, &["--shared-writable"]);
        assert!(matches!(&stray[..], [(Severity::Warning, _)]), "{stray:?}");
        let data = findings(Subject::DataDir, &["--data-dir", missing]);
        assert!(matches!(&data[..], [(Severity::Warning, _)]), "{data:?}");
        let packages = findings(
            Subject::Packages,
            &["--wheelhouse", missing, "--js-packages", "/"],
        );
        assert_eq!(packages.len(), 2, "{packages:?}");
        assert_eq!(
            (packages[0].0, packages[1].0),
            (Severity::Warning, Severity::Ok)
        );
        let shared = findings(
            Subject::SharedDir,
            &["--shared-dir", "/", "--shared-writable"],
        );
        assert_eq!(shared.len(), 1, "{shared:?}");
    }
}
