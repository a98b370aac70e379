//! Advice that leads to the scientific runtime: a session on the default runtime failed to
//! import (or install) a package that python-scientific has compiled in. For a native package
//! (numpy, pandas, scikit-learn, ...) that runtime is the way: the advice says so and its
//! `next_call` creates a session there. For a pure-Python one (xlrd), `install_package` adds it
//! to this session without losing its state, so the runtime is only mentioned. When this
//! server has no scientific runtime, the advice says that instead and proposes nothing there.

use sandbox_protocol::Runtime;
use serde_json::json;

use super::super::docs::PYTHON;
use super::super::{NextCall, derived_session_id, modules};
use super::draft::Draft;
use crate::packages::scientific::{self, STACK};
use crate::runtimes::SCIENTIFIC_INSTALL_HINT;

impl Draft<'_, '_> {
    /// The catalogue's (name, version) of `module`'s package when only the scientific runtime
    /// has it and this session is on the default runtime; with whether it is native.
    fn scientific_package(&self, module: &str) -> Option<(&'static str, &'static str, bool)> {
        let top = module.split('.').next().unwrap_or(module);
        if self.f.runtime != Runtime::Python || !scientific::scientific_only(top) {
            return None;
        }
        let (name, dist) = scientific::catalogue().distribution(top)?;
        Some((name, dist.version.as_str(), dist.native))
    }

    /// `missing_module` for a native package the scientific runtime has: run the code there
    /// (or, without that runtime on this server, what to use instead). False when `module` is
    /// not one.
    pub(super) fn scientific_module(&mut self, module: &str) -> bool {
        let top = module.split('.').next().unwrap_or(module).to_owned();
        // Pure Python on top of native packages (seaborn needs numpy, pandas, matplotlib) is as
        // unreachable from 3.12 as a native one: install_package could not bring its deps.
        let Some((name, version, _)) = self
            .scientific_package(module)
            .filter(|(_, _, native)| *native || modules::native_package(&top).is_some())
        else {
            return false;
        };
        let alternative = modules::native_package(&top).map(|(_, alt)| alt);
        self.doc(PYTHON);
        if !self.f.scientific_available {
            self.summary = format!(
                "`{top}` ({name}) is a native package: it cannot load in this session's CPython 3.12, and the python-scientific runtime that has it compiled in is not installed on this server."
            );
            match alternative {
                Some(alt) => self.fix(format!("Instead of {top}: {alt}.")),
                None => self.fix(format!("Do without {top}: the standard library and the vendored packages (list_available_packages) run here.")),
            }
            self.fix(format!(
                "The python-scientific runtime ({STACK}) would run it: {SCIENTIFIC_INSTALL_HINT}."
            ));
            self.next = Some(NextCall::new(
                "list_available_packages",
                json!({"language": "python"}),
                "see what this server can import",
            ));
            return true;
        }
        let session_id = derived_session_id(self.f.session_id, "sci");
        self.summary = format!(
            "`{top}` is not in this session's runtime (CPython 3.12), but the python-scientific runtime has it compiled in ({name} {version})."
        );
        self.fix(format!(
            "Run this code on the python-scientific runtime ({STACK}): create_session {{\"language\": \"python\", \"runtime\": \"python-scientific\", \"session_id\": \"{session_id}\"}}, then execute_code with that session_id. It is a new session: variables from this session do not carry over, and neither do files in /app (each session has its own workspace), so re-create the data the code needs there."
        ));
        if let Some(alt) = alternative {
            self.fix(format!("Or stay in this session without {top}: {alt}."));
        }
        self.next = Some(NextCall::new(
            "create_session",
            json!({"language": "python", "runtime": "python-scientific", "session_id": session_id}),
            format!(
                "{name} {version} is compiled into the python-scientific runtime; this session's runtime cannot load it"
            ),
        ));
        true
    }

    /// After install advice for a pure-Python package the scientific runtime also has: say so,
    /// for work that needs its native packages as well.
    pub(super) fn scientific_mention(&mut self, module: &str) {
        if !self.f.scientific_available {
            return;
        }
        if let Some((name, version, false)) = self.scientific_package(module) {
            self.fix(format!(
                "{name} {version} also comes compiled into the python-scientific runtime ({STACK}): create_session {{\"language\": \"python\", \"runtime\": \"python-scientific\"}} gives a new session with it, if the work needs numpy or pandas too."
            ));
        }
    }

    /// `native_package` from an install on the default runtime, for a package the scientific
    /// runtime has: where it runs (or that this server lacks that runtime).
    pub(super) fn scientific_install(&mut self, package: &str) {
        if self.f.runtime != Runtime::Python {
            return;
        }
        if let Some(there) = scientific::elsewhere(package, self.f.scientific_available) {
            self.fix(format!("{there}."));
        }
    }
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::Language;

    use super::super::super::fmt_fuel;
    use super::super::testing::{check, facts, says};
    use super::super::{ErrorFacts, advise};
    use super::*;

    fn missing<'a>(code: &'a str, message: &'a str) -> ErrorFacts<'a> {
        let mut f = facts(Language::Python, "missing_module", code);
        f.error_name = Some("ModuleNotFoundError");
        f.error_message = Some(message);
        f
    }

