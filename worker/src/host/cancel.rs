//! Cancel control: what the supervisor's `Cancel` frame sets while the guest runs. The socket
//! reader calls [`Control::request_cancel`]; the epoch callback and the sleep shadow watch the
//! flag; the shell registers the command line it runs so that a cancel reaches it and every
//! interpreter run it starts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the supervisor can tell a running worker between frames; shared with the socket reader.
#[derive(Debug, Default)]
pub struct Control {
    cancel: AtomicBool,
    current: Mutex<Option<String>>,
    /// The shell command line running, if any, and its cancel flag.
    shell: Mutex<Option<(String, Arc<AtomicBool>)>>,
}

impl Control {
    /// Asks the execution or command `execution_id` to stop; an interpreter run started by that
    /// command (id `<command id>/<n>`) stops too. Returns false when nothing matched.
    pub fn request_cancel(&self, execution_id: &str) -> bool {
        let mut found = false;
        if let Some((id, flag)) = &*self.shell.lock().unwrap_or_else(|e| e.into_inner())
            && id == execution_id
        {
            flag.store(true, Ordering::SeqCst);
            found = true;
        }
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let matches = current
            .as_deref()
            .is_some_and(|c| c == execution_id || is_run_of(c, execution_id));
        if matches {
            self.cancel.store(true, Ordering::SeqCst);
            found = true;
        }
        found
    }

    /// Registers the shell command line now running and returns its cancel flag.
    pub fn start_shell(&self, execution_id: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        *self.shell.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((execution_id.to_owned(), flag.clone()));
        flag
    }

    /// Forgets the shell command line that just ended.
    pub fn end_shell(&self) {
        *self.shell.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Makes `execution_id` the current run. A run of a shell command line (`<command>/<n>`)
    /// starts already cancelled when its command was: the cancel may have reached the worker
    /// after the shell's last look at its flag. The flag is read while `current` is locked, and
    /// `request_cancel` sets the flag before it takes that lock, so one of the two always sees
    /// the other.
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
        *current = execution_id;
        self.cancel.store(inherited, Ordering::SeqCst);
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
