//! Fuel figures: metering's overhead (measured by `sandbox-worker fuel-overhead`, which runs
//! the same program with and without fuel), and which vendored packages cost the most to import
//! (read from `runtimes/data/import-fuel.json`).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value as Json;

use crate::table::Value;

/// How long the overhead measurement may take before it is reported as not measured.
const OVERHEAD_LIMIT: Duration = Duration::from_secs(180);

/// The programs `fuel-overhead` runs, per language, as the figures' labels name them.
pub const OVERHEAD_PROGRAMS: [(&str, &str); 2] = [("python", "fib(25)"), ("javascript", "fib(27)")];

/// The overhead of each language in `fuel-overhead`'s output
/// (`{"python": {"metered_ms", "unmetered_ms", "overhead_percent"}, "javascript": {...}}`), in
/// the order of [`OVERHEAD_PROGRAMS`].
///
/// # Errors
/// When the output is not that object or a figure is missing or negative.
pub fn parse_overheads(output: &str) -> Result<Vec<Value>> {
    let json: Json = serde_json::from_str(output.trim())
        .with_context(|| format!("fuel-overhead printed no JSON object: {output:?}"))?;
    OVERHEAD_PROGRAMS
        .iter()
        .map(|(language, _)| {
            let figures = &json[language];
            let number = |key: &str| {
                figures[key]
                    .as_f64()
                    .with_context(|| format!("fuel-overhead gave no {language}.{key}: {json}"))
            };
            let (metered_ms, unmetered_ms) = (number("metered_ms")?, number("unmetered_ms")?);
            ensure!(
                metered_ms > 0.0 && unmetered_ms > 0.0,
                "fuel-overhead's {language} times must be positive: {json}"
            );
            Ok(Value::Overhead {
                percent: number("overhead_percent")?,
                metered_ms,
                unmetered_ms,
            })
        })
        .collect()
}

/// Runs `WORKER fuel-overhead --runtime-dir RUNTIMES` and returns its figures, or why they
/// could not be had (missing subcommand, failure, bad output), as text for the table.
pub async fn measure_overheads(worker: &Path, runtimes: &Path) -> Result<Vec<Value>, String> {
    let mut command = tokio::process::Command::new(worker);
    command
        .args(["fuel-overhead", "--runtime-dir"])
        .arg(runtimes)
        .kill_on_drop(true);
    let output = tokio::time::timeout(OVERHEAD_LIMIT, command.output())
        .await
        .map_err(|_| format!("sandbox-worker fuel-overhead took over {OVERHEAD_LIMIT:?}"))?
        .map_err(|e| format!("running {}: {e}", worker.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!(
            "sandbox-worker fuel-overhead failed ({}): {first}",
            output.status
        ));
    }
    parse_overheads(&String::from_utf8_lossy(&output.stdout)).map_err(|e| format!("{e:#}"))
}

/// The `count` modules of the default Python whose first import costs the most fuel, heaviest
/// first, from `import-fuel.json` (`{"meta": ..., "python": {module: {"fuel", "available",
/// "over_default_budget", ...}}}`). Modules that are not available, or whose import needs more
/// than the default fuel budget, are skipped: a default session could not import them.
///
/// # Errors
/// When the file is not of that shape.
pub fn heaviest_imports(import_fuel: &str, count: usize) -> Result<Vec<(String, u64)>> {
    let json: Json = serde_json::from_str(import_fuel).context("import-fuel.json is not JSON")?;
    let Some(modules) = json["python"].as_object() else {
        bail!("import-fuel.json has no \"python\" object");
    };
    let mut usable = Vec::new();
    for (module, entry) in modules {
        let fuel = entry["fuel"]
            .as_u64()
            .with_context(|| format!("import-fuel.json: {module} has no fuel"))?;
        let importable = entry["available"].as_bool() == Some(true)
            && entry["over_default_budget"].as_bool() != Some(true);
        if importable {
            usable.push((module.clone(), fuel));
        }
    }
    usable.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    usable.truncate(count);
    Ok(usable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overheads_are_read_in_the_programs_order() {
        let output = r#"{"javascript": {"metered_ms": 120.0, "unmetered_ms": 100.0, "overhead_percent": 20.0},
                         "python": {"metered_ms": 500.5, "unmetered_ms": 400.4, "overhead_percent": 25.0}}
"#;
        assert_eq!(
            parse_overheads(output).unwrap(),
            [
                Value::Overhead {
                    percent: 25.0,
                    metered_ms: 500.5,
                    unmetered_ms: 400.4
                },
                Value::Overhead {
                    percent: 20.0,
                    metered_ms: 120.0,
                    unmetered_ms: 100.0
                },
            ]
        );
    }

    #[test]
    fn incomplete_overheads_are_errors() {
        assert!(parse_overheads("error: unrecognized subcommand").is_err());
        let no_javascript =
            r#"{"python": {"metered_ms": 1.0, "unmetered_ms": 1.0, "overhead_percent": 0.0}}"#;
        assert!(parse_overheads(no_javascript).is_err());
        let zero = r#"{"python": {"metered_ms": 0.0, "unmetered_ms": 1.0, "overhead_percent": 0.0},
                       "javascript": {"metered_ms": 1.0, "unmetered_ms": 1.0, "overhead_percent": 0.0}}"#;
        assert!(parse_overheads(zero).is_err());
    }

    #[test]
    fn the_heaviest_importable_modules_come_first() {
        let file = r#"{
            "meta": {"default_fuel_budget": 10000000000},
            "python": {
                "attrs": {"available": true, "fuel": 800, "over_default_budget": false},
                "bs4": {"available": true, "fuel": 4000, "over_default_budget": false},
                "huge": {"available": true, "fuel": 99999, "over_default_budget": true},
                "gone": {"available": false, "fuel": 50000, "over_default_budget": false},
                "sympy": {"available": true, "fuel": 5000, "over_default_budget": false},
                "zlib2": {"available": true, "fuel": 800, "over_default_budget": false}
            }
        }"#;
        assert_eq!(
            heaviest_imports(file, 3).unwrap(),
            [
                ("sympy".to_owned(), 5000),
                ("bs4".to_owned(), 4000),
                ("attrs".to_owned(), 800)
            ]
        );
        assert_eq!(heaviest_imports(file, 10).unwrap().len(), 4);
        assert!(heaviest_imports(r#"{"meta": {}}"#, 3).is_err());
        assert!(heaviest_imports(r#"{"python": {"x": {"available": true}}}"#, 3).is_err());
    }
}
