//! The session a snippet should run in: the default session when its limits fit, a new session
//! with a flavor and budget that fit the estimate (or a multi-turn use case), or the same session when the code needs names from earlier
//! calls; and the tool call that gets there. The words it matches in the use-case text and
//! what it says live in `words/analysis.toml`.

use sandbox_protocol::flavor::flavor_for;
use sandbox_protocol::{FLAVORS, Language, Runtime};
use serde_json::json;

use super::super::{
    MAX_ECHOED_CODE, MAX_MEMORY_BYTES, MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall, fmt_bytes,
    fmt_fuel, nice_round_up,
};
use super::findings::Analysis;
use super::{FuelEstimate, SessionRecommendation};
use crate::words::{self, say};

/// Fuel per second used to turn fuel into a timeout: below the 8×10^9/s measured on an idle
/// machine, because the machine is shared.
const FUEL_PER_SECOND: f64 = 4e9;

/// What the code needs, from the estimate, the findings and the use-case text.
struct Needs {
    multi_turn: bool,
    big_data: bool,
    /// A budget with headroom (twice the expected fuel, rounded).
    fuel: u64,
    /// Memory with headroom (twice the large data found).
    memory: u64,
    /// Expected wall time: the fuel's CPU time plus the sleeps.
    seconds: f64,
    more_fuel: bool,
    more_memory: bool,
    /// The code uses names from earlier calls.
    state: bool,
    new_session: bool,
}

impl Needs {
    /// The needs of code with this estimate and findings, for this use case.
    fn of(estimate: &FuelEstimate, context: &str, default_fuel: u64, out: &Analysis) -> Self {
        let mentions = |id: &str| words::list(id).iter().any(|w| context.contains(w.as_str()));
        let multi_turn = mentions("session.multi_turn_words");
        let big_data = mentions("session.big_data_words");
        let fuel = nice_round_up(estimate.expected.saturating_mul(2)).min(MAX_SUGGESTED_FUEL);
        let memory = out.memory_need.saturating_mul(2).max(if big_data {
            FLAVORS[1].memory_bytes
        } else {
            0
        });
        let state = out.patterns.contains("state_reliance");
        let more_fuel = fuel > default_fuel;
        let more_memory = memory > FLAVORS[0].memory_bytes;
        Self {
            multi_turn,
            big_data,
            fuel,
            memory,
            seconds: estimate.expected as f64 / FUEL_PER_SECOND + out.sleep_seconds,
            more_fuel,
            more_memory,
            state,
            new_session: !state && (more_fuel || more_memory || multi_turn),
        }
    }
}

/// The session settings that fit the analysed code; warns when no setting can fit.
pub(super) fn recommend_session(
    estimate: &FuelEstimate,
    (context, runtime): (&str, Runtime),
    default_fuel: u64,
    out: &mut Analysis,
) -> SessionRecommendation {
    let needs = Needs::of(estimate, context, default_fuel, out);
    // A session's flavor gives it its fuel times the runtime's factor.
    let factor = runtime.fuel_factor();
    let flavor = flavor_for(
        if needs.more_fuel {
            needs.fuel / factor
        } else {
            0
        },
        needs.memory.min(MAX_MEMORY_BYTES),
    )
    .unwrap_or(&FLAVORS[2]);
    // What the code needs, whichever session it ends up in.
    let bigger = needs.more_fuel || needs.more_memory;
    let fuel_budget = if bigger || needs.new_session {
        needs
            .fuel
            .max(sandbox_protocol::flavor_execution_fuel(flavor, runtime))
    } else {
        default_fuel
    };
    let floor = if bigger || needs.new_session {
        flavor.timeout_secs
    } else {
        30
    };
    let timeout = ((needs.seconds * 2.0).ceil() as u64).clamp(floor, MAX_TIMEOUT_SECS);
    session_warnings(&needs, estimate, default_fuel, fuel_budget, out);
    let (session_type, reason) = session_reason(&needs, estimate, default_fuel);
    SessionRecommendation {
        session_type: session_type.to_owned(),
        flavor: flavor.name().to_owned(),
        fuel_budget,
        timeout_seconds: timeout,
        memory_bytes: needs.memory.clamp(flavor.memory_bytes, MAX_MEMORY_BYTES),
        reason,
    }
}

