//! `sandbox-bench --advice[=CORPUS,...]` (issue 27): how often the advice names the real cause,
//! on the tuned corpus (`tests/corpus/advice.json`, written with the rules), on each blind
//! corpus's two thirds the rules may be tuned on, and on its held-out third
//! (`tests/corpus/blind*.json`, each written from the README only by someone who never read the
//! rules). Each row gives the first fix alone, the first fix or the summary, and the error
//! class, as figures; the blind cases that miss are listed so the next rule can be written
//! against the tuned part only. One real server, as the e2e test runs it. `--advice=PATH.json`
//! also scores a scratch corpus in the blind corpora's format (variants written to test that a
//! rule is general), as a blind corpus with no held-out third. A case that no longer fails at
//! all (the sandbox gained what it relied on) has no cause to name: it is counted apart as "no
//! longer fails" in its group, scored neither way, and named only when it is tunable.

use std::collections::BTreeMap;

use anyhow::Result;
use sandbox_tests::Server;
use sandbox_tests::corpus::{BLIND_CORPORA, CORPUS, Case, figure, load};
use serde_json::json;

/// What one group of cases scored.
#[derive(Default)]
struct Score {
    cases: usize,
    first_fix: usize,
    first_fix_or_summary: usize,
    error_type: usize,
    /// Cases that succeed now (the sandbox gained what they relied on): reported apart, not
    /// in `cases` and scored neither way.
    no_longer_fails: usize,
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

/// Cases run at once: each in a session of its own, so only the host's cores are shared (the
/// timeout cases wait out their wall clock; the order of the lines printed does not change).
const LANES: usize = 3;

/// The corpora `--advice` scores: `tuned`, the names of [`BLIND_CORPORA`], and any path ending
/// in `.json` (a scratch corpus in the blind corpora's format, scored like one); all the named
/// corpora when `selected` is empty.
fn chosen(selected: &[String]) -> Result<(bool, Vec<(String, String)>)> {
    let known = std::iter::once("tuned").chain(BLIND_CORPORA.iter().map(|(name, _)| *name));
    let is_path = |name: &str| name.ends_with(".json");
    for name in selected {
        anyhow::ensure!(
            is_path(name) || known.clone().any(|k| k == name),
            "no corpus {name:?}: the corpora are {} (or a path to a .json corpus)",
            known.clone().collect::<Vec<_>>().join(", ")
        );
    }
    let wanted = |name: &str| selected.is_empty() || selected.iter().any(|s| s == name);
    let blind = BLIND_CORPORA
        .into_iter()
        .filter(|(name, _)| wanted(name))
        .map(|(name, path)| (name.to_owned(), path.to_owned()))
        .chain(
            selected
                .iter()
                .filter(|name| is_path(name))
                .map(|path| (path.clone(), path.clone())),
        )
        .collect();
    Ok((wanted("tuned"), blind))
}

/// Prints the scores of the corpora `selected` (all when empty).
///
/// # Errors
/// An unknown corpus name, a corpus that cannot be read, or a server that cannot start.
pub async fn report(selected: &[String]) -> Result<()> {
    let (with_tuned, blind_corpora) = chosen(selected)?;
    let tuned = load(CORPUS)?;
    let mut blind = Vec::new();
    for (name, path) in blind_corpora {
        let mut corpus = load(&path)?;
        // Blind cases run alone, in a fresh session; loops that burn fuel in a small budget.
        for case in &mut corpus.cases {
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
        blind.push((name, corpus));
    }
    let server = Server::start().await?;
    let mut templates = sessions();
    templates.extend(tuned.sessions.clone());
    for (id, args) in &templates {
        let mut args = args.clone();
        args["session_id"] = json!(id);
        server.call("create_session", args).await?;
    }
    let mut groups: Vec<(String, Vec<&Case>, bool)> = Vec::new();
    if with_tuned {
        groups.push((
            "tuned: our corpus".into(),
            tuned.cases.iter().collect(),
            false,
        ));
    }
    for (name, corpus) in &blind {
        for held_out in [false, true] {
            let group = if held_out {
                format!("held out: {name} third")
            } else {
                format!("tuned: {name} two thirds")
            };
            let cases: Vec<&Case> = corpus
                .cases
                .iter()
                .filter(|c| c.held_out == held_out)
                .collect();
            // A scratch corpus (a path) has no held-out third.
            if !cases.is_empty() {
                groups.push((group, cases, true));
            }
        }
    }
    let mut scores: Vec<(String, Score)> = Vec::new();
    let mut blind_kinds: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut passing = Vec::new();
    for (group, cases, is_blind) in &groups {
        let held_out = group.starts_with("held out");
        let replies = run_all(&server, cases, &templates).await;
        let mut score = Score::default();
        for (case, reply) in cases.iter().zip(replies) {
            if let Ok(reply) = &reply
                && case.no_longer_fails(reply)
            {
                score.no_longer_fails += 1;
                // Named for the tunable cases only; a held-out one counts, unnamed.
                if !held_out {
                    passing.push(format!("{group}: {}", case.name));
                }
                continue;
            }
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
            // Held-out cases count in their corpus's total only: per cause, their results
            // would tell which causes the rules miss on the rows nobody may tune on.
            if *is_blind && !held_out {
                let kind = blind_kinds.entry(case.kind.clone()).or_default();
                kind.1 += 1;
                kind.0 += usize::from(named);
                if !named {
                    misses.push(miss(case, &reply));
                }
            }
        }
        scores.push((group.clone(), score));
    }
    server.stop().await?;
    println!("advice: the first fix names the cause (blind cases: one of their cause words)");
    println!("(a case that no longer fails at all is not scored; its group counts it apart)");
    println!(
        "{:<28} {:>18} {:>22} {:>18} {:>18}",
        "", "first fix", "first fix or summary", "error_type", "no longer fails"
    );
    for (group, s) in &scores {
        println!(
            "{group:<28} {:>18} {:>22} {:>18} {:>18}",
            figure(s.first_fix, s.cases),
            figure(s.first_fix_or_summary, s.cases),
            figure(s.error_type, s.cases),
            s.no_longer_fails
        );
    }
    println!("blind corpora by cause, tunable two thirds only (first fix):");
    for (kind, (named, count)) in &blind_kinds {
        println!("  {kind:<28} {}", figure(*named, *count));
    }
    if !passing.is_empty() {
        println!("cases that no longer fail (not scored; held-out ones are only counted):");
        for name in &passing {
            println!("  {name}");
        }
    }
    if !misses.is_empty() {
        println!("blind cases the rules may be tuned on that miss (held-out ones are not shown):");
        for miss in &misses {
            println!("  {miss}");
        }
    }
    Ok(())
}

/// Runs `cases` [`LANES`] at a time when each has a session of its own (cases that share a
/// session, with setups, run one after the other); the replies in the cases' order.
async fn run_all(
    server: &Server,
    cases: &[&Case],
    templates: &BTreeMap<String, serde_json::Value>,
) -> Vec<Result<sandbox_tests::Reply>> {
    if !cases.iter().all(|case| case.fresh) {
        let mut replies = Vec::new();
        for case in cases {
            replies.push(case.run(server, templates).await);
        }
        return replies;
    }
    let lane = |first: usize| async move {
        let mut replies = Vec::new();
        for (i, case) in cases.iter().enumerate().skip(first).step_by(LANES) {
            replies.push((i, case.run(server, templates).await));
        }
        replies
    };
    let (a, b, c) = tokio::join!(lane(0), lane(1), lane(2));
    let mut replies: Vec<_> = a.into_iter().chain(b).chain(c).collect();
    replies.sort_by_key(|(i, _)| *i);
    replies.into_iter().map(|(_, reply)| reply).collect()
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
