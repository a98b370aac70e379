//! Fixture in, snapshot out: every rule's recorded facts (`tests/fixtures/**.toml`, read by
//! `sandbox_guidance::fixture`) run through the public functions, and what guidance answers is
//! compared with its snapshot (`tests/snapshots/`, reviewed with `cargo insta review`). A
//! changed word shows as a diff of one rule's snapshot. Every advice also keeps the promises
//! of the advice tool: a summary, at least two fixes, and documentation pages that exist.
//!
//! All fixtures run before the test fails, and it names every one that differs.

use std::path::Path;

use sandbox_guidance::fixture::{Answer, Fixture, files};

#[test]
fn every_fixture_matches_its_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let paths = files(&root);
    assert!(
        paths.len() >= 50,
        "fixtures missing under {}",
        root.display()
    );
    let mut failed = Vec::new();
    for path in &paths {
        let name = path
            .strip_prefix(&root)
            .expect("under the root")
            .with_extension("")
            .to_string_lossy()
            .replace('/', "__");
        let rendered = match render(path) {
            Ok(text) => text,
            Err(e) => {
                failed.push(format!("{name}: {e}"));
                continue;
            }
        };
        let outcome = std::panic::catch_unwind(|| {
            insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true, input_file => path }, {
                insta::assert_snapshot!(name.as_str(), rendered);
            });
        });
        if outcome.is_err() {
            failed.push(format!("{name}: differs from its snapshot"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} fixtures fail:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// A fixture's answers, one section per case.
fn render(path: &Path) -> Result<String, String> {
    let fixture = Fixture::load(path)?;
    let mut out = String::new();
    for (number, case) in fixture.cases.iter().enumerate() {
        let answer = case.run()?;
        if let Answer::Advice(advice) = &answer {
            keeps_the_advice_promises(advice).map_err(|e| format!("case {}: {e}", number + 1))?;
        }
        let json = serde_json::to_string_pretty(&answer).map_err(|e| e.to_string())?;
        out.push_str(&format!("── case {} ──\n{json}\n", number + 1));
    }
    Ok(out)
}

fn keeps_the_advice_promises(advice: &sandbox_guidance::Advice) -> Result<(), String> {
    if advice.summary.trim().is_empty() {
        return Err("no summary".into());
    }
    if advice.actionable_guidance.len() < 2 {
        return Err(format!("{} fixes", advice.actionable_guidance.len()));
    }
    match advice
        .related_docs
        .iter()
        .find(|d| sandbox_guidance::doc(d).is_none())
    {
        Some(unknown) => Err(format!("unknown documentation page {unknown}")),
        None => Ok(()),
    }
}
