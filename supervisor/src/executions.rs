//! The executions in flight, across all sessions and connections: so `cancel_execution` can
//! stop one by id, progress notifications and `get_workspace_info` can show them, and a cancel
//! for one that just finished gets an accurate answer. Every execution records its session's
//! owner: another client can neither cancel it nor learn how it ended.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::session::Owner;

/// How many finished executions are remembered for late cancels.
const REMEMBERED_FINISHED: usize = 256;

#[derive(Debug)]
struct Entry {
    owner: Owner,
    /// The session's unique key (ids are only unique per owner).
    session_key: String,
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
    /// `(owner, execution_id, how it ended)`, newest last.
    finished: Mutex<VecDeque<(Owner, String, String)>>,
}

impl Executions {
    /// Registers a new execution and returns its cancel token (a child of `parent`, the MCP
    /// request's own token, so `notifications/cancelled` stops it too).
    pub fn register(
        &self,
        execution_id: &str,
        (owner, session_key, session_id): (&Owner, &str, &str),
        parent: &CancellationToken,
    ) -> CancellationToken {
        let cancel = parent.child_token();
        let entry = Entry {
            owner: owner.clone(),
            session_key: session_key.to_owned(),
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

    /// Executions of `owner` in flight (running or queued), for the per-client cap.
    pub fn in_flight(&self, owner: &Owner) -> usize {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|e| e.owner == *owner)
            .count()
    }

    /// Removes a finished execution and remembers how it ended.
    pub fn finish(&self, execution_id: &str, outcome: &str) {
        let Some(entry) = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(execution_id)
        else {
            return;
        };
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished.push_back((entry.owner, execution_id.to_owned(), outcome.to_owned()));
        if finished.len() > REMEMBERED_FINISHED {
            finished.pop_front();
        }
    }

    /// Asks `owner`'s live execution to stop. False when it is not live, or not `owner`'s.
    pub fn cancel(&self, owner: &Owner, execution_id: &str) -> bool {
        match self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(execution_id)
            .filter(|entry| entry.owner == *owner)
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

    /// How `owner`'s finished execution ended, if it is remembered.
    pub fn outcome(&self, owner: &Owner, execution_id: &str) -> Option<String> {
        let finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished
            .iter()
            .rev()
            .find(|(o, id, _)| o == owner && id == execution_id)
            .map(|(_, _, outcome)| outcome.clone())
    }

    /// "queued" or "running" for a live execution.
    pub fn status(&self, execution_id: &str) -> Option<&'static str> {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(execution_id)
            .map(|e| if e.running { "running" } else { "queued" })
    }

    /// How many executions are live, across all clients (server health).
    pub fn count(&self) -> usize {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Live executions of one session (by its key), oldest first.
    pub fn list(&self, session_key: &str) -> Vec<ExecutionInfo> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let mut list: Vec<(Instant, ExecutionInfo)> = live
            .iter()
            .filter(|(_, e)| e.session_key == session_key)
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
        let owner = Owner::connection();
        let token = executions.register("e1", (&owner, "k1", "s1"), &parent);
        assert_eq!(executions.list("k1")[0].status, "queued");
        assert_eq!(executions.in_flight(&owner), 1);
        executions.mark_running("e1");
        assert_eq!(executions.list("k1")[0].status, "running");
        assert_eq!(executions.status("e1"), Some("running"));
        assert!(executions.list("other").is_empty());
        assert!(executions.cancel(&owner, "e1"));
        assert!(token.is_cancelled());
        assert!(
            !parent.is_cancelled(),
            "cancelling one execution leaves the request alone"
        );
        executions.finish("e1", "cancelled");
        assert!(!executions.cancel(&owner, "e1"));
        assert_eq!(
            executions.outcome(&owner, "e1").as_deref(),
            Some("cancelled")
        );
        assert_eq!(executions.in_flight(&owner), 0);
    }

    #[test]
    fn other_clients_cannot_cancel_or_see_an_execution() {
        let executions = Executions::default();
        let parent = CancellationToken::new();
        let (owner, stranger) = (Owner::connection(), Owner::connection());
        let token = executions.register("e3", (&owner, "k", "s"), &parent);
        assert!(!executions.cancel(&stranger, "e3"));
        assert!(!token.is_cancelled());
        assert_eq!(executions.in_flight(&stranger), 0);
        executions.finish("e3", "completed");
        assert_eq!(executions.outcome(&stranger, "e3"), None);
        assert_eq!(
            executions.outcome(&owner, "e3").as_deref(),
            Some("completed")
        );
    }

    #[test]
    fn the_request_token_cancels_its_execution() {
        let executions = Executions::default();
        let parent = CancellationToken::new();
        let token = executions.register("e2", (&Owner::local(), "k", "s"), &parent);
        parent.cancel();
        assert!(token.is_cancelled());
    }
}
