//! Cancel control: what the supervisor's `Cancel` frame sets while the guest runs. The socket
//! reader calls [`Control::request_cancel`]; the epoch callback and the sleep shadow watch the
//! flag; the shell registers the command line it runs so that a cancel reaches it and every
//! interpreter run it starts.
//!
//! A cancel can overtake its execution: the reader thread reads `Execute` and hands it to the
//! guest thread, then reads the `Cancel` behind it, possibly before the guest thread has begun
//! that run (on a loaded host, easily). Such a cancel is kept: the guest thread answers that job
//! without running it ([`Control::cancelled_before_start`]), or, when the cancel lands between
//! that look and the run's start, the run starts cancelled. The three locks are always taken in
//! one order (current, shell, early), and every decision holds `current`, so a cancel and the
//! start of its run never miss each other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the supervisor can tell a running worker between frames; shared with the socket reader.
#[derive(Debug, Default)]
pub struct Control {
    cancel: AtomicBool,
    current: Mutex<Option<String>>,
    /// The shell command line running, if any, and its cancel flag.
    shell: Mutex<Option<(String, Arc<AtomicBool>)>>,
    /// The last cancel that matched nothing running: its run may not have begun yet. One slot
    /// is enough, as the supervisor runs one execution at a time and cancels only the one it
    /// waits for: an older entry names a run that has ended (ids are never reused).
    early: Mutex<Option<String>>,
}

impl Control {
    /// Asks the execution or command `execution_id` to stop; an interpreter run started by that
    /// command (id `<command id>/<n>`) stops too. Returns false when nothing running matched:
    /// then the cancel is kept for a run of that id that has not begun yet.
    pub fn request_cancel(&self, execution_id: &str) -> bool {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = false;
        if let Some((id, flag)) = &*self.shell.lock().unwrap_or_else(|e| e.into_inner())
            && id == execution_id
        {
            flag.store(true, Ordering::SeqCst);
            found = true;
        }
        let matches = current
            .as_deref()
            .is_some_and(|c| c == execution_id || is_run_of(c, execution_id));
        if matches {
            self.cancel.store(true, Ordering::SeqCst);
            found = true;
        }
        if !found {
            *self.early.lock().unwrap_or_else(|e| e.into_inner()) = Some(execution_id.to_owned());
        }
        found
    }

    /// Whether a cancel for `execution_id` came before its run began (and forgets it): the
    /// guest thread asks as it takes a job, and answers such a job without running it.
    pub fn cancelled_before_start(&self, execution_id: &str) -> bool {
        let _current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        self.take_early(execution_id)
    }

    /// Whether a cancel for `execution_id` came before its run began (and forgets it); the
    /// caller holds `current`.
    fn take_early(&self, execution_id: &str) -> bool {
        let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
        let overtaken = early.as_deref() == Some(execution_id);
        if overtaken {
            *early = None;
        }
        overtaken
    }

    /// Registers the shell command line now running and returns its cancel flag, already set
    /// when the command's cancel came first.
    pub fn start_shell(&self, execution_id: &str) -> Arc<AtomicBool> {
        let _current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let mut shell = self.shell.lock().unwrap_or_else(|e| e.into_inner());
        let flag = Arc::new(AtomicBool::new(self.take_early(execution_id)));
        *shell = Some((execution_id.to_owned(), flag.clone()));
        flag
    }

    /// Forgets the shell command line that just ended.
    pub fn end_shell(&self) {
        *self.shell.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Makes `execution_id` the current run. It starts already cancelled when its cancel came
    /// first, or when it is a run of a shell command line (`<command>/<n>`) whose command was
    /// cancelled (the cancel may have reached the worker after the shell's last look at its
    /// flag).
    pub(super) fn set_current(&self, execution_id: Option<String>) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let inherited = execution_id.as_deref().is_some_and(|id| {
            self.shell
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .is_some_and(|(command, flag)| {
                    flag.load(Ordering::SeqCst) && is_run_of(id, command)
                })
        });
        let overtaken = execution_id
            .as_deref()
            .is_some_and(|id| self.take_early(id));
        *current = execution_id;
        self.cancel.store(inherited || overtaken, Ordering::SeqCst);
    }

