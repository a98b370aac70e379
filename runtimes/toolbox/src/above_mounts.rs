//! The directories above a session's mounts (`/`, and `/a` for a mount at `/a/b`): no
//! preopened directory holds them, so the sandbox shows them itself, holding only the ways to
//! the mounts. One rule for the worker's shell (`guest_fs`) and the toolbox's `sandbox-files`,
//! which includes this file.

/// Whether the absolute `path` is the mount point `mount` or lies beneath it.
pub fn within(path: &str, mount: &str) -> bool {
    mount == "/"
        || path == mount
        || path
            .strip_prefix(mount)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The names beneath the absolute directory `dir` that lead toward a mount, sorted, once each
/// (`app` and `data` beneath `/` for the mounts `/app` and `/data`); empty when none does.
pub fn names_toward<'a>(dir: &str, mounts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let prefix = if dir == "/" {
        "/".to_owned()
    } else {
        format!("{dir}/")
    };
    let mut names: Vec<String> = (mounts.into_iter())
        .filter_map(|m| m.strip_prefix(&prefix))
        .filter_map(|rest| rest.split('/').next())
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether the absolute `path` is `/` or a directory above a mount point, in no mount.
pub fn is_above<'a>(path: &str, mounts: impl IntoIterator<Item = &'a str> + Clone) -> bool {
    !mounts.clone().into_iter().any(|m| within(path, m))
        && (path == "/" || !names_toward(path, mounts).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ways_to_the_mounts() {
        let mounts = ["/app", "/data", "/tmp", "/mnt/shared"];
        assert_eq!(names_toward("/", mounts), ["app", "data", "mnt", "tmp"]);
        assert_eq!(names_toward("/mnt", mounts), ["shared"]);
        assert!(names_toward("/etc", mounts).is_empty());
        assert!(is_above("/", mounts) && is_above("/mnt", mounts));
        assert!(!is_above("/etc", mounts) && !is_above("/app", mounts));
        assert!(within("/app", "/app") && within("/app/x", "/app"));
        assert!(!within("/apple", "/app") && within("/anything", "/"));
    }
}
