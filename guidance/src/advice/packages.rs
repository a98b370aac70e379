//! Advice when `install_package` (or `pip install` in `execute_command`) fails: a requirement
//! that is not valid or a package whose files were refused (`invalid_package`), compiled code
//! that WebAssembly cannot load (`native_package`), a package no source has
//! (`package_not_found`), and installs turned off on this server (`install_disabled`).
//!
//! The message the installer wrote is the evidence: it names the package, and says whether the
//! name, the version, an option or the files were the problem. The words live in
//! `words/packages.toml`.

use serde_json::json;

use super::super::docs::{JAVASCRIPT, PYTHON};
use super::super::{NextCall, clip, modules};
use super::draft::Draft;
use crate::words::{self, say};

impl Draft<'_, '_> {
    pub(super) fn invalid_package(&mut self) {
        let message = clip(self.message(), 200);
        let lower = message.to_lowercase();
        let refused = lower.contains("refused") || lower.contains("too large");
        // `requests>=2.28` is read as a name by the installer: a range, not a name.
        // The requirement the message quotes (`"numpy<2"`): a comparison in it is a range.
        let quoted = lower.split('"').nth(1).unwrap_or("");
        let version = lower.contains("not an exact version")
            || [">=", "<=", "~=", "!=", "\">", "\"<"]
                .iter()
                .any(|range| lower.contains(range))
            || (quoted.starts_with(|c: char| c.is_alphanumeric())
                && quoted.contains(['<', '>', '~', '!']));
        let option = lower.contains("pip option");
        // `pip install --upgrade pip`: the installer itself, which the server runs for you.
        if lower.contains("is not needed") {
            self.summary = words::text("invalid_package.installer_summary").to_owned();
            self.package_docs();
            self.fix(words::text("invalid_package.installer_not_needed"));
            self.list_packages_fix();
            return;
        }
        self.summary = match (message.is_empty(), refused) {
            (true, _) => words::text("invalid_package.no_message").to_owned(),
            (false, true) => say!("invalid_package.files_refused", message = message),
            (false, false) => say!("invalid_package.not_valid", message = message),
        };
        self.package_docs();
        if version {
            self.fix(words::text("invalid_package.exact_version"));
        }
        if option {
            self.fix(words::text("invalid_package.name_only"));
        }
        if refused {
            self.fix(words::text("invalid_package.other_archive"));
        }
        if !(version || option || refused) {
            self.fix(words::text(if self.python() {
                "invalid_package.python_name"
            } else {
                "invalid_package.javascript_name"
            }));
        }
        self.list_packages_fix();
    }

    pub(super) fn native_package(&mut self) {
        self.package_docs();
        if let Some(name) = self.requested_package()
            && let Some(alternative) = modules::native_alternative(&name)
        {
            self.fix(say!(
                "native_package.instead",
                name = name,
                alternative = alternative
            ));
        }
        self.rule("native_package");
        self.list_packages_fix();
    }

    pub(super) fn package_not_found(&mut self) {
        let message = clip(self.message(), 200);
        self.summary = if message.is_empty() {
            words::text("package_not_found.no_message").to_owned()
        } else {
            say!("package_not_found.with_message", message = message)
        };
        self.package_docs();
        if self.python() {
            if let Some(name) = self.requested_package() {
                let dist = modules::pypi_name(&name);
                if !dist.eq_ignore_ascii_case(&name) {
                    self.fix(say!(
                        "package_not_found.import_name",
                        name = name,
                        dist = dist
                    ));
                    self.next = Some(NextCall::new(
                        "install_package",
                        self.session_args(json!({"package": dist})),
                        say!("package_not_found.published", name = name, dist = dist),
                    ));
                }
            }
            self.fix(words::text("package_not_found.spelling"));
            if message.contains("==") {
                self.fix(words::text("package_not_found.any_version"));
            }
        } else {
            self.rule("package_not_found.javascript");
        }
        self.list_packages_fix();
    }

    pub(super) fn install_disabled(&mut self) {
        self.package_docs();
        self.fix(words::text(if self.python() {
            "install_disabled.python"
        } else {
            "install_disabled.javascript"
        }));
        self.rule("install_disabled");
        self.list_packages_fix();
    }

    /// The runtime page of the session's language, where packages are described.
    fn package_docs(&mut self) {
        self.doc(if self.python() { PYTHON } else { JAVASCRIPT });
        self.restart_explained = true;
    }

    /// Vendored packages need no install: list them, and make that the next call unless a
    /// better one was found.
    fn list_packages_fix(&mut self) {
        self.fix(say!("vendored_packages.fix", lang = self.lang()));
        if self.next.is_none() {
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": self.lang()}),
                words::text("vendored_packages.next"),
            ));
        }
    }

    /// The package the installer was asked for, as its message names it: pip's "No matching
    /// distribution found for NAME", else the message's first word when it is a package name.
    fn requested_package(&self) -> Option<String> {
        let message = self.message();
        let after_for = message
            .rfind("found for ")
            .map(|at| &message[at + "found for ".len()..]);
        let word = after_for
            .unwrap_or(message)
            .split(|c: char| c.is_whitespace() || matches!(c, '=' | '<' | '>' | '(' | ')' | ','))
            .find(|w| !w.is_empty())?;
        let word = word.trim_matches(['"', '\'', '`']);
        let name_like = !word.is_empty()
            && word.len() <= 100
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        name_like.then(|| word.to_owned())
    }
}