/// Warnings when the work outgrows what any session allows, or the default budget.
fn session_warnings(
    needs: &Needs,
    estimate: &FuelEstimate,
    default_fuel: u64,
    fuel_budget: u64,
    out: &mut Analysis,
) {
    if estimate.expected > MAX_SUGGESTED_FUEL {
        out.warn(say!(
            "session.beyond_max.warning",
            expected = fmt_fuel(estimate.expected),
            max = fmt_fuel(MAX_SUGGESTED_FUEL)
        ));
    } else if needs.more_fuel {
        let how = words::text(if needs.state {
            "session.more_fuel.how_state"
        } else {
            "session.more_fuel.how_new"
        });
        out.warn(say!(
            "session.more_fuel.warning",
            expected = fmt_fuel(estimate.expected),
            default = fmt_fuel(default_fuel),
            recommended = fmt_fuel(fuel_budget),
            how = how
        ));
    }
    if needs.seconds * 1.5 > MAX_TIMEOUT_SECS as f64 {
        out.warn(say!(
            "session.slow.warning",
            seconds = format!("{:.0}", needs.seconds),
            limit = MAX_TIMEOUT_SECS
        ));
    }
    if needs.memory > MAX_MEMORY_BYTES {
        out.warn(say!(
            "session.too_much_memory.warning",
            need = fmt_bytes(needs.memory / 2),
            max = fmt_bytes(MAX_MEMORY_BYTES)
        ));
    }
    if needs.big_data {
        out.suggest(words::text("session.big_data.suggestion"));
    }
}

/// The session type (`same_session`, `new_session` or `default`) and why.
fn session_reason(
    needs: &Needs,
    estimate: &FuelEstimate,
    default_fuel: u64,
) -> (&'static str, String) {
    if needs.state {
        return (
            "same_session",
            say!(
                "session.reason.same",
                expected = fmt_fuel(estimate.expected)
            ),
        );
    }
    if !needs.new_session {
        return (
            "default",
            say!(
                "session.reason.default",
                expected = fmt_fuel(estimate.expected),
                default = fmt_fuel(default_fuel)
            ),
        );
    }
    let mut why = Vec::new();
    if needs.more_fuel {
        why.push(say!(
            "session.more_fuel.reason",
            expected = fmt_fuel(estimate.expected),
            default = fmt_fuel(default_fuel)
        ));
    }
    if needs.more_memory {
        why.push(say!(
            "session.reason.memory",
            bytes = fmt_bytes(needs.memory / 2)
        ));
    }
    if needs.multi_turn {
        why.push(words::text("session.reason.multi_turn").into());
    }
    ("new_session", why.join("; "))
}

/// The call that gets the code running: `create_session` with the recommended settings, or
/// `execute_code` in the default session when the code is short enough to repeat.
pub(super) fn session_next_call(
    code: &str,
    runtime: Runtime,
    session: &SessionRecommendation,
    context: &str,
) -> Option<NextCall> {
    let language = runtime.language();
    match session.session_type.as_str() {
        "new_session" => {
            let mut args = json!({
                "language": language.as_str(),
                "session_id": session_slug(context, language),
                "flavor": session.flavor,
            });
            if runtime != Runtime::default_for(language) {
                args["runtime"] = json!(runtime.as_str());
            }
            // Only a budget beyond what the flavor's executions get anyway: a fuel_budget is a
            // fixed cap, and below the default it would stop code the timeout allows.
            let flavor_fuel = FLAVORS
                .iter()
                .find(|f| f.name() == session.flavor)
                .map_or(0, |f| sandbox_protocol::flavor_execution_fuel(f, runtime));
            if session.fuel_budget > flavor_fuel {
                args["fuel_budget"] = json!(session.fuel_budget);
            }
            Some(NextCall::new(
                "create_session",
                args,
                say!("session.next.create", reason = session.reason),
            ))
        }
        "default" if code.len() <= MAX_ECHOED_CODE && !code.trim().is_empty() => {
            let mut args = json!({"code": code, "language": language.as_str()});
            if session.timeout_seconds > 30 {
                args["timeout"] = json!(session.timeout_seconds);
            }
            Some(NextCall::new(
                "execute_code",
                args,
                words::text("session.next.execute"),
            ))
        }
        _ => None,
    }
}

/// A readable session id from the use-case text: "one-off Excel processing" → "excel-processing".
fn session_slug(context: &str, language: Language) -> String {
    let filler = words::list("session.slug_filler");
    let words: Vec<String> = context
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty() && !filler.iter().any(|f| f == w))
        .take(3)
        .map(|w| w.chars().take(16).collect())
        .collect();
    let slug = words.join("-");
    let slug = slug.trim_matches('-');
    if slug.is_empty()
        || !slug
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    {
        format!("{}-work", language.as_str())
    } else {
        slug.to_owned()
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn session_slugs_table() {
        let cases = [
            (
                "one-off excel processing",
                Language::Python,
                "excel-processing",
            ),
            (
                "llm agent multi-turn workflow",
                Language::Python,
                "agent-workflow",
            ),
            ("", Language::JavaScript, "javascript-work"),
            ("the a an", Language::Python, "python-work"),
            ("--- report ---", Language::Python, "report"),
            ("_x of y", Language::Python, "x-y"),
            ("é!", Language::Python, "python-work"),
        ];
        for (context, language, slug) in cases {
            assert_eq!(session_slug(context, language), slug, "{context}");
        }
    }
}
