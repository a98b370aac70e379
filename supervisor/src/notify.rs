//! Tells the service manager how the server is doing, for the `Type=notify` systemd unit
//! (`supervisor/sandbox-mcp.service`): `READY=1` once clients can be served, `STATUS=` lines
//! that `systemctl status` shows, and `STOPPING=1` when shutdown begins. The messages go to the
//! datagram socket named by `NOTIFY_SOCKET` (through the `sd-notify` crate); without that
//! variable (a server not started by systemd, or a stdio server) every call does nothing.
//!
//! A notification that cannot be delivered is logged, never returned: the server serves its
//! clients either way, and a unit that never hears `READY=1` is failed by systemd at its start
//! timeout, which names the problem better than a server that exits itself.
//!
//! Only this process (the unit's main process, `NotifyAccess=main`) sends: the workers are
//! spawned with a cleared environment, so they never see `NOTIFY_SOCKET`.

use std::borrow::Cow;

use sd_notify::NotifyState;

/// Tells the service manager the server is ready, and why in words (`systemctl status` shows
/// `status`). Call it once: listening, interpreters compiled, a worker can start.
pub fn ready(status: &str) {
    let status = one_line(status);
    send(&[NotifyState::Ready, NotifyState::Status(&status)]);
}

/// Shows `status` as the service's state in `systemctl status` (progress while starting, or a
/// problem while running), without changing the state itself.
pub fn status(status: &str) {
    let status = one_line(status);
    send(&[NotifyState::Status(&status)]);
}

/// Tells the service manager that shutdown has begun (workers are being stopped and the state
/// directory removed), so `systemctl` shows "deactivating" rather than a hung service.
pub fn stopping() {
    send(&[
        NotifyState::Stopping,
        NotifyState::Status("stopping the workers and removing the state directory"),
    ]);
}

fn send(states: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(states) {
        let first = states.first().map(ToString::to_string).unwrap_or_default();
        tracing::warn!(error = %e, state = %first, "cannot notify the service manager");
    }
}

/// `text` as one line: a notification is a list of newline-separated `KEY=value` assignments, so
/// a newline in a status (from an error message, say) would end it and start an assignment of
/// its own.
fn one_line(text: &str) -> Cow<'_, str> {
    if text.contains(['\n', '\r']) {
        Cow::Owned(
            text.split(['\n', '\r'])
                .filter(|part| !part.trim().is_empty())
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("; "),
        )
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixDatagram;
    use std::process::Command;
    use std::time::Duration;

    use super::*;

    /// Marks the child process of [`notifications_reach_the_socket_named_by_notify_socket`].
    const CHILD_MARKER: &str = "SANDBOX_NOTIFY_TEST_CHILD";

    /// Runs in a child process with its own `NOTIFY_SOCKET`: the variable is read from the
    /// environment, which a test must not change in a process whose other threads read it.
    #[test]
    #[ignore = "run by notifications_reach_the_socket_named_by_notify_socket in a child process"]
    fn child_sends_ready_status_and_stopping() {
        assert!(
            std::env::var_os(CHILD_MARKER).is_some(),
            "only meaningful as the child of notifications_reach_the_socket_named_by_notify_socket"
        );
        status("compiling the interpreters");
        ready("serving MCP at http://127.0.0.1:8765/mcp\npython, javascript");
        stopping();
    }

    fn run_child(notify_socket: Option<&std::path::Path>) -> std::process::Output {
        let mut child = Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "notify::tests::child_sends_ready_status_and_stopping",
            ])
            .args(["--ignored", "--test-threads=1"])
            .env(CHILD_MARKER, "1")
            .env_remove("NOTIFY_SOCKET");
        if let Some(socket) = notify_socket {
            child.env("NOTIFY_SOCKET", socket);
        }
        let output = child.output().unwrap();
        assert!(
            output.status.success(),
            "child failed: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        output
    }

    #[test]
    fn notifications_reach_the_socket_named_by_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        run_child(Some(&path));
        let mut received = Vec::new();
        let mut buffer = [0u8; 4096];
        for _ in 0..3 {
            let n = socket.recv(&mut buffer).unwrap();
            received.push(String::from_utf8(buffer[..n].to_vec()).unwrap());
        }
        assert_eq!(
            received,
            [
                "STATUS=compiling the interpreters\n",
                "READY=1\nSTATUS=serving MCP at http://127.0.0.1:8765/mcp; python, javascript\n",
                "STOPPING=1\nSTATUS=stopping the workers and removing the state directory\n",
            ]
        );
    }

    #[test]
    fn a_missing_or_unreachable_socket_does_not_stop_the_server() {
        run_child(None);
        let dir = tempfile::tempdir().unwrap();
        run_child(Some(&dir.path().join("nobody-listens")));
    }

    #[test]
    fn a_status_stays_one_assignment() {
        assert!(matches!(one_line("all good"), Cow::Borrowed("all good")));
        assert_eq!(
            one_line("precompile failed:\r\n  no CPython\nREADY=1\n"),
            "precompile failed:; no CPython; READY=1"
        );
        assert_eq!(one_line("\n\n"), "");
    }
}
