//! Guest paths made absolute the one way the sandbox's shell and its `sandbox-files` both do:
//! lexically, against the shell's working directory. The worker's shell and the JavaScript guest
//! (`runtimes/js-guest`, against JavaScript's working directory) include this file.

/// `path` made absolute against `cwd` lexically: `.` and `..` never climb above `/`, and a
/// symbolic link is not looked at (whatever then opens the path through WASI meets it).
pub fn normalize(cwd: &str, path: &str) -> String {
    let base = if path.starts_with('/') { "" } else { cwd };
    let mut parts: Vec<&str> = Vec::new();
    for comp in base.split('/').chain(path.split('/')) {
        match comp {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}
