//! Python sessions: persistence, results, errors and the /app workspace.

use sandbox_tests::Server;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn state_persists_between_calls() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let first = server
        .exec(
            "python",
            "x = 41\nimport json\ndef double(v):\n    return v * 2",
            json!({}),
        )
        .await?;
    assert!(!first.is_error, "{first:?}");
    assert!(first.is_null("result"), "statements have no result");
    let second = server
        .exec(
            "python",
            "print(x + 1)\ndouble(json.loads('[21]')[0])",
            json!({}),
        )
        .await?;
    assert!(!second.is_error, "{second:?}");
    assert_eq!(second.str("stdout"), "42\n");
    assert_eq!(second.str("result"), "42");
    assert_eq!(
        second.str("session_id"),
        first.str("session_id"),
        "same default session"
    );
    assert!(second.str("session_id").starts_with("default-python-"));
    assert!(second.u64("fuel_consumed") > 0);
    assert!(second.str("execution_id").starts_with("exec-"));
    assert!(second.value["execution_time_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(second.u64("exit_code"), 0);
    assert!(
        second.text.contains("42"),
        "the text block carries the output: {}",
        second.text
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_classified_with_the_users_line_numbers() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let syntax = server
        .exec("python", "x = 1\nif x\n    pass", json!({}))
        .await?;
    assert!(syntax.is_error);
    assert_eq!(syntax.str("error_type"), "syntax_error");
    assert_eq!(syntax.str("error_name"), "SyntaxError");
    assert!(
        syntax.str("stderr").contains("line 2"),
        "{}",
        syntax.str("stderr")
    );

    let code = "def f(d):\n    return 10 / d\n\nf(0)";
    let runtime = server.exec("python", code, json!({})).await?;
    assert!(runtime.is_error);
    assert_eq!(runtime.str("error_type"), "runtime_error");
    assert_eq!(runtime.str("error_name"), "ZeroDivisionError");
    assert_eq!(runtime.u64("exit_code"), 1);
    let stderr = runtime.str("stderr");
    assert!(
        stderr.contains("line 4, in <module>") && stderr.contains("line 2, in f"),
        "{stderr}"
    );
    assert!(
        stderr.contains("return 10 / d"),
        "source lines are shown: {stderr}"
    );
    assert!(
        !stderr.contains("driver") && !stderr.contains("wasm"),
        "no host frames: {stderr}"
    );

    let missing = server
        .exec("python", "import numpy_not_here", json!({}))
        .await?;
    assert_eq!(missing.str("error_type"), "missing_module");

    let caught = server
        .exec(
            "python",
            "try:\n    1/0\nexcept ZeroDivisionError:\n    print('caught')",
            json!({}),
        )
        .await?;
    assert!(!caught.is_error, "a caught exception is a success");
    assert_eq!(caught.str("stdout"), "caught\n");

    let exit = server
        .exec("python", "import sys\nsys.exit(3)", json!({}))
        .await?;
    assert!(exit.is_error);
    assert_eq!(exit.u64("exit_code"), 3);
    assert_eq!(exit.str("error_type"), "runtime_error", "{exit:?}");
    assert_eq!(exit.str("error_name"), "SystemExit", "{exit:?}");
    assert_eq!(exit.str("error_message"), "SystemExit: exit status 3");
    let still = server.exec("python", "print('alive')", json!({})).await?;
    assert_eq!(
        still.str("stdout"),
        "alive\n",
        "sys.exit does not end the session"
    );
    server.stop().await
}

/// A cell's value is its last statement's when that is an expression, however the cell is laid
/// out (the driver compiles most cells from their text and the rest through the AST: both ways
/// must agree), with the user's line numbers and each compile warning once.
#[tokio::test(flavor = "multi_thread")]
async fn a_cells_last_expression_is_its_result_however_the_cell_is_written() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let cells: &[(&str, Option<&str>)] = &[
        ("6 * 7", Some("42")),
        ("x = 5\n\n# the answer\nx * 2  # doubled\n\n", Some("10")),
        ("items = [\n    1,\n    2,\n]\nlen(items)", Some("2")),
        ("[\n1,\n2,\n]", Some("[1, 2]")),
        ("y = 1; y + 1", Some("2")),
        ("y = 3; z = 4", None),
        ("if y > 2:\n    w = 'big'\nelse:\n    w = 'small'", None),
        (
            "if y > 2:\n    w = 'big'\nelse:\n    w = 'small'\nw",
            Some("'big'"),
        ),
        ("for i in range(2):\n    print(i)", None),
        (
            "@staticmethod\ndef helper():\n    pass\ntype(helper).__name__",
            Some("'staticmethod'"),
        ),
        ("text = '''\nmulti\n'''\ntext.strip()", Some("'multi'")),
        ("x = 1 + \\\n2\nx", Some("3")),
        ("print('no value')", None),
        ("None", None),
    ];
    for (cell, result) in cells {
        let reply = server.exec("python", cell, json!({})).await?;
        assert!(!reply.is_error, "{cell:?}: {reply:?}");
        match result {
            Some(result) => assert_eq!(reply.str("result"), *result, "{cell:?}"),
            None => assert!(reply.is_null("result"), "{cell:?}: {reply:?}"),
        }
    }
    let failing = server
        .exec("python", "a = 1\nb = 0\n\na / b", json!({}))
        .await?;
    assert_eq!(failing.str("error_name"), "ZeroDivisionError");
    assert!(failing.str("stderr").contains("line 4"), "{failing:?}");
    let warned = server
        .exec("python", "p = '\\d'\nfor c in p:\n    pass\np", json!({}))
        .await?;
    assert!(!warned.is_error, "{warned:?}");
    assert_eq!(warned.str("result"), r"'\\d'");
    assert_eq!(
        warned.str("stderr").matches("SyntaxWarning").count(),
        1,
        "{warned:?}"
    );
    let broken = server
        .exec("python", "x = 1\nx = (\nprint(x)", json!({}))
        .await?;
    assert_eq!(broken.str("error_type"), "syntax_error", "{broken:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_is_app_and_nothing_of_the_host_leaks() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let write = server
        .exec(
            "python",
            "import os\nopen('notes.txt', 'w').write('hello')\nos.getcwd()",
            json!({}),
        )
        .await?;
    assert_eq!(write.str("result"), "'/app'", "{write:?}");
    let read = server
        .exec("python", "open('/app/notes.txt').read()", json!({}))
        .await?;
    assert_eq!(read.str("result"), "'hello'");
    let env = server
        .exec("python", "import os\nsorted(os.environ)", json!({}))
        .await?;
    // The interpreter's own settings (matplotlib's backend and cache, zoneinfo from the
    // standard library's tzdata), nothing of the host's.
    assert_eq!(
        env.str("result"),
        "['HOME', 'LANG', 'MPLBACKEND', 'MPLCONFIGDIR', 'PWD', 'PYTHONTZPATH', 'TMPDIR']",
        "no host environment"
    );
    // Host files do not exist for the guest (ENOENT), and `..` out of /app is refused
    // (ENOTCAPABLE, errno 63): both are path_restriction, and nothing of the file comes back.
    let escape = server
        .exec("python", "open('/etc/passwd').read()", json!({}))
        .await?;
    assert!(escape.is_error, "host files are not visible: {escape:?}");
    assert_eq!(escape.str("error_type"), "path_restriction", "{escape:?}");
    assert_eq!(escape.str("error_name"), "FileNotFoundError", "{escape:?}");
    assert_eq!(
        escape.str("error_message"),
        "FileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd'"
    );
    let up = server
        .exec("python", "open('../../../../etc/passwd').read()", json!({}))
        .await?;
    assert!(up.is_error, "no escape through ..: {up:?}");
    assert_eq!(up.str("error_type"), "path_restriction", "{up:?}");
    assert_eq!(up.str("error_name"), "PermissionError", "{up:?}");
    assert_eq!(
        up.str("error_message"),
        "PermissionError: [Errno 63] Operation not permitted: '../../../../etc/passwd'"
    );
    for reply in [&escape, &up] {
        assert!(
            reply.str("stdout").is_empty() && !reply.str("stderr").contains("root:"),
            "{reply:?}"
        );
    }
    let tmp = server
        .exec("python", "import tempfile\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b'x')\n    name = f.name\nname.startswith('/tmp/')", json!({}))
        .await?;
    assert_eq!(tmp.str("result"), "True", "a writable /tmp: {tmp:?}");
    let stdin = server.exec("python", "input()", json!({})).await?;
    assert_eq!(stdin.str("error_type"), "runtime_error", "{stdin:?}");
    assert_eq!(stdin.str("error_name"), "EOFError", "input() fails fast");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_output_is_captured_safely() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let code = "import os, sys\nos.write(1, b'\\xff\\xfe raw\\n')\nos.write(2, b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\n')\nprint('caf\\u00e9 \\u2603')";
    let reply = server.exec("python", code, json!({})).await?;
    assert!(!reply.is_error, "{reply:?}");
    assert!(reply.str("stdout").contains("raw") && reply.str("stdout").contains("café ☃"));
    assert!(
        reply.str("stderr").contains("jsonrpc"),
        "stays inside the result"
    );
    let after = server
        .exec("python", "print('stream intact')", json!({}))
        .await?;
    assert_eq!(after.str("stdout"), "stream intact\n");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn top_level_await_runs_like_a_notebook_cell() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // A cell that ends in an awaited coroutine returns its value, as in IPython/Jupyter.
    let first = server
        .exec(
            "python",
            "import asyncio\nasync def slow_double(v):\n    await asyncio.sleep(0.01)\n    return v * 2\nx = await slow_double(20)\nawait slow_double(x + 1)",
            json!({}),
        )
        .await?;
    assert!(!first.is_error, "{first:?}");
    assert_eq!(first.str("result"), "82");
    // Variables bound by an awaiting cell persist; gather and tasks work on the session's loop.
    let second = server
        .exec(
            "python",
            "values = await asyncio.gather(*(slow_double(i) for i in range(3)))\nprint(x, values)",
            json!({}),
        )
        .await?;
    assert!(!second.is_error, "{second:?}");
    assert_eq!(second.str("stdout"), "40 [0, 2, 4]\n");
    // A coroutine that is not awaited is a value, not run.
    let lazy = server.exec("python", "slow_double(1)", json!({})).await?;
    assert!(!lazy.is_error, "{lazy:?}");
    assert!(
        lazy.str("result").starts_with("<coroutine object"),
        "{lazy:?}"
    );
    // asyncio.run() works too (the stock loop needs a socketpair, which WASI lacks).
    let run = server
        .exec("python", "asyncio.run(slow_double(5))", json!({}))
        .await?;
    assert!(!run.is_error, "{run:?}");
    assert_eq!(run.str("result"), "10");
    // An exception inside the awaited code is the user's error, with the user's line.
    let failed = server
        .exec(
            "python",
            "async def boom():\n    await asyncio.sleep(0)\n    raise ValueError('bad')\nawait boom()",
            json!({}),
        )
        .await?;
    assert!(failed.is_error);
    assert_eq!(failed.str("error_type"), "runtime_error");
    assert_eq!(failed.str("error_name"), "ValueError");
    assert!(failed.str("stderr").contains("line 3"), "{failed:?}");
    // Waiting on something that can never complete fails fast instead of hanging.
    let stuck = server
        .exec(
            "python",
            "await asyncio.get_running_loop().create_future()",
            json!({}),
        )
        .await?;
    assert!(stuck.is_error);
    assert!(
        stuck.str("error_message").contains("wait forever"),
        "{stuck:?}"
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_interrupts_an_awaiting_cell_and_keeps_the_session() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let slept = server
        .exec(
            "python",
            "import asyncio\nkept = 7\nawait asyncio.sleep(30)",
            json!({"timeout": 1}),
        )
        .await?;
    assert!(slept.is_error);
    assert_eq!(slept.str("error_type"), "timeout");
    let after = server.exec("python", "kept", json!({})).await?;
    assert!(!after.is_error, "{after:?}");
    assert_eq!(after.str("result"), "7");
    server.stop().await
}

/// Code that closes the interpreter's stdout or stderr (`python -m json.tool` writes through
/// `with sys.stdout`, a reader like `head` stops early, a cell calls `sys.stdout.close()`) never
/// leaves them closed for the rest of the session: the next command, and the next cell, print.
#[tokio::test(flavor = "multi_thread")]
async fn closing_stdout_never_breaks_the_session() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let command = |line: &str| {
        server.call(
            "execute_command",
            json!({ "session_id": "pipes", "command": line }),
        )
    };
    let made = server
        .exec(
            "python",
            "import json\njson.dump([{'id': i, 'kind': 'click'} for i in range(5)], open('events.json', 'w'))\nkept = 'yes'",
            json!({ "session_id": "pipes" }),
        )
        .await?;
    assert!(!made.is_error, "{made:?}");
    let piped =
        command("python -m json.tool events.json | head -2; python -c 'print(\"still ok\")'")
            .await?;
    assert!(!piped.is_error, "{piped:?}");
    assert_eq!(piped.str("stdout"), "[\n    {\nstill ok\n", "{piped:?}");
    let alone =
        command("python -m json.tool events.json > pretty.json; python -c 'print(\"again\")'")
            .await?;
    assert_eq!(alone.str("stdout"), "again\n", "{alone:?}");
    let cell = server
        .exec(
            "python",
            "import sys\nprint('before')\nsys.stdout.close()\nsys.stderr.close()",
            json!({ "session_id": "pipes" }),
        )
        .await?;
    assert_eq!(cell.str("stdout"), "before\n", "{cell:?}");
    let after = server
        .exec(
            "python",
            "import sys\nprint('printed')\nprint('warned', file=sys.stderr)\nkept",
            json!({ "session_id": "pipes" }),
        )
        .await?;
    assert!(!after.is_error, "{after:?}");
    assert_eq!(after.str("stdout"), "printed\n");
    assert_eq!(after.str("stderr"), "warned\n");
    assert_eq!(after.str("result"), "'yes'", "the session kept its state");
    server.stop().await
}

/// A cell that fails in the middle of an import (an error in a package's `__init__`, or its
/// timeout) leaves the package's loaded submodules behind; importing the package again must
/// start clean, as in a new process (it raised `NameError: name 'core' is not defined`, and
/// `import asyncio` after an interrupted one "name 'base_events' is not defined").
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_import_can_be_imported_again() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let broken = server
        .exec(
            "python",
            "import os\nos.makedirs('pkg', exist_ok=True)\n\
             open('pkg/__init__.py', 'w').write('from .core import *\\nfrom .extra import *\\nVALUE = core.VALUE\\n')\n\
             open('pkg/core.py', 'w').write('VALUE = 41\\n')\n\
             open('pkg/extra.py', 'w').write('raise RuntimeError(\"extra is broken\")\\n')\n\
             import pkg",
            json!({}),
        )
        .await?;
    assert!(broken.is_error, "{broken:?}");
    assert!(
        broken.str("stderr").contains("extra is broken"),
        "{broken:?}"
    );
    let fixed = server
        .exec(
            "python",
            "open('pkg/extra.py', 'w').write('EXTRA = 1\\n')\n\
             import importlib\nimportlib.invalidate_caches()\n\
             import pkg\nprint(pkg.VALUE + pkg.EXTRA)",
            json!({}),
        )
        .await?;
    assert!(!fixed.is_error, "{fixed:?}");
    assert_eq!(fixed.str("stdout"), "42\n");
    server.stop().await
}