    #[test]
    fn a_native_package_leads_to_a_scientific_session() {
        // (code, message, the package as the summary names it)
        let cases = [
            (
                "import numpy as np",
                "No module named 'numpy'",
                "numpy 2.5.2",
            ),
            (
                "import pandas as pd",
                "No module named 'pandas'",
                "pandas 3.0.6",
            ),
            (
                "from sklearn.linear_model import LinearRegression",
                "No module named 'sklearn'",
                "scikit-learn 1.9.1",
            ),
            (
                "import matplotlib.pyplot as plt",
                "No module named 'matplotlib'",
                "matplotlib 3.11.2",
            ),
            (
                "from PIL import Image",
                "No module named 'PIL'",
                "pillow 13.0.0",
            ),
        ];
        for (code, message, package) in cases {
            let a = advise(&missing(code, message));
            check(&a);
            assert!(a.summary.contains(package), "{a:#?}");
            let first = &a.actionable_guidance[0];
            assert!(first.starts_with("Run this code on the python-scientific runtime"));
            assert!(first.contains("variables from this session do not carry over"));
            assert!(first.contains("neither do files in /app"));
            let call = a.next_call.unwrap();
            assert_eq!(call.tool, "create_session");
            assert_eq!(
                call.arguments,
                json!({"language": "python", "runtime": "python-scientific", "session_id": "s1-sci"})
            );
        }
        let a = advise(&missing("import numpy", "No module named 'numpy'"));
        assert!(says(
            &a,
            "Or stay in this session without numpy: plain lists"
        ));
    }

    #[test]
    fn without_the_runtime_the_advice_says_so() {
        let mut f = missing("import pandas", "No module named 'pandas'");
        f.scientific_available = false;
        let a = advise(&f);
        check(&a);
        assert!(a.summary.contains("not installed on this server"), "{a:#?}");
        assert!(a.actionable_guidance[0].starts_with("Instead of pandas"));
        assert!(says(&a, "prepare.sh without --no-scientific"));
        assert_eq!(a.next_call.unwrap().tool, "list_available_packages");
    }

    #[test]
    fn only_the_default_runtime_is_sent_elsewhere() {
        // A session already on the scientific runtime, and packages both runtimes lack.
        let mut f = missing("import torch", "No module named 'torch'");
        let a = advise(&f);
        assert!(!says(&a, "python-scientific"), "{a:#?}");
        f.runtime = Runtime::PythonScientific;
        f.error_message = Some("No module named 'numpy'");
        let a = advise(&f);
        check(&a);
        assert!(!says(&a, "create_session"), "{a:#?}");
        // sympy and yaml import on the default runtime: nothing to say about another one.
        let a = advise(&missing("import yaml", "No module named 'yaml'"));
        assert!(!says(&a, "python-scientific"), "{a:#?}");
    }

    #[test]
    fn a_pure_package_installs_here_and_mentions_the_runtime() {
        let a = advise(&missing("import xlrd", "No module named 'xlrd'"));
        check(&a);
        assert!(
            a.actionable_guidance[0].contains("install_package"),
            "{a:#?}"
        );
        assert!(says(
            &a,
            "xlrd 2.0.2 also comes compiled into the python-scientific runtime"
        ));
        assert_eq!(a.next_call.unwrap().tool, "install_package");
        let mut f = missing("import xlrd", "No module named 'xlrd'");
        f.scientific_available = false;
        assert!(!says(&advise(&f), "python-scientific"));
    }

    #[test]
    fn bigger_sessions_stay_on_the_scientific_runtime() {
        let mut f = facts(
            Language::Python,
            "out_of_fuel",
            "import sklearn.linear_model",
        );
        f.runtime = Runtime::PythonScientific;
        f.fuel_budget = 10_000_000_000 * Runtime::PythonScientific.fuel_factor();
        f.fuel_consumed = f.fuel_budget;
        let a = advise(&f);
        check(&a);
        let call = a.next_call.clone().unwrap();
        assert_eq!(call.tool, "create_session");
        assert_eq!(call.arguments["runtime"], "python-scientific");
        assert!(
            says(&a, "runtime: \"python-scientific\", session_id"),
            "{a:#?}"
        );
        // Its flavors give it fuel that outlasts their timeout on this runtime: the smallest
        // already gives over 3x what the call used, with no fixed cap.
        let small = crate::config::flavor_execution_fuel(
            &sandbox_protocol::FLAVORS[0],
            Runtime::PythonScientific,
        );
        assert_eq!(call.arguments["flavor"], "small", "{call:?}");
        assert!(call.arguments.get("fuel_budget").is_none(), "{call:?}");
        let per_call = format!(
            "each call then gets {} fuel, enough to run until its 30 s timeout",
            fmt_fuel(small)
        );
        assert!(says(&a, &per_call), "{a:#?}");

        let mut f = facts(Language::Python, "out_of_memory", "x = [0] * 10**9");
        f.runtime = Runtime::PythonScientific;
        f.memory_bytes = 1 << 30;
        let call = advise(&f).next_call.unwrap();
        assert_eq!(call.arguments["runtime"], "python-scientific");
        f.runtime = Runtime::Python;
        let call = advise(&f).next_call.unwrap();
        assert!(call.arguments.get("runtime").is_none());
    }

    #[test]
    fn a_refused_install_names_the_runtime_that_has_it() {
        let mut f = facts(Language::Python, "native_package", "");
        f.error_message = Some(
            "scikit-learn cannot run here: it needs compiled (C/Rust) extensions or the network",
        );
        let a = advise(&f);
        check(&a);
        assert!(says(
            &a,
            "scikit-learn 1.9.1 is compiled into the python-scientific runtime"
        ));
        f.scientific_available = false;
        assert!(says(&advise(&f), "not installed on this server"));
    }
}
