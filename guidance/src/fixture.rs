//! Recorded facts: the inputs of guidance's snapshot tests, one TOML file per rule under
//! `guidance/tests/fixtures/{advice,analysis,fuel}/`, each a list of `[[case]]`s. Every case
//! runs through the public functions exactly as the supervisor calls them, so a fixture shows
//! what a model is told for those facts. The end-to-end suite reads the same files to check
//! each `next_call` against the tool schemas a client sees.
//!
//! Fields a case leaves out take the value of [`ErrorFacts::new`] (no name, no message, zero
//! numbers); `table` picks the import costs (`catalogue`, the default: the standard library
//! and the compiled-in packages; `builtin`: the standard library only; `empty`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_protocol::{ErrorType, Language, Runtime};
use serde::Deserialize;

use crate::inventory::ImportFuelTable;
use crate::{Advice, DiskFacts, ErrorFacts, ExecutionGuidance, FuelAnalysis, NextCall};

/// One fixture file: the cases of one rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

/// The facts of one call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub language: String,
    pub runtime: Option<String>,
    /// Set for advice: the failure's error class.
    pub error_type: Option<String>,
    pub error_name: Option<String>,
    pub error_message: Option<String>,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub code: String,
    pub session_id: Option<String>,
    #[serde(default)]
    pub fuel_consumed: u64,
    #[serde(default)]
    pub fuel_budget: u64,
    #[serde(default)]
    pub memory_bytes: u64,
    #[serde(default)]
    pub memory_cap: u64,
    #[serde(default)]
    pub timeout_secs: f64,
    #[serde(default)]
    pub stdout_truncated: bool,
    #[serde(default)]
    pub state_lost: bool,
    /// The code is an `execute_command` line.
    #[serde(default)]
    pub command: bool,
    pub disk: Option<Disk>,
    /// Fuel analysis: what the call used of its budget.
    pub consumed: Option<u64>,
    pub budget: Option<u64>,
    /// Code analysis: the caller's context and the server's defaults.
    pub context: Option<String>,
    pub default_fuel: Option<u64>,
    pub default_timeout_secs: Option<f64>,
    pub table: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    pub quota_bytes: u64,
    pub quota_files: u64,
    pub used_bytes: u64,
    pub used_files: u64,
    pub file_cap_bytes: u64,
}

/// What guidance says for one case.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Answer {
    Advice(Advice),
    Analysis(Box<ExecutionGuidance>),
    Fuel(FuelAnalysis),
}

impl Answer {
    pub fn next_call(&self) -> Option<&NextCall> {
        match self {
            Answer::Advice(a) => a.next_call.as_ref(),
            Answer::Analysis(g) => g.next_call.as_ref(),
            Answer::Fuel(_) => None,
        }
    }
}

/// The fixture files under `dir` of one kind (`advice`, `analysis`, `fuel`), sorted, as paths.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

impl Fixture {
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        toml::from_str(&text).map_err(|e| e.to_string())
    }
}

impl Case {
    /// Runs the case: advice when it names an error type, the fuel analysis when it gives a
    /// budget, and the code analysis otherwise.
    pub fn run(&self) -> Result<Answer, String> {
        let language = Language::from_name(&self.language)
            .ok_or_else(|| format!("unknown language {}", self.language))?;
        let table = match self.table.as_deref().unwrap_or("catalogue") {
            "catalogue" => crate::inventory::import_costs().clone(),
            "builtin" => ImportFuelTable::builtin(),
            "empty" => ImportFuelTable::default(),
            other => return Err(format!("unknown table {other}")),
        };
        if let Some(error_type) = &self.error_type {
            let error_type = ErrorType::from_name(error_type)
                .ok_or_else(|| format!("unknown error type {error_type}"))?;
            let session_id = self.session_id.as_deref().unwrap_or("s1");
            let mut facts = ErrorFacts::new(language, error_type, &self.code, session_id);
            if let Some(runtime) = &self.runtime {
                facts.runtime = Runtime::from_name(runtime)
                    .ok_or_else(|| format!("unknown runtime {runtime}"))?;
            }
            facts.error_name = self.error_name.as_deref();
            facts.error_message = self.error_message.as_deref();
            facts.stderr = &self.stderr;
            facts.fuel_consumed = self.fuel_consumed;
            facts.fuel_budget = self.fuel_budget;
            facts.memory_bytes = self.memory_bytes;
            facts.memory_cap = self.memory_cap;
            facts.timeout_secs = self.timeout_secs;
            facts.stdout_truncated = self.stdout_truncated;
            facts.state_lost = self.state_lost;
            facts.command = self.command;
            facts.disk = self.disk.as_ref().map(|d| DiskFacts {
                quota_bytes: d.quota_bytes,
                quota_files: d.quota_files,
                used_bytes: d.used_bytes,
                used_files: d.used_files,
                file_cap_bytes: d.file_cap_bytes,
            });
            return Ok(Answer::Advice(crate::advise_with(&facts, &table)));
        }
        if let (Some(consumed), Some(budget)) = (self.consumed, self.budget) {
            return Ok(Answer::Fuel(crate::fuel_analysis(
                consumed, budget, &self.code, language, &table,
            )));
        }
        let defaults = (
            self.default_fuel.unwrap_or(10_000_000_000),
            Duration::from_secs_f64(self.default_timeout_secs.unwrap_or(30.0)),
        );
        Ok(Answer::Analysis(Box::new(crate::analyze(
            &self.code,
            language,
            self.context.as_deref(),
            &table,
            defaults,
        ))))
    }
}
