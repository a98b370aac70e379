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
use crate::inventory::imports::edit_distance;
use crate::inventory::normalize;
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
        // A known right form first (an alias imported as a module, a removed submodule), then
        // what is here under another name, then what nothing can provide; a typo of a module
        // that is here only after those (`httpx` is a network client, not `http`).
        if let Some(fix) = self.known_fix("missing_module.known.list", &evidence.to_lowercase()) {
            self.fix(fix);
            self.rule_with("missing_module.known", &[("module", &module)]);
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                words::text("missing_module.next"),
            ));
            return;
        }
        if self.python2_module(&module)
            || self.meant_module(&module, false)
            || self.unavailable_module(&module)
            || self.meant_module(&module, true)
            || self.local_module(&module)
        {
            return;
        }
        self.installable_module(&module);
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

    /// A module that is here under another name: its PyPI name used as the import name
    /// (`scikit_learn` for `sklearn`), a submodule of a package that is here (`matplotlib.pyplt`),
    /// or one edit from a module that is here (`pandsa`). Installing is then the wrong fix:
    /// the advice names the module meant, with the code corrected as the next call. False
    /// when the module is none of these; typos are looked for only with `typos`.
    fn meant_module(&mut self, module: &str, typos: bool) -> bool {
        let (top, rest) = match module.split_once('.') {
            Some((top, rest)) => (top, Some(rest)),
            None => (module, None),
        };
        let here = |name: &str| self.table.resolve(Language::Python, name).is_some();
        let (rule, meant) = if let Some(rest) = rest.filter(|_| !typos && here(top)) {
            // The package is here; the submodule is misspelt, or does not exist.
            let known = words::list("missing_module.known_submodules.list");
            let meant = known
                .iter()
                .filter_map(|k| k.strip_prefix(top)?.strip_prefix('.').map(|r| (k, r)))
                .map(|(k, r)| (edit_distance(r, rest), k))
                .filter(|(d, _)| *d <= 2)
                .min()
                .map(|(_, k)| k.clone());
            ("missing_module.submodule", meant)
        } else if let Some(import) = self.import_name_of(top).filter(|_| !typos) {
            let meant = match rest {
                Some(rest) => format!("{import}.{rest}"),
                None => import,
            };
            ("missing_module.import_name", Some(meant))
        } else if let Some(import) = modules::import_name_of_dist(top).filter(|_| !typos) {
            return self.pip_name(module, top, &import);
        } else if typos
            && rest.is_none()
            && let Some(best) = self
                .table
                .similar(Language::Python, top)
                .into_iter()
                .find(|s| edit_distance(&s.to_lowercase(), &top.to_lowercase()) == 1)
        {
            ("missing_module.typo", Some(best.to_owned()))
        } else {
            return false;
        };
        let shown = meant.clone().unwrap_or_default();
        self.rule_with(
            if meant.is_some() {
                rule
            } else {
                "missing_module.no_submodule"
            },
            &[("module", &module), ("top", &top), ("meant", &shown)],
        );
        if let Some(meant) = meant {
            let code = replace_module(self.f.code, module, &meant);
            if code != self.f.code && code.len() <= super::super::MAX_ECHOED_CODE {
                self.next = Some(NextCall::new(
                    "execute_code",
                    self.session_args(json!({"code": code, "language": "python"})),
                    say!("missing_module.meant_reason", meant = meant),
                ));
            }
        }
        true
    }

    /// A module written by its PyPI distribution name (`import opencv_python`, `from
    /// beautifulsoup4 import ...`) whose package imports under another name that is not here:
    /// the import name is the first fix, then what it takes (native: what to use instead; else
    /// the install, by the distribution's name).
    fn pip_name(&mut self, module: &str, top: &str, import: &str) -> bool {
        let dist = modules::pypi_name(import);
        let values: [(&str, &dyn std::fmt::Display); 4] = [
            ("module", &module),
            ("top", &top),
            ("meant", &import),
            ("dist", &dist),
        ];
        if let Some((_, alternative)) = modules::native_package(import) {
            let mut values = values.to_vec();
            values.push(("alternative", &alternative));
            self.rule_with("missing_module.pip_name_native", &values);
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                words::text("missing_module.unavailable_next"),
            ));
        } else {
            self.rule_with("missing_module.pip_name", &values);
            self.next = Some(NextCall::new(
                "install_package",
                self.session_args(json!({"package": dist})),
                say!(
                    "missing_module.installable.published",
                    top = import,
                    dist = dist
                ),
            ));
        }
        true
    }

    /// The import name of the distribution `name` spells (`scikit_learn`, `Pillow`), when that
    /// distribution is here under another name.
    fn import_name_of(&self, name: &str) -> Option<String> {
        let wanted = normalize(name);
        self.table
            .iter(Language::Python)
            .find(|(import, cost)| normalize(&cost.package) == wanted && *import != name)
            .map(|(import, _)| import.to_owned())
            .filter(|import| !import.contains('.'))
    }

    /// A module that may be a typo, a vendored package, or a pure-Python package on PyPI.
    /// `import utils`: a name projects give their own modules (`words/names.toml`), which no
    /// install provides (the PyPI package of that name, if any, is someone else's).
    fn local_module(&mut self, module: &str) -> bool {
        let top = module.split('.').next().unwrap_or(module);
        let local = words::list("missing_module.local.names")
            .iter()
            .any(|name| name == top);
        if local {
            self.rule_with("missing_module.local", &[("module", &top)]);
            self.next = Some(self.workspace_info_call(words::text("errors.list_reason")));
        }
        local
    }

    fn installable_module(&mut self, module: &str) {
        let top = module.split('.').next().unwrap_or(module).to_owned();
        let similar: Vec<String> = self
            .table
            .similar(Language::Python, &top)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let dist = modules::pypi_name(module);
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
        // Two edits away is as likely a real package (`inflect`, not `inspect`): installing
        // comes first, the similar name after.
        if let Some(best) = similar.first() {
            self.fix(say!("missing_module.installable.did_you_mean", best = best));
        }
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
        } else if let Some(import) = self.python().then(|| usual_alias(&missing)).flatten() {
            // `np`, `pd`, `plt`: a module's usual name, never imported in this code.
            self.fix(say!(
                "undefined_name.alias",
                missing = missing,
                import = import
            ));
        } else if let Some(meant) = self
            .fixes
            .is_empty()
            .then(|| misspelt_name(&missing, self.f.code, self.python()))
            .flatten()
        {
            // Only when no known cause spoke first (`true` is JavaScript's, not a typo).
            let id = if meant.eq_ignore_ascii_case(&missing) {
                "undefined_name.typo_case"
            } else {
                "undefined_name.typo"
            };
            self.fix(say!(id, missing = missing, meant = meant));
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

/// The import that defines `name` when it is a module's usual short name (`np`, `pd`, `plt`).
fn usual_alias(name: &str) -> Option<&'static str> {
    words::list("undefined_name.aliases")
        .iter()
        .find_map(|entry| {
            let (alias, import) = entry.split_once(" => ")?;
            (alias == name).then_some(import)
        })
}

