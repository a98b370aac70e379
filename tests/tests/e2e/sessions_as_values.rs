//! Sessions as values: `checkpoint_session`, `restore_session` and `fork_session` on real
//! workers, for Python and JavaScript. A checkpoint captures every kind of value (lambdas,
//! closures, generators mid-iteration, class instances, imported modules) and `/app`, not
//! `/tmp`; a restore brings exactly that back and leaves the checkpoint usable; a fork, from the
//! live state or a checkpoint, evolves independently of its source. Checkpoints are the
//! session's own: listed by `get_workspace_info`, paid for from its disk quota, unknown to any
//! other session, and gone with it.

use anyhow::{Context, Result, bail, ensure};
use sandbox_tests::{Reply, Server, rpc_error_type};
use serde_json::json;

async fn checkpoint(server: &Server, session: &str, label: &str) -> Result<Reply> {
    let reply = server
        .call(
            "checkpoint_session",
            json!({ "session_id": session, "label": label }),
        )
        .await?;
    ensure!(!reply.is_error, "checkpoint of {session}: {reply:?}");
    Ok(reply)
}

async fn restore(server: &Server, session: &str, checkpoint_id: &str) -> Result<Reply> {
    server
        .call(
            "restore_session",
            json!({ "session_id": session, "checkpoint_id": checkpoint_id }),
        )
        .await
}

/// Runs `code` in `session` of `language` and returns its stdout.
async fn stdout(server: &Server, language: &str, session: &str, code: &str) -> Result<String> {
    let reply = server
        .exec(language, code, json!({ "session_id": session }))
        .await?;
    ensure!(!reply.is_error, "{code}\n-> {reply:?}");
    Ok(reply.str("stdout").to_owned())
}

pub(crate) const PYTHON_STATE: &str = r#"
import json, fractions
x = 41
add = lambda n: x + n
def make_counter():
    count = 0
    def bump():
        nonlocal count
        count += 1
        return count
    return bump
bump = make_counter(); bump()
def numbers():
    i = 0
    while True:
        i += 1
        yield i
it = numbers(); next(it); next(it)
class Point:
    def __init__(self, x, y): self.x, self.y = x, y
    def norm2(self): return self.x * self.x + self.y * self.y
p = Point(3, 4)
import numpy as np
arr = np.arange(10) * 2
half = fractions.Fraction(1, 2)
open("notes.txt", "w").write("first")
open("/tmp/scratch.txt", "w").write("scratch")
"#;

const PYTHON_CHANGE: &str = r#"
x = 1000
p = None
next(it)
bump()
later = "only after"
open("notes.txt", "w").write("second")
open("extra.txt", "w").write("new")
"#;

/// A class instance, a generator mid-iteration and a closure in JavaScript, and their probe.
pub(crate) const JS_STATE: &str = "class Box { constructor(v) { this.v = v } }\nvar box = new Box(5); function* steps() { yield 1; yield 2; yield 3 }\nvar walk = steps(); walk.next(); const plus = (n) => box.v + n;";
pub(crate) const JS_PROBE: &str = "console.log(plus(1), walk.next().value, box instanceof Box)";