    /// Whether the current run was asked to stop.
    pub(super) fn cancel_requested(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// The id of the current run.
    #[cfg(test)]
    pub(super) fn current(&self) -> Option<String> {
        self.current.lock().unwrap().clone()
    }
}

/// Whether `run` (`<command>/<n>`) is an interpreter run started by the command line `command`.
fn is_run_of(run: &str, command: &str) -> bool {
    run.strip_prefix(command)
        .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_the_execution_and_its_interpreter_runs_only() {
        let control = Control::default();
        assert!(!control.request_cancel("exec-1"), "nothing runs");
        control.set_current(Some("exec-1/2".into()));
        assert!(!control.request_cancel("exec-10"), "not a prefix match");
        assert!(!control.request_cancel("exec-1/"), "not a child of exec-1/");
        assert!(!control.cancel_requested());
        assert!(
            control.request_cancel("exec-1"),
            "a command's run is its child"
        );
        assert!(control.cancel_requested());
        // The next execution starts uncancelled.
        control.set_current(Some("exec-2".into()));
        assert!(!control.cancel_requested());
        assert!(control.request_cancel("exec-2"));

        let flag = control.start_shell("exec-3");
        assert!(control.request_cancel("exec-3"), "the shell's own line");
        assert!(flag.load(Ordering::SeqCst));
        control.end_shell();
        control.set_current(None);
        assert!(!control.request_cancel("exec-3"), "ended");
    }

    /// A cancel read before its run began (the guest thread had not picked the job up yet) is
    /// kept: that run starts cancelled, and only that run. A command line cancelled before it
    /// started starts with its flag set.
    #[test]
    fn a_cancel_that_overtakes_its_run_is_kept_for_it() {
        let control = Control::default();
        control.set_current(Some("exec-1".into()));
        control.set_current(None);
        assert!(
            !control.request_cancel("exec-1"),
            "a late cancel matches nothing"
        );
        assert!(!control.request_cancel("exec-2"), "exec-2 has not begun");
        control.set_current(Some("exec-2".into()));
        assert!(control.cancel_requested(), "exec-2 starts cancelled");
        control.set_current(None);
        control.set_current(Some("exec-2/1".into()));
        assert!(!control.cancel_requested(), "kept for one run only");
        control.set_current(Some("exec-3".into()));
        assert!(!control.cancel_requested(), "nor for another");
        control.set_current(None);

        assert!(
            !control.request_cancel("exec-cmd"),
            "the command has not begun"
        );
        let flag = control.start_shell("exec-cmd");
        assert!(flag.load(Ordering::SeqCst), "the command starts cancelled");
        control.set_current(Some("exec-cmd/1".into()));
        assert!(control.cancel_requested(), "and so do its runs");
        control.end_shell();
        control.set_current(None);
        assert!(!control.start_shell("exec-cmd2").load(Ordering::SeqCst));
    }

    /// A cancel that reaches the worker while a command line is between two commands is not
    /// lost: the next interpreter run of that command starts cancelled; other runs do not.
    #[test]
    fn a_commands_cancel_reaches_a_run_that_starts_after_it() {
        let control = Control::default();
        let _flag = control.start_shell("exec-cmd");
        assert!(control.request_cancel("exec-cmd"));
        control.set_current(Some("exec-cmd/1".into()));
        assert!(control.cancel_requested());
        control.set_current(Some("exec-cmdx/1".into()));
        assert!(!control.cancel_requested());
        control.set_current(Some("exec-other".into()));
        assert!(!control.cancel_requested());
        control.end_shell();
        control.set_current(Some("exec-cmd/2".into()));
        assert!(!control.cancel_requested());
    }
}