/// The name `missing` is most likely a misspelling of: a name used elsewhere in `code` or a
/// builtin of the language, one edit away (two for a name of six letters or more, an adjacent
/// swap counting one), or a builtin that `missing` starts with (`lenght` for `len`).
fn misspelt_name(missing: &str, code: &str, python: bool) -> Option<String> {
    if missing.chars().count() < 3 {
        return None;
    }
    let builtins = words::list(if python {
        "undefined_name.python_builtins"
    } else {
        "undefined_name.javascript_builtins"
    });
    let in_code = identifiers(code).filter(|name| *name != missing);
    let candidates = in_code.chain(builtins.iter().map(String::as_str));
    let allowed = if missing.chars().count() >= 6 { 2 } else { 1 };
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let mut distance = edit_distance(missing, candidate);
        if builtins.iter().any(|b| b == candidate)
            && candidate.len() >= 3
            && missing.starts_with(candidate)
            && missing.len() <= candidate.len() + 3
        {
            distance = distance.min(allowed);
        }
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name.to_owned())
}

/// The identifiers of `code` (ASCII words that do not start with a digit), each once.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    let mut seen = std::collections::BTreeSet::new();
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .filter(|word| word.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .filter(move |word| seen.insert(*word))
}

/// `code` with the module name `wrong` replaced by `right` wherever it stands as a whole
/// dotted name (`import pandsa as pd`, `pandsa.read_csv`), not inside a longer name.
fn replace_module(code: &str, wrong: &str, right: &str) -> String {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(wrong) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + wrong.len()..].chars().next();
        let whole = !before.is_some_and(|c| is_name(c) || c == '.') && !after.is_some_and(is_name);
        out.push_str(&rest[..at]);
        out.push_str(if whole { right } else { wrong });
        rest = &rest[at + wrong.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{misspelt_name, replace_module, usual_alias};

    #[test]
    fn an_undefined_name_is_matched_to_the_name_it_misspells() {
        let code = "monthly_revenue = [1, 2]\nprint(sum(montly_revenue))";
        assert_eq!(
            misspelt_name("montly_revenue", code, true).as_deref(),
            Some("monthly_revenue")
        );
        assert_eq!(
            misspelt_name("lenght", "lenght(xs)", true).as_deref(),
            Some("len")
        );
        assert_eq!(
            misspelt_name("pirnt", "pirnt(1)", true).as_deref(),
            Some("print")
        );
        assert_eq!(
            misspelt_name("cosole", "cosole.log(1)", false).as_deref(),
            Some("console")
        );
        // Nothing near: no guess (short names guess from one edit only).
        assert_eq!(misspelt_name("total", "print(total)", true), None);
        assert_eq!(misspelt_name("ab", "ac = 1\nab", true), None);
        assert_eq!(usual_alias("np"), Some("import numpy as np"));
        assert_eq!(usual_alias("numpyy"), None);
    }

    #[test]
    fn only_whole_module_names_are_replaced() {
        assert_eq!(
            replace_module(
                "import pandsa as pd\nx = pandsa.f(mypandsa)",
                "pandsa",
                "pandas"
            ),
            "import pandas as pd\nx = pandas.f(mypandsa)"
        );
        assert_eq!(
            replace_module(
                "import matplotlib.pyplt as plt",
                "matplotlib.pyplt",
                "matplotlib.pyplot"
            ),
            "import matplotlib.pyplot as plt"
        );
    }
}
