//! The advice corpora: failing snippets with the words the right advice must say. The tuned
//! corpus (`corpus/advice.json`) was written with the rules and must pass whole (the e2e test
//! `advice_corpus`); the blind corpora (`corpus/blind*.json`) were written from the README
//! only, and a third of each is held out from tuning. `sandbox-bench --advice` prints how often the
//! first fix names the cause in each, as a figure, not a test.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use rmcp::model::Tool;
use serde_json::{Value, json};

use crate::{Reply, Server, next_call_violations};

/// The corpus file, relative to the `sandbox-tests` crate.
/// The tuned corpus: written with the rules, every case must pass (the e2e test).
pub const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/advice.json");
/// The blind corpora, by name: each written from the README only, by someone who never read
/// the rules, a day or more after the one before (so rules tuned on the earlier ones meet
/// mistakes nobody tuned them for); a third of each is held out (never tuned on). Scored by
/// `sandbox-bench --advice`, not a test.
pub const BLIND_CORPORA: [(&str, &str); 5] = [
    (
        "blind",
        concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/blind.json"),
    ),
    (
        "blind2",
        concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/blind2.json"),
    ),
    (
        "blind3",
        concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/blind3.json"),
    ),
    (
        "blind4",
        concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/blind4.json"),
    ),
    (
        "blind5",
        concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/blind5.json"),
    ),
];

pub struct Corpus {
    /// Sessions created before the cases run (session id to `create_session` arguments), for
    /// cases that need a small fuel budget.
    pub sessions: BTreeMap<String, Value>,
    pub cases: Vec<Case>,
}

pub struct Case {
    /// The group the case belongs to, for the per-kind figures.
    pub kind: String,
    pub name: String,
    /// `python`, `javascript`, or `shell` for `execute_command`.
    pub language: String,
    pub code: String,
    pub error_type: String,
    /// Words (case-insensitive) that `actionable_guidance[0]` must contain.
    pub first_fix_contains: Vec<String>,
    /// Words (case-insensitive) that `guidance_summary` must contain (what went wrong, where
    /// the first fix says what to do).
    pub summary_contains: Vec<String>,
    /// Words (case-insensitive) that neither the summary nor any fix may contain.
    pub must_not_contain: Vec<String>,
    /// The session to run in; by default one per language (`corpus-py`, `corpus-js`,
    /// `corpus-sh`).
    pub session: Option<String>,
    /// Code run first in the same session (a declaration, a failed call). It must succeed, or
    /// fail with `setup_error_type` when that is given: a setup that does not do what the case
    /// relies on fails the case instead of leaving it to test something else.
    pub setup: Option<String>,
    /// The `error_type` the setup must fail with (for a setup that is a failed call).
    pub setup_error_type: Option<String>,
    /// Run in a new session made with the arguments of `session` from the corpus's sessions,
    /// destroyed afterwards: for what earlier calls would change (a first import's cost).
    pub fresh: bool,
    /// Seconds, for the timeout cases.
    pub timeout: Option<f64>,
    /// Blind cases: alternatives, one of which the first fix must contain (instead of
    /// `first_fix_contains`, which asks for all of its words).
    pub cause_any: Vec<String>,
    /// Blind cases held out from tuning.
    pub held_out: bool,
}

impl Case {
    fn session(&self) -> &str {
        self.session
            .as_deref()
            .unwrap_or(match self.language.as_str() {
                "python" => "corpus-py",
                "javascript" => "corpus-js",
                _ => "corpus-sh",
            })
    }

    /// Runs the case, in a fresh session when it asks for one.
    pub async fn run(&self, server: &Server, sessions: &BTreeMap<String, Value>) -> Result<Reply> {
        if !self.fresh {
            return self.run_in(server, self.session()).await;
        }
        let template = sessions
            .get(self.session())
            .with_context(|| format!("{}: no session {} to copy", self.name, self.session()))?;
        let id = format!("corpus-fresh-{}", self.name.replace('_', "-"));
        let mut args = template.clone();
        args["session_id"] = json!(id);
        let created = server.call("create_session", args).await?;
        anyhow::ensure!(!created.is_error, "create_session {id}: {created:?}");
        let reply = self.run_in(server, &id).await;
        server
            .call("destroy_session", json!({ "session_id": id }))
            .await?;
        reply
    }

    async fn run_in(&self, server: &Server, session: &str) -> Result<Reply> {
        if let Some(setup) = &self.setup {
            let done = server
                .exec(&self.language, setup, json!({ "session_id": session }))
                .await?;
            let got = done.value["error_type"].as_str();
            anyhow::ensure!(
                got == self.setup_error_type.as_deref(),
                "the setup {setup:?} answered error_type {got:?}, expected {:?}: {done:?}",
                self.setup_error_type
            );
        }
        let mut args = json!({ "session_id": session });
        if let Some(timeout) = self.timeout {
            args["timeout"] = json!(timeout);
        }
        if self.language == "shell" {
            args["command"] = json!(self.code);
            server.call("execute_command", args).await
        } else {
            server.exec(&self.language, &self.code, args).await
        }
    }

    /// Whether the case no longer fails at all: every case expects a failure, and this reply
    /// is an execution that succeeded with nothing to advise (no `error_type`, no output cut,
    /// no fixes, not a tool error), because the sandbox has since gained what the snippet
    /// relied on (`bash`, `readlink -f`, ...). Such a case has no cause left to name: the bench
    /// reports it apart and scores it neither way. (Output cut at the cap comes with advice
    /// and no `error_type`: it still counts.)
    pub fn no_longer_fails(&self, reply: &Reply) -> bool {
        let v = &reply.value;
        let flag = |key: &str| v[key].as_bool().unwrap_or(false);
        let advised = v["actionable_guidance"]
            .as_array()
            .is_some_and(|fixes| !fixes.is_empty());
        !reply.is_error
            && v.is_object()
            && v.get("error_type").is_none()
            && !flag("stdout_truncated")
            && !flag("stderr_truncated")
            && !advised
    }

