//! Advice about names and imports: a Python module that is not there (`missing_module`: not in
//! this CPython, native, a network client, a typo, or a pure-Python package to install), and a
//! name that is not defined (`NameError`/`ReferenceError`: never defined in this session, lost in
//! a restart, or a module without its import).

use sandbox_protocol::Language;
use serde_json::json;

use super::super::NextCall;
use super::super::docs::PYTHON;
use super::super::modules;
use super::draft::Draft;
use super::evidence::{js_undefined_name, module_from, quoted, valid_session_id};

/// Fixes for the name and import exceptions whose advice does not depend on the message.
pub(super) const NAME_EXCEPTION_FIXES: &[(&str, [&str; 2])] = &[
    (
        "UnboundLocalError",
        [
            "A function assigns to a name that also exists globally, which makes it local everywhere in the function: declare `global name` (or pass it as an argument).",
            "Or rename the local variable so it does not shadow the global one.",
        ],
    ),
    (
        "ImportError",
        [
            "The module exists but lacks that name: check the spelling and the module's version (CPython 3.15, or the package's version).",
            "A file in /app with the same name as a package shadows it (/app comes first on sys.path): rename your file.",
        ],
    ),
];

impl Draft<'_, '_> {
    pub(super) fn missing_module(&mut self) {
        let evidence = self.evidence();
        let module = module_from(&evidence)
            .or_else(|| self.code.imports.first().map(|i| i.module.clone()))
            .unwrap_or_default();
        if self.f.language == Language::JavaScript {
            return self.js_module(&module);
        }
        self.doc(PYTHON);
        if module.is_empty() {
            self.summary =
                "An import failed: the module is not available in this session.".to_owned();
            self.fix("Vendored packages in /data/site-packages import directly; list_available_packages {language: \"python\"} lists them.");
            self.fix("Pure-Python packages from PyPI can be added with install_package {package}; native ones load only if compiled into the interpreter (numpy, pandas, scipy, scikit-learn, matplotlib, pillow and more are).");
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                "see which packages are available",
            ));
            return;
        }
        if self.python2_module(&module) {
            return;
        }
        if !self.unavailable_module(&module) {
            self.installable_module(&module);
        }
    }

    /// A module no package can provide here: missing from this CPython build, native, or a
    /// network client. False when it is none of these.
    fn unavailable_module(&mut self, module: &str) -> bool {
        // `import ssl` fails as "No module named '_ssl'": name the module the code imported.
        let module = module
            .strip_prefix('_')
            .filter(|public| modules::missing_stdlib(public).is_some())
            .unwrap_or(module);
        let top = module.split('.').next().unwrap_or(module).to_owned();
        if let Some(why) = modules::missing_stdlib(module) {
            self.summary =
                format!("`{module}` is not part of the sandbox's CPython 3.15 (WASI build).");
            self.fix(format!("Instead of {top}: {why}."));
            self.fix("No package can add it: it needs operating-system features WebAssembly does not have.");
        } else if let Some((dist, alternative)) = modules::native_package(module) {
            self.summary = format!(
                "`{top}` ({dist}) is a native package: its C/Rust extensions cannot load in the WebAssembly interpreter, and install_package cannot add it."
            );
            self.fix(format!("Instead of {top}: {alternative}."));
            self.fix("Check list_available_packages for a vendored pure-Python package that does the job.");
        } else if modules::network_package(module) {
            self.summary = format!("`{top}` is a network client, and the sandbox has no network.");
            self.fix("Have the data passed in (in the code, or written to a file under /app) instead of fetching it.");
            self.fix(format!(
                "Installing {top} would not help: every connection fails in the sandbox."
            ));
        } else {
            return false;
        }
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "python"}),
            "see the vendored packages (already importable) and their import fuel",
        ));
        true
    }

    /// A module that may be a typo, a vendored package, or a pure-Python package on PyPI.
    fn installable_module(&mut self, module: &str) {
        let top = module.split('.').next().unwrap_or(module).to_owned();
        let similar: Vec<String> = self
            .table
            .similar(Language::Python, &top)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let dist = modules::pypi_name(module);
        self.summary = format!("No module named '{module}' in this session.");
        if let Some(best) = similar.first() {
            self.fix(format!("Did you mean `{best}`? (`import {best}`)"));
        }
        if let Some((name, cost)) = self.table.resolve(Language::Python, module)
            && cost.package != "stdlib"
        {
            self.fix(format!(
                    "{name} is listed as vendored ({}), so it should import directly; if it does not, install it into the session with install_package {{package: \"{}\"}}.",
                    cost.package, cost.package
                ));
        }
        let session = if valid_session_id(self.f.session_id) {
            format!(", session_id: \"{}\"", self.f.session_id)
        } else {
            String::new()
        };
        self.fix(format!(
            "Install it into this session: install_package {{package: \"{dist}\"{session}}} (the PyPI name of `{top}`), then run the import again. Only pure-Python packages work; ones with C extensions cannot load in WebAssembly."
        ));
        self.fix(format!(
            "Check list_available_packages {{language: \"python\"}}: vendored packages in /data/site-packages are already on sys.path. If `{top}` is your own module, write {top}.py into /app first (/app is on sys.path)."
        ));
        self.next = Some(NextCall::new(
            "install_package",
            self.session_args(json!({"package": dist})),
            format!("`{top}` is published on PyPI as {dist}"),
        ));
    }

    /// `NameError` / `ReferenceError`: the name in `message` is not defined in this session.
    pub(super) fn undefined_name(&mut self, message: &str) {
        let missing = quoted(message)
            .map(str::to_owned)
            .or_else(|| js_undefined_name(message))
            .unwrap_or_default();
        // A module used without its import: the import is the fix, whatever else is true.
        let module = self.python() && self.table.get(&missing).is_some();
        if module {
            self.fix(format!("`{missing}` is a module: add `import {missing}`."));
        }
        if self.f.state_lost {
            self.fix(format!("The interpreter was restarted, so `{missing}` from an earlier call is gone: re-run the code that defined it (imports included). Files in /app survived."));
            self.restart_explained = true;
        } else {
            self.fix(format!(
                "`{missing}` is not defined in this session: define it in this code, or run the code that defines it first in the same session{}. Sessions never share variables.",
                if valid_session_id(self.f.session_id) { format!(" ('{}')", self.f.session_id) } else { String::new() }
            ));
        }
        if !module {
            self.fix("Check the spelling and case of the name against where it is defined.");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::advise;
    use super::super::testing::{check, facts, py_error, says};
    use super::*;

    /// `missing_module` advice.
    fn missing(code: &str, message: &str) -> crate::Advice {
        let mut f = facts(Language::Python, "missing_module", code);
        f.error_name = Some("ModuleNotFoundError");
        f.error_message = Some(message);
        let a = advise(&f);
        check(&a);
        a
    }

    #[test]
    fn python_missing_modules() {
        let a = py_error(
            "missing_module",
            "import yaml",
            "ModuleNotFoundError",
            "No module named 'yaml'",
            "",
        );
        let call = a.next_call.clone().unwrap();
        assert_eq!(call.tool, "install_package");
        assert_eq!(call.arguments["package"], "pyyaml");
        assert_eq!(call.arguments["session_id"], "s1");
        assert!(says(&a, "list_available_packages"));

        let a = py_error(
            "missing_module",
            "from bs4 import BeautifulSoup",
            "ModuleNotFoundError",
            "No module named 'bs4'",
            "",
        );
        assert_eq!(a.next_call.unwrap().arguments["package"], "beautifulsoup4");

        // A native package the interpreter does not have compiled in has no home: the advice
        // is what to use instead.
        for (module, alternative) in [("torch", "deep-learning")] {
            let code = format!("import {module}");
            let message = format!("No module named '{module}'");
            let a = missing(&code, &message);
            assert!(a.summary.contains("native"), "{module}: {a:#?}");
            assert!(says(&a, alternative), "{module}: {a:#?}");
            assert_eq!(a.next_call.unwrap().tool, "list_available_packages");
        }

        let a = py_error(
            "missing_module",
            "import curses",
            "ModuleNotFoundError",
            "No module named '_curses'",
            "",
        );
        assert!(says(&a, "no terminal"), "{a:#?}");

        let a = py_error(
            "missing_module",
            "import jsno",
            "ModuleNotFoundError",
            "No module named 'jsno'",
            "",
        );
        assert!(says(&a, "Did you mean `json`"), "{a:#?}");

        let a = py_error(
            "missing_module",
            "import requests",
            "ModuleNotFoundError",
            "No module named 'requests'",
            "",
        );
        assert!(a.summary.contains("no network"));
    }

    #[test]
    fn name_errors_explain_lost_state() {
        let mut f = facts(Language::Python, "runtime_error", "print(df.head())");
        f.error_name = Some("NameError");
        f.error_message = Some("NameError: name 'df' is not defined");
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "`df` is not defined in this session"), "{a:#?}");
        f.state_lost = true;
        let a = advise(&f);
        check(&a);
        assert!(says(&a, "restarted, so `df`"), "{a:#?}");
        assert_eq!(
            a.actionable_guidance
                .iter()
                .filter(|g| g.contains("restarted"))
                .count(),
            1
        );

        f.error_message = Some("NameError: name 'json' is not defined");
        f.state_lost = false;
        assert!(says(&advise(&f), "add `import json`"));
    }

    #[test]
    fn unavailable_modules_table() {
        // (module as imported, summary needle, fix needle)
        let cases = [
            ("ssl", "not part of the sandbox's CPython", "Instead of ssl"),
            (
                "tkinter.ttk",
                "not part of the sandbox's CPython",
                "Instead of tkinter",
            ),
            (
                "httpx",
                "`httpx` is a network client",
                "Installing httpx would not help",
            ),
        ];
        for (module, summary, fix) in cases {
            let message = format!("No module named '{module}'");
            let code = format!("import {module}");
            let a = missing(&code, &message);
            assert!(a.summary.contains(summary), "{module}: {a:#?}");
            assert!(says(&a, fix), "{module}: {a:#?}");
            assert_eq!(a.next_call.unwrap().tool, "list_available_packages");
        }
        let a = advise(&facts(Language::Python, "missing_module", ""));
        check(&a);
        assert!(a.summary.contains("An import failed"), "{a:#?}");
    }
}
