//! `sandbox-bench --advice` (issue 27): how often the advice names the real cause, on the
//! tuned corpus (`tests/corpus/advice.json`, written with the rules), on the blind corpus's
//! two thirds the rules may be tuned on, and on its held-out third (`tests/corpus/blind.json`
//! and `blind2.json`, each written from the README only by someone who never read the rules). Each row gives the first fix alone, the first fix or the
//! summary, and the error class, as figures; the blind cases that miss are listed so the next
//! rule can be written against the tuned part only. One real server, as the e2e test runs it.

use std::collections::BTreeMap;

use anyhow::Result;
use sandbox_tests::Server;
use sandbox_tests::corpus::{BLIND, BLIND_SECOND, CORPUS, Case, figure, load};
use serde_json::json;

/// What one group of cases scored.
#[derive(Default)]
struct Score {
    cases: usize,
    first_fix: usize,
    first_fix_or_summary: usize,
    error_type: usize,
}

/// The sessions every case may name, created once: small fuel budgets for the loops.
fn sessions() -> BTreeMap<String, serde_json::Value> {
    [
        ("corpus-py", json!({"language": "python"})),
        ("corpus-js", json!({"language": "javascript"})),
        ("corpus-sh", json!({"language": "python"})),
        (
            "corpus-tiny-py",
            json!({"language": "python", "fuel_budget": 150_000_000}),
        ),
        (
            "corpus-tiny-js",
            json!({"language": "javascript", "fuel_budget": 150_000_000}),
        ),
    ]
    .into_iter()
    .map(|(id, args)| (id.to_owned(), args))
    .collect()
}

pub async fn report() -> Result<()> {
    let tuned = load(CORPUS)?;
    let mut blind = load(BLIND)?;
    let mut second = load(BLIND_SECOND)?;
    // Blind cases run alone, in a fresh session; loops that burn fuel in a small budget.
    for case in blind.cases.iter_mut().chain(&mut second.cases) {
        case.fresh = true;
        if case.session.is_none() && case.error_type == "out_of_fuel" {
            let tiny = if case.language == "javascript" {
                "corpus-tiny-js"
            } else {
                "corpus-tiny-py"
            };
            case.session = Some(tiny.to_owned());
        }
    }
    let server = Server::start().await?;
    let mut templates = sessions();
    templates.extend(tuned.sessions.clone());
    for (id, args) in &templates {
        let mut args = args.clone();
        args["session_id"] = json!(id);
        server.call("create_session", args).await?;
    }
    let mut scores: BTreeMap<&str, Score> = BTreeMap::new();
    let mut blind_kinds: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let groups = [("tuned: our corpus", &tuned.cases, false)]
        .into_iter()
        .chain([("tuned: blind two thirds", &blind.cases, true)])
        .chain([("held out: blind third", &blind.cases, true)])
        .chain([("tuned: blind2 two thirds", &second.cases, true)])
        .chain([("held out: blind2 third", &second.cases, true)]);
    for (group, cases, is_blind) in groups {
        let held_out = group.starts_with("held out");
        for case in cases.iter().filter(|c| !is_blind || c.held_out == held_out) {
            let reply = case.run(&server, &templates).await;
            let score = scores.entry(group).or_default();
            score.cases += 1;
            let Ok(reply) = reply else {
                misses.push(format!("{group}: {} did not run", case.name));
                continue;
            };
            let named = case.names_cause(&reply, false);
            score.first_fix += usize::from(named);
            score.first_fix_or_summary += usize::from(case.names_cause(&reply, true));
            score.error_type +=
                usize::from(reply.value["error_type"].as_str() == Some(case.error_type.as_str()));
            if is_blind {
                let kind = blind_kinds.entry(case.kind.clone()).or_default();
                kind.1 += 1;
                kind.0 += usize::from(named);
                if !named && !held_out {
                    misses.push(miss(case, &reply));
                }
            }
        }
    }
    server.stop().await?;
    println!("advice: the first fix names the cause (blind cases: one of their cause words)");
    println!(
        "{:<28} {:>18} {:>22} {:>18}",
        "", "first fix", "first fix or summary", "error_type"
    );
    for (group, s) in &scores {
        println!(
            "{group:<28} {:>18} {:>22} {:>18}",
            figure(s.first_fix, s.cases),
            figure(s.first_fix_or_summary, s.cases),
            figure(s.error_type, s.cases)
        );
    }
    println!("blind corpus by cause (first fix):");
    for (kind, (named, count)) in &blind_kinds {
        println!("  {kind:<28} {}", figure(*named, *count));
    }
    if !misses.is_empty() {
        println!("blind cases the rules may be tuned on that miss (held-out ones are not shown):");
        for miss in &misses {
            println!("  {miss}");
        }
    }
    Ok(())
}

/// One line for a blind case whose first fix names none of its causes.
fn miss(case: &Case, reply: &sandbox_tests::Reply) -> String {
    let first = reply.value["actionable_guidance"][0]
        .as_str()
        .unwrap_or("(none)");
    let got = reply.value["error_type"].as_str().unwrap_or("none");
    format!(
        "{} [{} → {got}]: wanted one of {:?}; first fix: {}",
        case.name,
        case.error_type,
        case.cause_any,
        first.chars().take(160).collect::<String>()
    )
}
