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

#[cfg(test)]
mod tests {
    use sandbox_protocol::{ErrorType, Language};

    use super::super::testing::{check, facts, says};
    use super::super::{Advice, ErrorFacts, advise};

    fn install_failure(language: Language, error_type: &str, message: &str) -> Advice {
        let mut f = facts(language, error_type, "");
        if !message.is_empty() {
            f.error_message = Some(message);
        }
        let a = advise(&f);
        check(&a);
        a
    }

    /// Package failures talk about packages: never about code, fuel or restarts.
    fn stays_on_topic(a: &Advice) {
        for unrelated in [
            "get_execution_guidance",
            "fuel",
            "restarted",
            "traceback",
            "sandbox://docs/errors for what",
        ] {
            assert!(!says(a, unrelated), "{unrelated}: {a:#?}");
        }
    }

    #[test]
    fn each_package_failure_gets_its_own_advice() {
        // (language, error type, installer message, summary needle, fix needle, next tool)
        #[rustfmt::skip]
        let cases = [
            (Language::Python, "invalid_package", "\"../../etc\" is not a package name: give a distribution name as on PyPI", "not valid", "distribution name as on PyPI", "list_available_packages"),
            (Language::Python, "invalid_package", "\">=1\" is not an exact version: give one like \"1.2.3\"", "not valid", "exact version", "list_available_packages"),
            (Language::Python, "invalid_package", "pip option \"--index-url\" is not supported", "not valid", "Install by name only", "list_available_packages"),
            (Language::Python, "invalid_package", "the package was refused: a path escapes the archive", "files were refused", "Choose another version", "list_available_packages"),
            (Language::JavaScript, "invalid_package", "\"../x\" is not a package name: give an npm package name", "not valid", "npm package name", "list_available_packages"),
            (Language::JavaScript, "invalid_package", "big is too large to install: more than 64 MiB", "files were refused", "Choose another version", "list_available_packages"),
            (Language::Python, "native_package", "numpy cannot run here: it needs compiled (C/Rust) extensions", "compiled", "Instead of numpy: plain lists", "list_available_packages"),
            (Language::Python, "native_package", "scikit-learn cannot run here: it needs compiled (C/Rust) extensions", "compiled", "Instead of scikit-learn", "list_available_packages"),
            (Language::Python, "native_package", "fast_native-1.0-cp312-cp312-linux_x86_64.whl contains compiled code", "compiled", "none-any", "list_available_packages"),
            (Language::Python, "package_not_found", "no pure-Python wheel found (ERROR: No matching distribution found for yaml): the package does not exist", "No package source has it", "published as pyyaml", "install_package"),
            (Language::Python, "package_not_found", "no pure-Python wheel found (ERROR: No matching distribution found for tabulate==99): the package does not exist", "No package source has it", "Leave `version` out", "list_available_packages"),
            (Language::JavaScript, "package_not_found", "left-pad is not vendored and not in the operator's local package directory", "No package source has it", "no npm download", "list_available_packages"),
            (Language::Python, "install_disabled", "tabulate is not vendored, and this server has no package source", "turned off", "standard library", "list_available_packages"),
            (Language::JavaScript, "install_disabled", "", "turned off", "std/os", "list_available_packages"),
        ];
        for (language, error_type, message, summary, fix, next) in cases {
            let a = install_failure(language, error_type, message);
            assert!(a.summary.contains(summary), "{message}: {a:#?}");
            assert!(says(&a, fix), "{fix}: {a:#?}");
            assert!(says(&a, "list_available_packages"), "{a:#?}");
            assert_eq!(a.next_call.as_ref().unwrap().tool, next, "{message}");
            stays_on_topic(&a);
        }
    }

    #[test]
    fn advice_only_names_what_the_failure_involved() {
        let a = install_failure(
            Language::Python,
            "invalid_package",
            "\">=1\" is not an exact version",
        );
        assert!(
            !says(&a, "distribution name") && !says(&a, "Choose another"),
            "{a:#?}"
        );
        let a = install_failure(
            Language::Python,
            "native_package",
            "tabulate2 cannot run here",
        );
        assert!(!says(&a, "Instead of"), "{a:#?}");
        let a = install_failure(
            Language::Python,
            "package_not_found",
            "pip downloaded no wheel",
        );
        assert!(
            !says(&a, "published as") && !says(&a, "Leave `version` out"),
            "{a:#?}"
        );
        assert_eq!(a.next_call.unwrap().arguments["language"], "python");
        for error_type in [
            ErrorType::InvalidPackage,
            ErrorType::NativePackage,
            ErrorType::PackageNotFound,
            ErrorType::InstallDisabled,
        ] {
            for language in [Language::Python, Language::JavaScript] {
                let a = advise(&ErrorFacts::new(language, error_type, "", ""));
                check(&a);
                stays_on_topic(&a);
            }
        }
    }
}
