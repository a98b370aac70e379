//! Advice that is never wrong (issue 12): the labelled corpus in `tests/corpus/advice.json`
//! runs through one real server, and every failing snippet must come back with its expected
//! `error_type`, a first fix (and a summary) that contains the expected words, and none of the
//! words that would be advice about something the code did not do. The expected words name
//! what only the right advice says: the file, name or line of this snippet in the advice's own
//! wording, not a word that the generic advice of its error class says anyway or that is
//! merely echoed from the error message. The score is printed as a figure
//! (overall and per kind) before the test fails on any mismatch, listing them all. Every
//! `next_call` an answer carries must be a call the server's tools accept, as their input
//! schemas say: here, and for every recorded fact of guidance's own snapshot tests.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use sandbox_guidance::fixture::{Fixture, files};
use sandbox_guidance::{ErrorFacts, advise};
use sandbox_protocol::{ErrorType, Language};
use sandbox_tests::corpus::{CORPUS, figure, load};
use sandbox_tests::{Server, next_call_violations};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn advice_corpus_is_never_wrong() -> Result<()> {
    let corpus = load(CORPUS)?;
    assert!(
        corpus.cases.len() >= 150,
        "the corpus has {} cases",
        corpus.cases.len()
    );
    let server = Server::start().await?;
    let tools = server.tools().await?;
    for (id, args) in &corpus.sessions {
        let mut args = args.clone();
        args["session_id"] = json!(id);
        let created = server.call("create_session", args).await?;
        anyhow::ensure!(!created.is_error, "create_session {id}: {created:?}");
    }
    // kind -> (passed, total), and every mismatch.
    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &corpus.cases {
        let wrong = match case.run(&server, &corpus.sessions).await {
            Ok(reply) => case.mismatches(&reply, &tools),
            Err(e) => vec![format!("{e:#}")],
        };
        let entry = by_kind.entry(&case.kind).or_default();
        entry.1 += 1;
        if wrong.is_empty() {
            entry.0 += 1;
        } else {
            failures.push(format!(
                "{}/{} ({}): {}",
                case.kind,
                case.name,
                case.language,
                wrong.join("\n      ")
            ));
        }
    }
    server.stop().await?;
    let total = corpus.cases.len();
    eprintln!("advice corpus: {}", figure(total - failures.len(), total));
    for (kind, (passed, count)) in &by_kind {
        eprintln!("  {kind:<14} {}", figure(*passed, *count));
    }
    if !failures.is_empty() {
        bail!(
            "{} of {total} corpus cases got wrong advice:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}

/// Guidance's fixtures (`guidance/tests/fixtures`) and the plain advice of every error class
/// in both languages: each `next_call` is checked against the input schemas the server lists,
/// the ones a validating client would use, not a copy of them.
#[tokio::test(flavor = "multi_thread")]
async fn every_next_call_guidance_records_fits_the_real_tool_schemas() -> Result<()> {
    let server = Server::start().await?;
    let tools = server.tools().await?;
    server.stop().await?;
    let mut calls = Vec::new();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../guidance/tests/fixtures");
    let paths = files(std::path::Path::new(root));
    anyhow::ensure!(paths.len() >= 50, "guidance fixtures missing under {root}");
    for path in &paths {
        let fixture = Fixture::load(path).map_err(anyhow::Error::msg)?;
        for (number, case) in fixture.cases.iter().enumerate() {
            let answer = case.run().map_err(anyhow::Error::msg)?;
            if let Some(call) = answer.next_call() {
                let name = format!("{}#{}", path.display(), number + 1);
                calls.push((name, serde_json::to_value(call)?));
            }
        }
    }
    for language in [Language::Python, Language::JavaScript] {
        for error_type in ErrorType::ALL {
            for code in ["", "x = 1", "while True: pass"] {
                let mut facts = ErrorFacts::new(language, error_type, code, "s1");
                facts.fuel_budget = 10_000_000_000;
                facts.memory_cap = 1 << 30;
                facts.timeout_secs = 30.0;
                if let Some(call) = advise(&facts).next_call {
                    let name = format!("{language} {error_type} {code:?}");
                    calls.push((name, serde_json::to_value(call)?));
                }
            }
        }
    }
    anyhow::ensure!(
        calls.len() >= 40,
        "only {} next calls to check",
        calls.len()
    );
    let wrong: Vec<String> = calls
        .iter()
        .flat_map(|(name, call)| {
            next_call_violations(call, &tools)
                .into_iter()
                .map(move |v| format!("{name}: {v}"))
        })
        .collect();
    println!(
        "checked {} next calls against the tool schemas",
        calls.len()
    );
    anyhow::ensure!(wrong.is_empty(), "{}", wrong.join("\n"));
    Ok(())
}