pub(crate) const PYTHON_PROBE: &str = r#"
import os
print(add(1), bump(), next(it), p.norm2(), int(arr.sum()), half * 2, "later" in globals(),
      open("notes.txt").read(), sorted(f for f in os.listdir(".") if not f.startswith(".")))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn python_checkpoints_restore_every_kind_of_value_and_app_but_not_tmp() -> Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    stdout(&server, "python", "values", PYTHON_STATE).await?;
    let saved = checkpoint(&server, "values", "before the change").await?;
    let checkpoint_id = saved.str("checkpoint_id").to_owned();
    ensure!(saved.u64("bytes") > 0);
    stdout(&server, "python", "values", PYTHON_CHANGE).await?;

    let restored = restore(&server, "values", &checkpoint_id).await?;
    ensure!(!restored.is_error, "{restored:?}");
    let expected = "42 2 3 25 90 1 False first ['notes.txt']\n";
    ensure!(stdout(&server, "python", "values", PYTHON_PROBE).await? == expected);
    // /tmp is scratch: what is there now stays, whatever the checkpoint saw.
    let tmp = stdout(
        &server,
        "python",
        "values",
        "print(open('/tmp/scratch.txt').read())",
    )
    .await?;
    ensure!(tmp == "scratch\n", "{tmp:?}");

    // The checkpoint stays valid after a restore: the same state comes back again.
    stdout(&server, "python", "values", PYTHON_CHANGE).await?;
    ensure!(!restore(&server, "values", &checkpoint_id).await?.is_error);
    ensure!(stdout(&server, "python", "values", PYTHON_PROBE).await? == expected);

    // Listed with its label, and its disk counted in the quota.
    let info = server
        .call("get_workspace_info", json!({ "session_id": "values" }))
        .await?;
    let listed = info.list("checkpoints");
    ensure!(listed.len() == 1, "{listed:?}");
    ensure!(listed[0]["checkpoint_id"] == checkpoint_id.as_str());
    ensure!(listed[0]["label"] == "before the change");
    ensure!(info.field("disk_usage")["bytes_used"].as_u64() >= listed[0]["bytes"].as_u64());
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn forks_start_from_the_live_state_or_a_checkpoint_and_evolve_independently() -> Result<()> {
    let server = Server::start().await?;
    stdout(&server, "python", "origin", PYTHON_STATE).await?;
    let saved = checkpoint(&server, "origin", "base").await?;
    let checkpoint_id = saved.str("checkpoint_id").to_owned();
    stdout(&server, "python", "origin", PYTHON_CHANGE).await?;

    // From the live state: the change is there, with its files.
    let live = server
        .call(
            "fork_session",
            json!({ "session_id": "origin", "new_session_id": "live-copy" }),
        )
        .await?;
    ensure!(
        !live.is_error && live.str("session_id") == "live-copy",
        "{live:?}"
    );
    ensure!(live.str("forked_from") == "origin");
    let probe = "import os\nprint(x, p, later, open('notes.txt').read(), sorted(f for f in os.listdir('.') if not f.startswith('.')))";
    let changed = "1000 None only after second ['extra.txt', 'notes.txt']\n";
    ensure!(stdout(&server, "python", "live-copy", probe).await? == changed);

    // From the checkpoint, with a generated id: the state before the change.
    let from_checkpoint = server
        .call(
            "fork_session",
            json!({ "session_id": "origin", "checkpoint_id": checkpoint_id }),
        )
        .await?;
    ensure!(!from_checkpoint.is_error, "{from_checkpoint:?}");
    let copy = from_checkpoint.str("session_id").to_owned();
    ensure!(copy != "origin" && copy != "live-copy");
    let expected = "42 2 3 25 90 1 False first ['notes.txt']\n";
    ensure!(stdout(&server, "python", &copy, PYTHON_PROBE).await? == expected);

    // Independent: what one does, the others never see.
    stdout(
        &server,
        "python",
        "live-copy",
        "x = -1\nopen('notes.txt', 'w').write('fork')",
    )
    .await?;
    let origin = stdout(
        &server,
        "python",
        "origin",
        "print(x, open('notes.txt').read())",
    )
    .await?;
    ensure!(origin == "1000 second\n", "{origin:?}");
    let other = stdout(
        &server,
        "python",
        &copy,
        "print(x, open('notes.txt').read())",
    )
    .await?;
    ensure!(other == "41 first\n", "{other:?}");
    // A fork has no checkpoints of its own, and the TTL of a new session, whatever the
    // source's (a short one here).
    let info = server
        .call("get_workspace_info", json!({ "session_id": "live-copy" }))
        .await?;
    ensure!(info.list("checkpoints").is_empty());
    let short = server
        .call(
            "create_session",
            json!({ "session_id": "short-lived", "language": "python", "ttl_seconds": 30 }),
        )
        .await?;
    ensure!(!short.is_error, "{short:?}");
    let forked = server
        .call(
            "fork_session",
            json!({ "session_id": "short-lived", "new_session_id": "short-fork" }),
        )
        .await?;
    ensure!(!forked.is_error, "{forked:?}");
    let expiry = |reply: &Reply| {
        chrono::DateTime::parse_from_rfc3339(reply.str("expires_at"))
            .map(|at| (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds())
    };
    let fork_info = server
        .call("get_workspace_info", json!({ "session_id": "short-fork" }))
        .await?;
    let source_info = server
        .call("get_workspace_info", json!({ "session_id": "short-lived" }))
        .await?;
    let (fork_left, source_left) = (expiry(&fork_info)?, expiry(&source_info)?);
    ensure!(
        source_left <= 30 && fork_left > 60,
        "source expires in {source_left} s, its fork in {fork_left} s"
    );

    // A new_session_id that exists is an invalid argument, and nothing is created.
    let taken = server
        .call_refused(
            "fork_session",
            json!({ "session_id": "origin", "new_session_id": "live-copy" }),
        )
        .await?;
    ensure!(
        rpc_error_type(&taken) == Some("invalid_argument"),
        "{taken:?}"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_checkpoints_keep_closures_generators_and_classes() -> Result<()> {
    let server = Server::start().await?;
    let state = "let x = 41; const add = (n) => x + n;\n\
                 class P { constructor(v) { this.v = v } get twice() { return this.v * 2 } }\n\
                 var p = new P(21); function* counter() { let i = 0; while (true) yield ++i }\n\
                 var it = counter(); it.next(); writeText('/app/notes.txt', 'first');";
    stdout(&server, "javascript", "js", state).await?;
    let saved = checkpoint(&server, "js", "js base").await?;
    let checkpoint_id = saved.str("checkpoint_id").to_owned();
    stdout(
        &server,
        "javascript",
        "js",
        "x = 1000; p = null; it.next(); var later = 1; writeText('/app/notes.txt', 'second')",
    )
    .await?;
    let fork = server
        .call(
            "fork_session",
            json!({ "session_id": "js", "new_session_id": "js-fork" }),
        )
        .await?;
    ensure!(!fork.is_error, "{fork:?}");

    ensure!(!restore(&server, "js", &checkpoint_id).await?.is_error);
    let probe = "console.log([add(1), p.twice, it.next().value, typeof later, readText('/app/notes.txt')].join())";
    let back = stdout(&server, "javascript", "js", probe).await?;
    ensure!(back == "42,42,2,undefined,first\n", "{back:?}");
    let forked = stdout(
        &server,
        "javascript",
        "js-fork",
        "console.log([x, p, it.next().value, later, readText('/app/notes.txt')].join())",
    )
    .await?;
    ensure!(forked == "1000,,3,1,second\n", "{forked:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn checkpoints_belong_to_their_session_and_count_against_its_quota() -> Result<()> {
    let server = Server::start_with_env(&[
        ("SANDBOX_DEFAULT_DISK_QUOTA_BYTES", "6000000"),
        ("SANDBOX_DEFAULT_DISK_QUOTA_FILES", "200"),
    ])
    .await?;
    stdout(&server, "python", "mine", "y = 1").await?;
    stdout(&server, "python", "other", "y = 2").await?;
    let saved = checkpoint(&server, "mine", "small").await?;
    let checkpoint_id = saved.str("checkpoint_id").to_owned();

    // Another session's checkpoint answers like a missing one, and changes nothing.
    let foreign = restore(&server, "other", &checkpoint_id).await?;
    ensure!(foreign.is_error, "{foreign:?}");
    ensure!(foreign.str("error_type") == "invalid_argument");
    let missing = restore(&server, "other", "cp-0000000000").await?;
    ensure!(
        missing
            .str("error_message")
            .replace("cp-0000000000", &checkpoint_id)
            == foreign.str("error_message")
    );
    ensure!(stdout(&server, "python", "other", "print(y)").await? == "2\n");
    let forked = server
        .call(
            "fork_session",
            json!({ "session_id": "other", "checkpoint_id": checkpoint_id }),
        )
        .await?;
    ensure!(forked.is_error && forked.str("error_type") == "invalid_argument");

    // A checkpoint whose copy of /app does not fit the quota is refused and leaves nothing:
    // /app filled so that it fits once (beside the first checkpoint), not twice.
    const QUOTA: u64 = 6_000_000;
    let first = saved.u64("bytes");
    let big = QUOTA / 2 - first + 200_000;
    stdout(
        &server,
        "python",
        "mine",
        &format!("open('big.bin', 'wb').write(b'x' * {big})"),
    )
    .await?;
    let over = server
        .call("checkpoint_session", json!({ "session_id": "mine" }))
        .await?;
    ensure!(
        over.is_error && over.str("error_type") == "disk_quota",
        "{over:?}"
    );
    let info = server
        .call("get_workspace_info", json!({ "session_id": "mine" }))
        .await?;
    ensure!(info.list("checkpoints").len() == 1);
    // The first checkpoint still counts: the guest cannot write into its share of the quota.
    let more = QUOTA - first - big + 100_000;
    let full = server
        .exec(
            "python",
            &format!("open('more.bin', 'wb').write(b'y' * {more})"),
            json!({ "session_id": "mine" }),
        )
        .await?;
    ensure!(
        full.is_error && full.str("error_type") == "disk_quota",
        "{full:?}"
    );

    // Destroyed with the session: a new session of the same id has none.
    server
        .call("destroy_session", json!({ "session_id": "mine" }))
        .await?;
    stdout(&server, "python", "mine", "y = 3").await?;
    let gone = restore(&server, "mine", &checkpoint_id).await?;
    ensure!(gone.is_error && gone.str("error_type") == "invalid_argument");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_says_which_open_files_a_restore_closes() -> Result<()> {
    let server = Server::start().await?;
    stdout(
        &server,
        "python",
        "open-files",
        "log = open('log.txt', 'w')\nlog.write('kept')\nlog.flush()",
    )
    .await?;
    let saved = checkpoint(&server, "open-files", "with a file open").await?;
    let note = saved.field("note").as_str().unwrap_or_default().to_owned();
    ensure!(note.contains("closed after a restore"), "{:?}", saved.value);
    let restored = restore(&server, "open-files", saved.str("checkpoint_id")).await?;
    ensure!(!restored.is_error);
    // The file object is back but its descriptor is held closed: Python says so, and a file
    // opened now never shares the stale object's number.
    let stale = server
        .exec(
            "python",
            "f = open('other.txt', 'w')\nlog.write('more')\nlog.flush()",
            json!({ "session_id": "open-files" }),
        )
        .await?;
    ensure!(
        stale.is_error && stale.str("error_type") == "runtime_error",
        "{stale:?}"
    );
    let read = stdout(
        &server,
        "python",
        "open-files",
        "f.write('own'); f.close()\nprint(open('log.txt').read(), open('other.txt').read())",
    )
    .await?;
    ensure!(read == "kept own\n", "{read:?}");
    server.stop().await
}

/// Every kind of value survives a worker killed between calls, in both languages: the next
/// call resumes the state after the last call that returned and says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_worker_loses_no_kind_of_value() -> Result<()> {
    let server = Server::start().await?;
    stdout(&server, "python", "survivor", PYTHON_STATE).await?;
    stdout(&server, "python", "survivor", "bump()").await?;
    server.kill_worker_of("survivor").await?;
    let probe = server
        .exec("python", PYTHON_PROBE, json!({ "session_id": "survivor" }))
        .await?;
    ensure!(!probe.is_error, "{probe:?}");
    ensure!(probe.str("state_after_restart") == "resumed", "{probe:?}");
    // bump() ran once more before the kill; nothing else changed.
    ensure!(
        probe.str("stdout") == "42 3 3 25 90 1 False first ['notes.txt']\n",
        "{probe:?}"
    );

    stdout(&server, "javascript", "js-survivor", JS_STATE).await?;
    server.kill_worker_of("js-survivor").await?;
    let js = server
        .exec(
            "javascript",
            JS_PROBE,
            json!({ "session_id": "js-survivor" }),
        )
        .await?;
    ensure!(js.str("stdout") == "6 2 true\n", "{js:?}");
    ensure!(js.str("state_after_restart") == "resumed", "{js:?}");
    server.stop().await
}

/// Kills `session`'s worker and overwrites its state log with junk.
async fn spoil_state(server: &Server, session: &str) -> Result<()> {
    server.kill_worker_of(session).await?;
    let app = server
        .workspace_of(session)
        .context("the session's directory")?;
    let log = app
        .parent()
        .context("the session's directory")?
        .join("state/log");
    let mut junk = 24u64.to_le_bytes().to_vec();
    junk.extend_from_slice(b"not a layer of any state");
    // The last call's layers are written just behind its answer (a full layer replaces the
    // file, the next is appended): on a loaded machine they can land after the junk. So the
    // log is first left until it stops changing, then the junk is written until it stays.
    let pause = std::time::Duration::from_millis(200);
    let stamp = |log: &std::path::Path| {
        std::fs::metadata(log)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let mut seen = stamp(&log);
    for _ in 0..50 {
        tokio::time::sleep(pause).await;
        let now = stamp(&log);
        if now.is_some() && now == seen {
            break;
        }
        seen = now;
    }
    for _ in 0..50 {
        std::fs::write(&log, &junk)?;
        tokio::time::sleep(pause).await;
        if std::fs::read(&log)? == junk {
            return Ok(());
        }
    }
    bail!("the session's log kept changing after its worker was killed")
}

/// A worker started to resume a state waits for it instead of setting a fresh session up; when
/// the state turns out unusable (here: a log overwritten with junk while the session had no
/// worker), the session starts afresh on that worker, fully set up (its packages importable,
/// its context's globals there), and the call says the state was lost.
#[tokio::test]
async fn a_state_the_new_worker_refuses_starts_the_session_afresh_and_set_up() -> Result<()> {
    let server = Server::start().await?;
    // Per language: a variable, a probe that needs the set-up, what it prints afresh, and a
    // call after it.
    let cases = [
        (
            "python",
            "x = 41",
            "import numpy\nprint('x' in globals(), numpy.arange(3).sum())",
            "False 3\n",
            "x = 1\nprint(x + 1)",
        ),
        (
            "javascript",
            "var x = 41",
            "console.log(typeof x, JSON.stringify([1, 2].map((n) => n * 2)))",
            "undefined [2,4]\n",
            "var y = 1; console.log(y + 1)",
        ),
    ];
    for (language, set, probe, fresh, next) in cases {
        let session = format!("spoiled-{language}");
        stdout(&server, language, &session, set).await?;
        spoil_state(&server, &session).await?;
        let after = server
            .exec(language, probe, json!({ "session_id": session }))
            .await?;
        ensure!(!after.is_error, "{language}: {after:?}");
        ensure!(after.str("stdout") == fresh, "{language}: {after:?}");
        ensure!(
            after.str("state_after_restart") == "lost",
            "{language}: {after:?}"
        );
        let again = stdout(&server, language, &session, next).await?;
        ensure!(again == "2\n", "{language}: {again:?}");
    }
    server.stop().await
}

/// The number of layers in a session's state log (`state/log`: each a `u64` length, then it).
fn layers_in_log(server: &Server, session: &str) -> Result<usize> {
    let app = server
        .workspace_of(session)
        .context("the session's directory")?;
    let path = app
        .parent()
        .context("the session's directory")?
        .join("state/log");
    // A session that is not durable has its layers written just after its answers: a read
    // can land in the middle of an append. A log that never parses whole is cut short.
    for _ in 0..100 {
        let log = std::fs::read(&path)?;
        let (mut at, mut count) = (0usize, 0usize);
        while at + 8 <= log.len() {
            let len = u64::from_le_bytes(log[at..at + 8].try_into()?) as usize;
            at += 8 + len;
            count += 1;
        }
        if at == log.len() {
            return Ok(count);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    bail!("a log cut short for a second")
}

/// Calls that each change megabytes leave a layer each in the session's log; the server
/// compacts the log into one layer off the call path (newer pages winning over older ones),
/// and a session resumed from the compacted log has exactly its state.
#[tokio::test]
async fn a_long_log_is_compacted_and_still_resumes_the_exact_state() -> Result<()> {
    let server = Server::start().await?;
    stdout(
        &server,
        "python",
        "grower",
        "import hashlib, os\nblobs = []\ndef digest(): return hashlib.sha256(b''.join(blobs)).hexdigest()",
    )
    .await?;
    let calls = 24;
    for call in 0..calls {
        // New random megabytes each call, and the first blob rewritten: the newest wins.
        let code =
            format!("blobs.append(os.urandom(1 << 19)); blobs[0] = os.urandom(1 << 19); {call}");
        stdout(&server, "python", "grower", &code).await?;
    }
    let before = stdout(&server, "python", "grower", "print(digest(), len(blobs))").await?;
    ensure!(before.ends_with(&format!(" {calls}\n")), "{before}");
    let mut layers = layers_in_log(&server, "grower")?;
    for _ in 0..100 {
        if layers < calls / 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        layers = layers_in_log(&server, "grower")?;
    }
    ensure!(
        layers < calls / 2,
        "{layers} layers after {calls} calls: never compacted"
    );

    server.kill_worker_of("grower").await?;
    let after = server
        .exec(
            "python",
            "print(digest(), len(blobs))",
            json!({ "session_id": "grower" }),
        )
        .await?;
    ensure!(after.str("state_after_restart") == "resumed", "{after:?}");
    ensure!(after.str("stdout") == before, "{after:?} != {before}");
    server.stop().await
}
