//! The executions in flight, across all sessions and connections: so `cancel_execution` can
//! stop one by id, progress notifications and `get_workspace_info` can show them, and a cancel
//! for one that just finished gets an accurate answer.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// How many finished executions are remembered for late cancels.
const REMEMBERED_FINISHED: usize = 256;

#[derive(Debug)]
struct Entry {
    session_id: String,
    started: Instant,
    running: bool,
    cancel: CancellationToken,
}

/// What clients see of an execution in flight.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecutionInfo {
    pub execution_id: String,
    pub session_id: String,
    /// "queued" (waiting for the session's previous execution) or "running".
    pub status: String,
    pub elapsed_ms: u64,
}

/// The registry.
#[derive(Debug, Default)]
pub struct Executions {
    live: Mutex<HashMap<String, Entry>>,
    /// `(execution_id, how it ended)`, newest last.
    finished: Mutex<VecDeque<(String, String)>>,
}

impl Executions {
    /// Registers a new execution and returns its cancel token (a child of `parent`, the MCP
    /// request's own token, so `notifications/cancelled` stops it too).
    pub fn register(
        &self,
        execution_id: &str,
        session_id: &str,
        parent: &CancellationToken,
    ) -> CancellationToken {
        let cancel = parent.child_token();
        let entry = Entry {
            session_id: session_id.to_owned(),
            started: Instant::now(),
            running: false,
            cancel: cancel.clone(),
        };
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(execution_id.to_owned(), entry);
        cancel
    }

    /// The execution left the queue and runs now.
    pub fn mark_running(&self, execution_id: &str) {
        if let Some(entry) = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(execution_id)
        {
            entry.running = true;
        }
    }

    /// Removes a finished execution and remembers how it ended.
    pub fn finish(&self, execution_id: &str, outcome: &str) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(execution_id);
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished.push_back((execution_id.to_owned(), outcome.to_owned()));
        if finished.len() > REMEMBERED_FINISHED {
            finished.pop_front();
        }
    }

    /// Asks a live execution to stop. False when it is not live.
    pub fn cancel(&self, execution_id: &str) -> bool {
        match self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(execution_id)
        {
            Some(entry) => {
                entry.cancel.cancel();
                true
            }
            None => false,
        }
    }

    pub fn is_live(&self, execution_id: &str) -> bool {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(execution_id)
    }

    /// How a finished execution ended, if it is remembered.
    pub fn outcome(&self, execution_id: &str) -> Option<String> {
        let finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished
            .iter()
            .rev()
            .find(|(id, _)| id == execution_id)
            .map(|(_, outcome)| outcome.clone())
    }

    /// Live executions, optionally of one session, oldest first.
    pub fn list(&self, session_id: Option<&str>) -> Vec<ExecutionInfo> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let mut list: Vec<(Instant, ExecutionInfo)> = live
            .iter()
            .filter(|(_, e)| session_id.is_none_or(|s| s == e.session_id))
            .map(|(id, e)| {
                (
                    e.started,
                    ExecutionInfo {
                        execution_id: id.clone(),
                        session_id: e.session_id.clone(),
                        status: if e.running { "running" } else { "queued" }.into(),
                        elapsed_ms: e.started.elapsed().as_millis() as u64,
                    },
                )
            })
            .collect();
        list.sort_by_key(|(started, _)| *started);
        list.into_iter().map(|(_, info)| info).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_and_late_cancel() {
        let executions = Executions::default();
        let parent = CancellationToken::new();
        let token = executions.register("e1", "s1", &parent);
        assert_eq!(executions.list(Some("s1"))[0].status, "queued");
        executions.mark_running("e1");
        assert_eq!(executions.list(None)[0].status, "running");
        assert!(executions.list(Some("other")).is_empty());
        assert!(executions.cancel("e1"));
        assert!(token.is_cancelled());
        assert!(
            !parent.is_cancelled(),
            "cancelling one execution leaves the request alone"
        );
        executions.finish("e1", "cancelled");
        assert!(!executions.cancel("e1"));
        assert_eq!(executions.outcome("e1").as_deref(), Some("cancelled"));
    }

    #[test]
    fn the_request_token_cancels_its_execution() {
        let executions = Executions::default();
        let parent = CancellationToken::new();
        let token = executions.register("e2", "s", &parent);
        parent.cancel();
        assert!(token.is_cancelled());
    }
}
