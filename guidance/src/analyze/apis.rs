//! Host APIs a snippet reaches for that the sandbox does not have: processes, threads, the
//! network and stdin in Python; Node.js and browser globals, the network, processes and the
//! `[value, error]` pairs of QuickJS's `os` functions in JavaScript.

use std::collections::HashSet;

use sandbox_protocol::Language;

use super::super::scan::Kind;
use super::facts::CodeFacts;
use super::findings::Analysis;

/// Node.js and browser globals QuickJS does not have, and what to use instead.
const NODE_GLOBALS: &[(&str, &str)] = &[
    (
        "process",
        "there is no process object (no env, argv or exit); keep configuration in code or files under /app",
    ),
    ("Buffer", "there is no Buffer; use Uint8Array/ArrayBuffer"),
    ("__dirname", "there is no __dirname; the workspace is /app"),
    ("__filename", "there is no __filename; cells have no file"),
    (
        "module",
        "there is no CommonJS module object; define globals or use requireVendor",
    ),
    ("exports", "there is no CommonJS exports object"),
    ("window", "there is no browser window; use globalThis"),
    ("document", "there is no DOM"),
    (
        "localStorage",
        "there is no localStorage; write a JSON file under /app with writeJson",
    ),
    (
        "setImmediate",
        "there is no setImmediate; use Promise.resolve().then(...)",
    ),
];

/// Reports the unavailable host APIs of the snippet's language.
pub(super) fn api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    match facts.language() {
        Language::Python => python_api_findings(facts, out),
        Language::JavaScript => {
            js_call_findings(facts, out);
            node_global_findings(facts, out);
            tuple_api_findings(facts, out);
        }
    }
}

/// Python calls that need processes, threads, the network or stdin, and `__file__`.
fn python_api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    for (callee, line, _) in facts.calls.iter() {
        let c = callee.as_str();
        if matches!(
            c,
            "os.system"
                | "os.popen"
                | "os.fork"
                | "os.spawnl"
                | "os.execv"
                | "os.execvp"
                | "os.spawnv"
                | "os.posix_spawn"
        ) || c.starts_with("subprocess.")
        {
            out.find("subprocess", Some(*line), format!("{c}(...)"));
            out.block(format!("{c}(...) (line {line}) cannot work: the sandbox has no processes (os.system does not even exist under WASI)"));
            out.suggest("Do the work in Python itself (shutil/pathlib for files, zipfile/tarfile for archives) instead of shelling out.");
        } else if matches!(
            c,
            "threading.Thread"
                | "Thread"
                | "ThreadPoolExecutor"
                | "ProcessPoolExecutor"
                | "concurrent.futures.ThreadPoolExecutor"
                | "multiprocessing.Pool"
                | "Pool"
        ) {
            out.find("threads", Some(*line), format!("{c}(...)"));
            out.block(format!("{c}(...) (line {line}) cannot start: the interpreter is single-threaded (RuntimeError: can't start new thread)"));
            out.suggest("Run the tasks one after another (or use asyncio for cooperative waiting); there is no parallel speed-up to gain here.");
        } else if matches!(
            c,
            "urlopen"
                | "urllib.request.urlopen"
                | "requests.get"
                | "requests.post"
                | "socket.socket"
                | "socket.create_connection"
                | "http.client.HTTPConnection"
                | "http.client.HTTPSConnection"
        ) {
            out.find("network", Some(*line), format!("{c}(...)"));
            out.block(format!(
                "{c}(...) (line {line}) fails: there is no network in the sandbox"
            ));
            out.suggest("Have the data passed in (in the code, or written to a file under /app) instead of downloading it.");
        } else if c == "input" {
            out.find("stdin", Some(*line), "input() reads stdin");
            out.block(format!("input() (line {line}) raises EOFError: there is no stdin; put the values in the code"));
        } else if c == "sys.setrecursionlimit" {
            out.warn(format!("sys.setrecursionlimit (line {line}) does not add stack space in WebAssembly: deep recursion can still overflow; rewrite it iteratively"));
        }
    }
    if facts
        .src
        .tokens
        .iter()
        .any(|t| t.kind == Kind::Ident && t.text == "__file__")
    {
        out.block("`__file__` is not defined in a cell; use '/app' (the working directory) or os.getcwd()");
    }
}

/// JavaScript calls that need the network, processes or threads.
fn js_call_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    for (callee, line, _) in facts.calls.iter() {
        match callee.as_str() {
            "fetch" | "XMLHttpRequest" | "WebSocket" => {
                out.find("network", Some(*line), format!("{callee}(...)"));
                out.block(format!(
                    "{callee} (line {line}) does not exist: QuickJS in the sandbox has no network"
                ));
            }
            "os.exec" | "std.popen" | "os.Worker" | "Worker" => {
                out.find("subprocess", Some(*line), format!("{callee}(...)"));
                out.block(format!(
                    "{callee} (line {line}) cannot work: the sandbox has no processes or threads"
                ));
            }
            _ => {}
        }
    }
}

/// Node.js and browser globals used as free names (not members, not object keys).
fn node_global_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let src = &facts.src;
    let mut flagged = HashSet::new();
    for (i, t) in src.tokens.iter().enumerate() {
        if t.kind != Kind::Ident || src.is_member(i) || src.is(i + 1, ":") {
            continue;
        }
        if let Some((name, why)) = NODE_GLOBALS.iter().find(|(n, _)| *n == t.text)
            && flagged.insert(*name)
        {
            out.find("node_apis", Some(t.line), format!("`{name}`"));
            out.block(format!(
                "`{name}` (line {}): {why}. This is QuickJS, not Node.js or a browser",
                t.line
            ));
        }
    }
}

/// QuickJS `std`/`os` use, and `[value, error]` pairs assigned as if they were the value.
fn tuple_api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    if facts
        .calls
        .iter()
        .any(|(c, _, _)| c.starts_with("os.") || c.starts_with("std."))
    {
        out.find("quickjs_tuple_api", None, "uses QuickJS std/os functions");
    }
    for (callee, line, var) in facts.tuple_misuse().into_iter().take(10) {
        out.find(
            "quickjs_tuple_api",
            Some(line),
            format!("`{var} = {callee}(...)` without destructuring"),
        );
        out.block(format!(
            "{callee} returns a [value, error] pair (line {line}): `{var}` gets the pair, so `{var}.length` is 2 and iterating it visits the array and the error code"
        ));
        out.suggest(format!(
            "Destructure it: `const [{var}, err] = {callee}(...); if (err) throw new Error('{callee} failed: ' + err);`"
        ));
    }
}
