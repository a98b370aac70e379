//! Advice about names and imports: a Python module that is not there (`missing_module`: not in
//! this CPython, native, a network client, a typo, or a pure-Python package to install), and a
//! name that is not defined (`NameError`/`ReferenceError`: never defined in this session, lost in
//! a restart, or a module without its import). Its words live in `words/names.toml`, whose
//! `exception_fixes` (UnboundLocalError, ImportError) `runtime` reads along with its own.

use sandbox_protocol::Language;
use serde_json::json;

use super::super::NextCall;
use super::super::docs::PYTHON;
use super::super::modules;
use super::draft::Draft;
use super::evidence::{js_undefined_name, module_from, quoted, valid_session_id};
use crate::words::{self, say};

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
            self.rule("missing_module");
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                words::text("missing_module.next"),
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
            self.rule_with(
                "missing_module.not_in_build",
                &[("module", &module), ("top", &top), ("why", &why)],
            );
        } else if let Some((dist, alternative)) = modules::native_package(module) {
            self.rule_with(
                "missing_module.native",
                &[
                    ("top", &top),
                    ("dist", &dist),
                    ("alternative", &alternative),
                ],
            );
        } else if modules::network_package(module) {
            self.rule_with("missing_module.network", &[("top", &top)]);
        } else {
            return false;
        }
        self.next = Some(NextCall::new(
            "list_available_packages",
            json!({"language": "python"}),
            words::text("missing_module.unavailable_next"),
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
        if let Some(best) = similar.first() {
            self.fix(say!("missing_module.installable.did_you_mean", best = best));
        }
        if let Some((name, cost)) = self.table.resolve(Language::Python, module)
            && cost.package != "stdlib"
        {
            self.fix(say!(
                "missing_module.installable.vendored",
                name = name,
                dist = cost.package
            ));
        }
        let session = if valid_session_id(self.f.session_id) {
            format!(", session_id: \"{}\"", self.f.session_id)
        } else {
            String::new()
        };
        self.rule_with(
            "missing_module.installable",
            &[
                ("module", &module),
                ("top", &top),
                ("dist", &dist),
                ("session", &session),
            ],
        );
        self.next = Some(NextCall::new(
            "install_package",
            self.session_args(json!({"package": dist})),
            say!(
                "missing_module.installable.published",
                top = top,
                dist = dist
            ),
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
            self.fix(say!("undefined_name.module", missing = missing));
        }
        if self.f.state_lost {
            self.fix(say!("undefined_name.restarted", missing = missing));
            self.restart_explained = true;
        } else {
            let session = if valid_session_id(self.f.session_id) {
                format!(" ('{}')", self.f.session_id)
            } else {
                String::new()
            };
            self.fix(say!(
                "undefined_name.not_defined",
                missing = missing,
                session = session
            ));
        }
        if !module {
            self.fix(words::text("undefined_name.spelling"));
        }
    }
}