    /// Whether the reply names the case's cause: every word of `first_fix_contains`, or one
    /// of `cause_any`, in the first fix (with `or_summary`, in the first fix or the summary).
    pub fn names_cause(&self, reply: &Reply, or_summary: bool) -> bool {
        let first = reply.value["actionable_guidance"][0]
            .as_str()
            .unwrap_or("")
            .to_lowercase();
        let summary = reply.value["guidance_summary"]
            .as_str()
            .unwrap_or("")
            .to_lowercase();
        let said = |word: &String| {
            let word = word.to_lowercase();
            first.contains(&word) || (or_summary && summary.contains(&word))
        };
        if self.cause_any.is_empty() {
            self.first_fix_contains.iter().all(said)
        } else {
            self.cause_any.iter().any(said)
        }
    }

    /// Every way the reply differs from the expectation (empty when it matches), its
    /// `next_call` checked against the server's `tools`.
    pub fn mismatches(&self, reply: &Reply, tools: &[Tool]) -> Vec<String> {
        let mut wrong = Vec::new();
        if reply.has("next_call") {
            wrong.extend(next_call_violations(reply.field("next_call"), tools));
        }
        let got_type = reply.value["error_type"].as_str().unwrap_or("none");
        if got_type != self.error_type {
            wrong.push(format!(
                "error_type {got_type}, expected {}",
                self.error_type
            ));
        }
        let fixes: Vec<&str> = reply.value["actionable_guidance"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let first = fixes.first().copied().unwrap_or("").to_lowercase();
        for word in &self.first_fix_contains {
            if !first.contains(&word.to_lowercase()) {
                wrong.push(format!("first fix lacks {word:?}"));
            }
        }
        if !self.cause_any.is_empty()
            && !self
                .cause_any
                .iter()
                .any(|w| first.contains(&w.to_lowercase()))
        {
            wrong.push(format!("first fix names none of {:?}", self.cause_any));
        }
        let summary = reply.value["guidance_summary"].as_str().unwrap_or("");
        for word in &self.summary_contains {
            if !summary.to_lowercase().contains(&word.to_lowercase()) {
                wrong.push(format!("summary lacks {word:?}"));
            }
        }
        let all = format!("{summary}\n{}", fixes.join("\n")).to_lowercase();
        for word in &self.must_not_contain {
            if all.contains(&word.to_lowercase()) {
                wrong.push(format!("says {word:?}"));
            }
        }
        if !wrong.is_empty() {
            wrong.push(format!(
                "summary: {summary}\n      first fix: {}",
                fixes.first().copied().unwrap_or("(none)")
            ));
            // What ran, for a case whose class depends on a budget (a heavy import's fuel).
            let facts = [
                "session_id",
                "fuel_consumed",
                "fuel_budget",
                "execution_time_ms",
            ]
            .map(|field| format!("{field} {}", reply.value[field]));
            wrong.push(format!(
                "ran: {}; stdout: {:?}",
                facts.join(", "),
                reply.value["stdout"]
            ));
        }
        wrong
    }
}

impl Case {
    /// A case from its JSON object (the crate has no serde derive, so fields are read by hand).
    fn parse(value: &Value) -> Result<Self> {
        let text = |key: &str| -> Result<String> {
            value[key]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("case field {key:?} missing in {value}"))
        };
        let words = |key: &str| -> Vec<String> {
            value[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Case {
            kind: text("kind")?,
            name: text("name")?,
            language: text("language")?,
            code: text("code")?,
            error_type: text("error_type")?,
            first_fix_contains: words("first_fix_contains"),
            summary_contains: words("summary_contains"),
            must_not_contain: words("must_not_contain"),
            session: value["session"].as_str().map(str::to_owned),
            setup: value["setup"].as_str().map(str::to_owned),
            setup_error_type: value["setup_error_type"].as_str().map(str::to_owned),
            timeout: value["timeout"].as_f64(),
            fresh: value["fresh"].as_bool().unwrap_or(false),
            cause_any: words("cause_any"),
            held_out: value["held_out"].as_bool().unwrap_or(false),
        })
    }
}

pub fn load(path: &str) -> Result<Corpus> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let json: Value = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
    let sessions = json["sessions"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let cases = json["cases"]
        .as_array()
        .context("the corpus has no cases list")?
        .iter()
        .map(Case::parse)
        .collect::<Result<Vec<_>>>()?;
    let mut names = std::collections::HashSet::new();
    for case in &cases {
        anyhow::ensure!(names.insert(&case.name), "duplicate case {}", case.name);
        anyhow::ensure!(
            !case.first_fix_contains.is_empty() || !case.cause_any.is_empty(),
            "{}: no expected words",
            case.name
        );
        anyhow::ensure!(
            matches!(case.language.as_str(), "python" | "javascript" | "shell"),
            "{}: unknown language {}",
            case.name,
            case.language
        );
        anyhow::ensure!(
            case.setup.is_some() || case.setup_error_type.is_none(),
            "{}: setup_error_type without a setup",
            case.name
        );
    }
    Ok(Corpus { sessions, cases })
}

/// `153/153 (100.0%)`.
pub fn figure(passed: usize, total: usize) -> String {
    format!(
        "{passed}/{total} ({:.1}%)",
        passed as f64 * 100.0 / total.max(1) as f64
    )
}
