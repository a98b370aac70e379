//! `auto_persist_globals`: after each successful execution the session's persistable state is
//! saved in its workspace (`/app/.sandbox/`), and restored into the fresh interpreter that
//! replaces one lost to a timeout kill or a crash. Python saves the globals that pickle (and
//! re-imports modules); JavaScript saves `var`/`globalThis` bindings that survive JSON,
//! including `_state`, the object every auto-persist JavaScript session starts with (`{}`).
//! Functions, classes and open files cannot be saved: the restore says so. A restore runs
//! before the first execution of every fresh interpreter; with nothing saved yet it reports
//! nothing.
//!
//! The snippets run in the user's namespace but bind no names of their own.

use sandbox_protocol::{ExecuteRequest, ExecutionReport, Language};
use tokio_util::sync::CancellationToken;

use crate::worker::Worker;

/// Fuel and time for one save or restore.
const FUEL: u64 = 5_000_000_000;
const TIMEOUT_MS: u64 = 20_000;

const PYTHON_SAVE: &str = r#"exec('''
import os, pickle, types
saved, skipped, modules = {}, [], {}
for k, v in list(G.items()):
    if k.startswith("__"):
        continue
    if isinstance(v, types.ModuleType):
        modules[k] = v.__name__
        continue
    try:
        saved[k] = pickle.dumps(v)
    except Exception:
        skipped.append(k)
os.makedirs("/app/.sandbox", exist_ok=True)
with open("/app/.sandbox/python-state.tmp", "wb") as f:
    pickle.dump({"values": saved, "modules": modules, "skipped": skipped}, f)
os.replace("/app/.sandbox/python-state.tmp", "/app/.sandbox/python-state.pkl")
''', {"G": globals()})"#;

const PYTHON_RESTORE: &str = r#"exec('''
import os
G["__sandbox_restored__"] = None
if os.path.exists("/app/.sandbox/python-state.pkl"):
    import importlib, json, pickle
    restored, failed = [], []
    with open("/app/.sandbox/python-state.pkl", "rb") as f:
        state = pickle.load(f)
    failed.extend(state["skipped"])
    for k, name in state["modules"].items():
        try:
            G[k] = importlib.import_module(name)
            restored.append(k)
        except Exception:
            failed.append(k)
    for k, blob in state["values"].items():
        try:
            G[k] = pickle.loads(blob)
            restored.append(k)
        except Exception:
            failed.append(k)
    G["__sandbox_restored__"] = json.dumps([sorted(restored), sorted(failed)])
''', {"G": globals()})
globals().pop("__sandbox_restored__")"#;

const JS_SAVE: &str = r#"(() => {
  const base = new Set(globalThis.__sandboxBaseline || []);
  const values = {}, skipped = [];
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (base.has(name) || name === "__sandboxBaseline") continue;
    let v;
    try { v = globalThis[name]; } catch (e) { continue; }
    if (typeof v === "function" || v === undefined) { skipped.push(name); continue; }
    try { values[name] = JSON.parse(JSON.stringify(v)); } catch (e) { skipped.push(name); }
  }
  os.mkdir("/app/.sandbox");
  writeText("/app/.sandbox/js-state.json", JSON.stringify({ values, skipped }));
})()"#;

const JS_RESTORE: &str = r#"(() => {
  if (!Object.hasOwn(globalThis, "_state")) globalThis._state = {};
  if (!fileExists("/app/.sandbox/js-state.json")) return null;
  const state = readJson("/app/.sandbox/js-state.json");
  const restored = [];
  for (const [k, v] of Object.entries(state.values)) { globalThis[k] = v; restored.push(k); }
  return JSON.stringify([restored.sort(), (state.skipped || []).sort()]);
})()"#;

/// What a restore brought back.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Restored {
    /// Names defined again from the saved state.
    pub restored: Vec<String>,
    /// Names that could not be saved or restored (functions, classes, open files).
    pub not_restored: Vec<String>,
}

async fn internal(worker: &mut Worker, code: &str) -> Option<ExecutionReport> {
    let request = ExecuteRequest::user(
        format!("internal-{}", uuid::Uuid::new_v4().simple()),
        code.to_owned(),
        FUEL,
        TIMEOUT_MS,
    );
    worker
        .execute(
            &sandbox_protocol::Request::Execute(request),
            &CancellationToken::new(),
        )
        .await
        .ok()
}

/// Saves the session's state after a successful execution. Failures only cost the save.
pub async fn save(worker: &mut Worker, language: Language) {
    let code = match language {
        Language::Python => PYTHON_SAVE,
        Language::JavaScript => JS_SAVE,
    };
    if let Some(report) = internal(worker, code).await {
        if let Some(error) = report.error {
            tracing::warn!(message = %error.message, "saving the session state failed");
        }
    }
}

/// Restores the saved state into a fresh interpreter.
pub async fn restore(worker: &mut Worker, language: Language) -> Option<Restored> {
    let code = match language {
        Language::Python => PYTHON_RESTORE,
        Language::JavaScript => JS_RESTORE,
    };
    let report = internal(worker, code).await?;
    if let Some(error) = &report.error {
        tracing::warn!(message = %error.message, "restoring the session state failed");
        return None;
    }
    parse_restored(report.result.as_deref()?)
}

/// The repr of a string holding `[restored, failed]` as JSON: `'[...]'` (Python) or `"[...]"`
/// (JavaScript).
fn parse_restored(repr: &str) -> Option<Restored> {
    let json: String = if repr.starts_with('\'') {
        repr.get(1..repr.len() - 1)?.to_owned()
    } else {
        serde_json::from_str(repr).ok()?
    };
    let (restored, not_restored): (Vec<String>, Vec<String>) = serde_json::from_str(&json).ok()?;
    Some(Restored {
        restored,
        not_restored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_results_parse_from_both_reprs() {
        let expected = Restored {
            restored: vec!["a".into(), "b".into()],
            not_restored: vec!["f".into()],
        };
        assert_eq!(
            parse_restored(r#"'[["a", "b"], ["f"]]'"#),
            Some(expected.clone())
        );
        assert_eq!(
            parse_restored(r#""[[\"a\",\"b\"],[\"f\"]]""#),
            Some(expected)
        );
        assert_eq!(parse_restored("None"), None);
    }
}
