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
