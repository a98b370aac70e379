//! Output caps at their edges, for both streams, both interpreters and `execute_command`:
//! exactly the cap is kept whole with both flags false; one byte more is cut to the cap and
//! flagged on that stream only; a cut through a UTF-8 character leaves valid text ending in one
//! U+FFFD; and truncation is reported with advice, never as an error.

use sandbox_tests::{Reply, Server};
use serde_json::json;

/// The small flavor's cap for stdout and for stderr.
const CAP: usize = 1 << 20;

/// Checks one answer: success, the exact lengths kept and the two flags.
fn assert_caps(reply: &Reply, stdout: usize, stderr: usize, flags: (bool, bool), context: &str) {
    assert!(
        !reply.is_error,
        "{context}: truncation is not an error: {:?}",
        reply.value["error_message"]
    );
    assert_eq!(
        reply.str("stdout").len(),
        stdout,
        "{context}: stdout length"
    );
    assert_eq!(
        reply.str("stderr").len(),
        stderr,
        "{context}: stderr length"
    );
    assert_eq!(
        (
            reply.bool("stdout_truncated"),
            reply.bool("stderr_truncated")
        ),
        flags,
        "{context}: (stdout_truncated, stderr_truncated)"
    );
    let advised = !reply.list("actionable_guidance").is_empty();
    assert_eq!(
        advised,
        flags.0 || flags.1,
        "{context}: advice comes with truncation only: {:?}",
        reply.value["actionable_guidance"]
    );
    assert_eq!(
        reply.text.contains("[... output truncated]"),
        flags.0 || flags.1 || stdout > 8 * 1024 || stderr > 8 * 1024,
        "{context}: the text block says when it shows only a part"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn python_output_at_and_past_the_cap() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let run = |code: String| {
        let server = &server;
        async move {
            server
                .exec("python", &code, json!({ "session_id": "caps" }))
                .await
        }
    };
    let write = |out: usize, err: usize| {
        format!("import sys\nsys.stdout.write('o' * {out})\nsys.stderr.write('e' * {err})\n'done'")
    };

    let at = run(write(CAP, CAP)).await?;
    assert_caps(&at, CAP, CAP, (false, false), "both exactly at the cap");
    assert_eq!(at.str("result"), "'done'");
    assert!(at.str("stdout").bytes().all(|b| b == b'o'));

    let under = run(write(CAP - 1, 0)).await?;
    assert_caps(&under, CAP - 1, 0, (false, false), "just under the cap");

    let stdout_over = run(write(CAP + 1, 10)).await?;
    assert_caps(&stdout_over, CAP, 10, (true, false), "stdout one byte over");
    assert_eq!(
        stdout_over.str("result"),
        "'done'",
        "the code ran to its end"
    );

    let stderr_over = run(write(10, CAP + 1)).await?;
    assert_caps(&stderr_over, 10, CAP, (false, true), "stderr one byte over");
    assert!(stderr_over.str("stderr").bytes().all(|b| b == b'e'));

    // 'é' is two bytes; the cap falls between them.
    let cut = run(format!(
        "import sys\nsys.stdout.write('x' * {} + '\u{e9}' + 'tail')",
        CAP - 1
    ))
    .await?;
    assert!(
        cut.bool("stdout_truncated"),
        "{:?}",
        cut.value["stdout_truncated"]
    );
    let stdout = cut.str("stdout");
    assert_eq!(stdout.len(), CAP - 1 + '\u{fffd}'.len_utf8());
    assert!(stdout[..CAP - 1].bytes().all(|b| b == b'x'));
    assert_eq!(
        &stdout[CAP - 1..],
        "\u{fffd}",
        "half a character becomes one replacement character, nothing after it"
    );

    let after = run("print('small')".into()).await?;
    assert_caps(&after, 6, 0, (false, false), "the next call starts afresh");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_output_at_and_past_the_cap() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    let run = |code: String| {
        let server = &server;
        async move {
            server
                .exec("javascript", &code, json!({ "session_id": "jcaps" }))
                .await
        }
    };
    let write = |out: usize, err: usize| {
        format!("std.out.puts('o'.repeat({out})); std.err.puts('e'.repeat({err})); 'done'")
    };
    let at = run(write(CAP, CAP)).await?;
    assert_caps(&at, CAP, CAP, (false, false), "both exactly at the cap");
    assert_eq!(at.str("result"), "\"done\"");
    let over = run(write(CAP + 1, CAP + 1)).await?;
    assert_caps(&over, CAP, CAP, (true, true), "both one byte over");
    // '☃' is three bytes; the cap keeps two of them.
    let cut = run(format!(
        "std.err.puts('x'.repeat({}) + '\u{2603}')",
        CAP - 2
    ))
    .await?;
    assert!(cut.bool("stderr_truncated"));
    let stderr = cut.str("stderr");
    assert_eq!(stderr.len(), CAP - 2 + 3);
    assert!(stderr.ends_with("xx\u{fffd}"), "{:?}", &stderr[CAP - 8..]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn execute_command_output_is_capped_the_same_way() -> anyhow::Result<()> {
    let server = Server::start().await?;
    server.forbid_own_host_paths();
    server
        .python(
            "sh",
            &format!(
                "open('cap.txt', 'w').write('c' * {CAP})\nopen('over.txt', 'w').write('v' * {})\nopen('utf8.txt', 'w').write('x' * {} + '\u{e9}')",
                CAP + 1,
                CAP - 1
            ),
        )
        .await?;
    let run = |command: &str| {
        server.call(
            "execute_command",
            json!({ "command": command, "session_id": "sh" }),
        )
    };
    let at = run("cat cap.txt; cat cap.txt >&2").await?;
    assert_caps(&at, CAP, CAP, (false, false), "cat of exactly the cap");
    assert_eq!(at.u64("exit_code"), 0);
    let over = run("cat over.txt").await?;
    assert_caps(&over, CAP, 0, (true, false), "cat one byte over");
    assert_eq!(over.u64("exit_code"), 0, "a capped command still succeeds");
    let err_over = run("cat over.txt 1>&2; echo fine").await?;
    assert_caps(&err_over, 5, CAP, (false, true), "stderr one byte over");
    assert_eq!(err_over.str("stdout"), "fine\n");
    let cut = run("cat utf8.txt").await?;
    assert!(cut.bool("stdout_truncated"));
    assert!(
        cut.str("stdout").ends_with("x\u{fffd}") && cut.str("stdout").len() == CAP - 1 + 3,
        "{:?}",
        &cut.str("stdout")[CAP - 8..]
    );
    let piped = run("cat over.txt | wc -c").await?;
    assert!(!piped.is_error, "{piped:?}");
    assert_eq!(
        piped.str("stdout").trim(),
        (CAP + 1).to_string(),
        "the cap applies to what the client gets, not to pipes between commands"
    );
    server.stop().await
}
