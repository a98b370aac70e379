//! Advice when `install_package` (or `pip install` in `execute_command`) fails: a requirement
//! that is not valid or a package whose files were refused (`invalid_package`), compiled code
//! that WebAssembly cannot load (`native_package`), a package no source has
//! (`package_not_found`), and installs turned off on this server (`install_disabled`).
//!
//! The message the installer wrote is the evidence: it names the package, and says whether the
//! name, the version, an option or the files were the problem.

use serde_json::json;

use super::super::docs::{JAVASCRIPT, PYTHON};
use super::super::{NextCall, clip, modules};
use super::draft::Draft;

impl Draft<'_, '_> {
    pub(super) fn invalid_package(&mut self) {
        let message = clip(self.message(), 200);
        let lower = message.to_lowercase();
        let refused = lower.contains("refused") || lower.contains("too large");
        let version = lower.contains("not an exact version");
        let option = lower.contains("pip option");
        self.summary = match (message.is_empty(), refused) {
            (true, _) => {
                "The package requirement was refused, so nothing was installed.".to_owned()
            }
            (false, true) => {
                format!("The package's files were refused, so nothing was installed: {message}.")
            }
            (false, false) => format!(
                "The package requirement is not valid, so nothing was installed: {message}."
            ),
        };
        self.package_docs();
        if version {
            self.fix("Give an exact version such as \"1.2.3\", or leave `version` out for the latest release; ranges and markers are not accepted.");
        }
        if option {
            self.fix("Install by name only: `pip install NAME` or `pip install NAME==VERSION`; other pip options are not supported.");
        }
        if refused {
            self.fix("Choose another version or another package: this archive breaks the installer's rules (its size, paths or file types), so it will be refused again.");
        }
        if !(version || option || refused) {
            self.fix(if self.python() {
                "Give the distribution name as on PyPI (letters, digits, '.', '_', '-'), e.g. install_package {package: \"tabulate\"}; not a path, URL, option, extras or markers."
            } else {
                "Give an npm package name such as \"lodash\" or \"@scope/name\"; not a path or URL."
            });
        }
        self.list_packages_fix();
    }

    pub(super) fn native_package(&mut self) {
        self.summary = "The package needs compiled (C/Rust) code, which cannot load in the sandbox's WebAssembly interpreter: only pure-Python packages install.".to_owned();
        self.package_docs();
        if let Some(name) = self.requested_package() {
            if let Some(alternative) = modules::native_alternative(&name) {
                self.fix(format!("Instead of {name}: {alternative}."));
            }
        }
        self.fix("Another version will not help unless it is pure Python (a wheel tagged `none-any`); a pure-Python package from PyPI or the standard library can often do the job.");
        self.list_packages_fix();
    }

    pub(super) fn package_not_found(&mut self) {
        let message = clip(self.message(), 200);
        self.summary = if message.is_empty() {
            "No package source has this package (or this version).".to_owned()
        } else {
            format!("No package source has it: {message}.")
        };
        self.package_docs();
        if self.python() {
            if let Some(name) = self.requested_package() {
                let dist = modules::pypi_name(&name);
                if !dist.eq_ignore_ascii_case(&name) {
                    self.fix(format!("`{name}` is the import name; on PyPI it is published as {dist}: install_package {{package: \"{dist}\"}}."));
                    self.next = Some(NextCall::new(
                        "install_package",
                        self.session_args(json!({"package": dist})),
                        format!("`{name}` is published on PyPI as {dist}"),
                    ));
                }
            }
            self.fix("Check the spelling on pypi.org; a package (or a dependency) that ships only compiled wheels has no pure-Python wheel and cannot be installed here.");
            if message.contains("==") {
                self.fix("Leave `version` out to get the latest pure-Python release, or choose a version that exists.");
            }
        } else {
            self.fix("JavaScript packages come only from the vendored set and the operator's local package directory: there is no npm download.");
            self.fix("For a small library, write the functions yourself, or put its source under /app/node_modules/NAME and load it with requireVendor('NAME').");
        }
        self.list_packages_fix();
    }

    pub(super) fn install_disabled(&mut self) {
        self.summary = "Installing packages is turned off on this server: only the vendored packages are available.".to_owned();
        self.package_docs();
        self.fix(if self.python() {
            "The standard library covers most needs without installing: csv, json, sqlite3, statistics, re, datetime, zipfile, xml.etree."
        } else {
            "Plain JavaScript and QuickJS's std/os globals cover most needs; write small helpers yourself."
        });
        self.fix("Retrying will fail the same way until the server's operator adds a package source (a wheelhouse directory or PyPI access).");
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
        self.fix(format!(
            "list_available_packages {{language: \"{}\"}} lists the vendored packages, which load without install_package.",
            self.lang()
        ));
        if self.next.is_none() {
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": self.lang()}),
                "see which packages are available without installing",
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
