//! The one place where host paths are taken out of what clients see.
//!
//! Every answer of the MCP service passes through [`Redactor`] in the guard (`guard.rs`): tool
//! results (structured content and text) and error messages and data. Each directory the server
//! knows of (state, cache, runtimes, data, shared volume, package sources, its own binaries) is
//! replaced by a label such as `<state>`, as written and canonicalised, longest first.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::PackageSources as Sources;
use crate::config::SupervisorConfig;

/// Host paths and their labels.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Longest path first, so a path inside another is replaced by its own label.
    paths: Vec<(String, &'static str)>,
}

impl Redactor {
    /// The server's directories, from its configuration and package sources.
    pub fn new(config: &SupervisorConfig, sources: &Sources) -> Self {
        let mut known: Vec<(PathBuf, &'static str)> = vec![
            (config.state_dir.clone(), "<state>"),
            (config.cache_dir.clone(), "<cache>"),
            (config.runtime_dir.clone(), "<runtimes>"),
        ];
        if let Some(bin_dir) = config.worker_bin.parent() {
            known.push((bin_dir.to_path_buf(), "<server>"));
        }
        if let Ok(exe) = std::env::current_exe()
            && let Some(dir) = exe.parent()
        {
            known.push((dir.to_path_buf(), "<server>"));
        }
        known.extend(config.data_dir.clone().map(|d| (d, "<data>")));
        known.extend(config.shared_dir.clone().map(|(d, _)| (d, "<shared>")));
        known.extend(sources.wheelhouse.clone().map(|d| (d, "<wheelhouse>")));
        known.extend(sources.js_packages.clone().map(|d| (d, "<js-packages>")));
        Self::from_paths(known)
    }

    fn from_paths(known: Vec<(PathBuf, &'static str)>) -> Self {
        let mut paths: Vec<(String, &'static str)> = Vec::new();
        for (path, label) in known {
            let canonical = std::fs::canonicalize(&path).ok();
            for spelling in std::iter::once(path).chain(canonical) {
                let text = spelling.to_string_lossy().trim_end_matches('/').to_owned();
                // "/" or a one-letter path would mangle every message.
                if text.len() > 1 && !paths.iter().any(|(p, _)| *p == text) {
                    paths.push((text, label));
                }
            }
        }
        paths.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Self { paths }
    }

    /// `text` with every known host path replaced, or `None` when it holds none.
    pub fn redact(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for (path, label) in &self.paths {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(path.as_str()) {
                out = Some(current.replace(path.as_str(), label));
            }
        }
        out
    }

    /// Redacts a string in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Some(clean) = self.redact(text) {
            *text = clean;
        }
    }

    /// Redacts every string of a JSON value in place.
    pub fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => self.redact_in_place(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_value(v)),
            _ => {}
        }
    }

    /// A redactor for the given spellings, for tests.
    pub fn for_tests(paths: &[(&str, &'static str)]) -> Self {
        Self::from_paths(paths.iter().map(|(p, l)| (PathBuf::from(p), *l)).collect())
    }

    /// Whether `path` is one the redactor knows (for tests).
    pub fn knows(&self, path: &Path) -> bool {
        let text = path.to_string_lossy();
        self.paths.iter().any(|(p, _)| *p == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_paths_win_and_every_string_is_covered() {
        let redactor = Redactor::from_paths(vec![
            (PathBuf::from("/srv/sandbox"), "<runtimes>"),
            (PathBuf::from("/srv/sandbox/state/"), "<state>"),
            (PathBuf::from("/"), "<root>"),
        ]);
        assert_eq!(
            redactor
                .redact("cannot open /srv/sandbox/state/x and /srv/sandbox/y")
                .as_deref(),
            Some("cannot open <state>/x and <runtimes>/y")
        );
        assert_eq!(redactor.redact("nothing here /etc"), None);
        let mut value = serde_json::json!({
            "message": "at /srv/sandbox/state/a",
            "list": ["/srv/sandbox/b", 3, {"deep": "/srv/sandbox/state"}],
        });
        redactor.redact_value(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                "message": "at <state>/a",
                "list": ["<runtimes>/b", 3, {"deep": "<state>"}],
            })
        );
        assert!(redactor.knows(Path::new("/srv/sandbox")));
        assert!(!redactor.knows(Path::new("/")));
    }
}
