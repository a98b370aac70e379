//! Short documentation pages served as MCP resources (`sandbox://docs/<topic>`), written for a
//! model to read in one go. Advice links to them through `related_docs`.
//!
//! They state what this server does, not what sandboxes usually do, and stay small (all pages
//! together under 12 KB, checked by a test) so a model can afford to read them. The numbers
//! they quote are checked against their sources: the flavor table
//! ([`sandbox_protocol::FLAVORS`]), every [`sandbox_protocol::ErrorType`], and the measured
//! import costs.

/// One documentation page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doc {
    /// `sandbox://docs/<topic>`.
    pub uri: &'static str,
    pub title: &'static str,
    /// One line for resource listings.
    pub description: &'static str,
    pub markdown: &'static str,
}

pub const WORKSPACE: &str = "sandbox://docs/workspace";
pub const FUEL: &str = "sandbox://docs/fuel";
pub const SESSIONS: &str = "sandbox://docs/sessions";
pub const PYTHON: &str = "sandbox://docs/python";
pub const JAVASCRIPT: &str = "sandbox://docs/javascript";
pub const ERRORS: &str = "sandbox://docs/errors";

/// Every page, in reading order.
pub const DOCS: &[Doc] = &[
    Doc {
        uri: WORKSPACE,
        title: "Workspace and paths",
        description: "Which directories exist in the sandbox and how to use them",
        markdown: r#"# Workspace and paths

| path | what | access |
|---|---|---|
| `/app` | the session's workspace and **working directory** | read-write |
| `/tmp` | scratch space of the session | read-write |
| `/data` | vendored packages (`/data/site-packages`) | read-only |
| `/shared` | a volume shared by all sessions, only if the operator configured one | usually read-only |

Nothing else exists: `/etc`, `/home`, `/Users`, `/mnt/data`, `C:\`, `~` and `..` above `/app` all fail
(FileNotFoundError / PermissionError in Python, `null` or an error code in JavaScript).

- Use relative names (`data.csv`) or `/app/data.csv`. Both mean the same file.
- Files in `/app` survive interpreter restarts and stay until the session is destroyed, expires
  or `reset_workspace` clears it. Sessions do not see each other's `/app`.
- To get a file in, write it from code (`open('data.csv', 'w').write(text)`); to get large
  output out, write it to a file and read it back in parts.
- Disk quota per flavor (small/medium/large): /app and /tmp together hold at most 1/4/16 GiB
  in 20,000/50,000/100,000 files, directories and links; one file at most 256 MiB/1/4 GiB.
  Past it, writes fail with `disk_quota`; delete files (`execute_command` `rm -r`, `du -sh /app
  /tmp` shows the use) and write again.
- No network and no subprocesses: nothing can be downloaded or shelled out to.
"#,
    },
    Doc {
        uri: FUEL,
        title: "Fuel, limits and flavors",
        description: "Fuel budgets, memory, timeouts, output caps and what happens at each limit",
        markdown: r#"# Fuel, limits and flavors

**Fuel** counts executed WebAssembly work, deterministically. Per second of CPU, at most:
python 3×10^10 (numpy's loops; a Python loop about 6×10^9), javascript 1.5×10^10. Unless the session was created with `fuel_budget`, every call gets
enough fuel to compute until its timeout (that rate × the timeout × 1.5, at least the flavor's
fuel below): a long computation is stopped by its **timeout**, softly, with the session's
state kept. A `fuel_budget` is a fixed, deterministic cap per call instead. Unused fuel is
not carried over.

| flavor | CPU | memory | fuel per call | timeout | output cap |
|---|---|---|---|---|---|
| small (default) | 1 | 1 GiB | 10^10 | 30 s | 1 MiB |
| medium | 2 | 2 GiB | 5×10^10 | 60 s | 4 MiB |
| large | 4 | 4 GiB | 2×10^11 | 120 s | 16 MiB |

`create_session {language, flavor, fuel_budget, memory_bytes (32 MiB–4 GiB), timeout (≤ 300 s)}`
sets them; explicit values override the flavor.

Typical costs (first time in a session):
- Python start of a call ≈ 0.5M. `import json` 229M, `re` 193M, `csv` 206M, `pathlib` 342M,
  `dataclasses` 499M, `logging` 453M, `asyncio` 1.19B. A module imported once stays loaded:
  later imports are free. Vendored packages can take billions (see list_available_packages).
- A simple Python loop iteration ≈ 5,000 fuel (10^6 iterations ≈ 5×10^9); QuickJS ≈ 900.

From half the budget on, a result has `fuel_analysis`: 50–75 % moderate, 75–90 % warning
(raise the budget for similar work), ≥ 90 % critical.

**At a limit**
- Fuel or timeout: the code is interrupted (Python `KeyboardInterrupt`, JavaScript an
  uncatchable interrupt) and the **session keeps its state**. Code that ignores the interrupt is
  stopped by force: Python restarts (variables lost, files kept), JavaScript rolls back to
  before the call.
- Memory: `MemoryError` / `out of memory`; the session stays usable.
- Output beyond the cap is cut and `stdout_truncated` is set.

Fixes: import heavy modules in a call of their own, split long work over several calls (each
gets a full budget), give the call a longer `timeout` (its fuel follows), or drop a
`fuel_budget` that caps it.
"#,
    },
    Doc {
        uri: SESSIONS,
        title: "Sessions",
        description: "Default sessions, ids, lifetime, restarts and state",
        markdown: r#"# Sessions

A session is one interpreter plus its `/app`. Variables, functions and imports persist between
calls, like notebook cells.

- **Default session**: omit `session_id` and each connection gets one session per language.
  Best for one-off work and quick tests.
- **Named session**: `create_session {language, session_id?, flavor?, fuel_budget?, memory_bytes?,
  timeout?, ttl_seconds?, auto_persist_globals?}`, or just `execute_code` with a new valid id.
  Use one for multi-turn work, heavy packages (a longer timeout), big data (more memory) or
  isolation.
- Ids: 1–64 of letters, digits, `-`, `_`, starting with a letter or digit.
- Calls to one session run one at a time, in order; different sessions run in parallel.
- An idle session expires after its TTL (1 h by default for on-demand sessions) and its files
  are deleted; its id then reports that it expired. Every call extends the TTL.
- `destroy_session {session_id}` stops it and deletes its files; `reset_workspace` clears it.

**Restarts.** A result with `session_restarted: true` says what happened in
`state_after_restart`: `lost` (variables, functions and imports are gone; files in `/app`
remain; re-run your setup code) or `rolled_back` (JavaScript state is back to before the
call). A new session never inherits another session's variables or files.

`auto_persist_globals: true` saves JSON-serialisable globals so multi-turn state survives
restarts; do not use it for large objects.
"#,
    },
    Doc {
        uri: PYTHON,
        title: "Python runtime",
        description: "CPython 3.15 on WASI: numpy, pandas and the compiled-in packages, stdlib limits, install_package",
        markdown: r#"# Python (CPython 3.15.0 on WASI)

- `print()` goes to stdout; the value of a trailing expression comes back as `result`.
- Tracebacks point at your cells: `File "<cell 3>", line 2`.
- **Compiled in**: numpy, pandas, scipy, scikit-learn, statsmodels, matplotlib (figures come
  back as PNG), pillow, lxml, sympy, networkx and ~40 more; numpy and pandas are already loaded
  when a session starts. numpy's default int is 32-bit (`dtype=np.int64` for large integers).
- **Not available**: `ssl`, `tkinter`, `readline`, `curses`, `termios`, `venv`, `ensurepip`.
- **Import but cannot work**: `subprocess` and `os.system` (no processes), `multiprocessing`,
  `ctypes` (no native library loads), `socket`, `urllib.request`, `http.client` (no network),
  `threading` (a thread cannot start; run the work sequentially). `input()` raises EOFError:
  put data in the code or in a file.
- **Vendored packages** are in `/data/site-packages`, already on `sys.path`: just `import` them.
  `list_available_packages {language: "python"}` lists them with their import fuel.
- `install_package {package, version?, session_id?}` adds a **pure-Python** package to the
  session (`/app/.packages`). Use the PyPI name (`pyyaml` for `yaml`, `beautifulsoup4` for
  `bs4`, `python-dateutil` for `dateutil`).
- **Other native packages cannot load** (cryptography, torch): use the stdlib (`hashlib`,
  `csv`, `statistics`, `sqlite3`) or write SVG/CSV files.
- Recursion deeper than ~1000 raises RecursionError; `sys.setrecursionlimit` does not add stack
  in WebAssembly, so rewrite deep recursion as a loop.
"#,
    },
    Doc {
        uri: JAVASCRIPT,
        title: "JavaScript runtime",
        description: "QuickJS-NG, not Node.js: std/os tuple returns, helpers, requireVendor",
        markdown: r#"# JavaScript (QuickJS-NG, ES2023)

Not Node.js and not a browser: no `require`, no `import` statements (cells are scripts), no
`fetch`, `process`, `Buffer`, `fs`, `window` or DOM.

- `console.log()` prints; the completion value of the cell comes back as `result`.
- Top-level `let`, `const`, `class` and functions persist between calls.
- Packages: `const csv = requireVendor('csv-simple')`;
  `list_available_packages {language: "javascript"}` lists what is vendored.
- Helpers (relative paths start at `/app`; they throw Node-style errors with `code`):
  `readText(path)`, `writeText(path, text)`, `appendText(path, text)`, `readJson(path)`,
  `writeJson(path, value)`, `fileExists(path)`, `listFiles(dir)`.

**QuickJS `std`/`os` globals.** Several `os` functions return a **`[value, error]` pair**:

```js
const [names, err] = os.readdir('/app');   // not: const names = os.readdir(...)
if (err) throw new Error('readdir failed: ' + err);
const [st, e2] = os.stat('/app/data.csv'); // st.size, st.mtime
```

Pairs: `os.readdir`, `os.stat`, `os.lstat`, `os.getcwd`, `os.realpath`, `os.readlink`.
Without destructuring, `names.length` is always 2 and `names.forEach` visits the array and
the error code. Others return an error code or null: `os.mkdir`/`os.remove`/`os.rename` give
0 or a negative errno; `std.loadFile(path)` gives the text or null; `std.open(path, 'r')`
gives a FILE (`.readAsString()`, `.puts()`, `.close()`) or null.
"#,
    },
    Doc {
        uri: ERRORS,
        title: "Errors and what to do",
        description: "Every error_type with its cause and fix; advice fields in results",
        markdown: r#"# Errors

A failed result has `error_type`, `error_name`, `error_message`, and advice:
`actionable_guidance` (fixes), `related_docs`, and `next_call` (a ready tool call).

| error_type | cause | do |
|---|---|---|
| syntax_error | code does not parse | fix the quoted line/column; check the language |
| runtime_error | uncaught exception | read the exception; KeyError/IndexError: check the data; NameError: define it or re-run setup after a restart |
| missing_module | import not found | vendored or compiled in? import directly; pure Python: `install_package`; other native packages cannot load |
| out_of_fuel | CPU budget used up | import heavy modules alone first; split work; `create_session` with a larger `fuel_budget` |
| timeout | wall-clock limit | check for endless loops; pass a larger `timeout` (≤ 300); split work |
| cancelled | the client cancelled | state is kept unless the result says it was lost |
| out_of_memory | memory cap hit | process in chunks, stream files; `create_session` with `memory_bytes` or flavor medium/large |
| stack_overflow | recursion too deep | rewrite as a loop with an explicit stack |
| output_limit | stdout over the cap | write to a file in /app and read parts |
| path_restriction | path outside the sandbox | use /app (relative paths), /tmp; /data is read-only |
| disk_quota | disk quota (bytes or files of /app+/tmp) or file size cap hit | `du -sh /app /tmp`, `rm -r` what you do not need; reset_workspace; a larger flavor |
| worker_crashed | interpreter died | state lost, files kept: re-run setup code |
| resources_exhausted | server at capacity | retry shortly; destroy sessions you no longer need; smaller flavor |
| invalid_session | unknown or expired id | `execute_code` without session_id, or `create_session` |
| invalid_argument | an argument is missing, mistyped or out of bounds | correct the argument the message names and resend; nothing ran |
| invalid_package | not a valid package name or exact version, or its files were refused | PyPI or npm name, exact version; another version or package |
| native_package | the package needs compiled code | a pure-Python package or the stdlib |
| package_not_found | no source has the package (or that version) | check the PyPI name (`pyyaml` for `yaml`); drop the version |
| install_disabled | installing is turned off on this server | vendored packages (`list_available_packages`) and the stdlib |
| command_failed | a command exited non-zero | read its stderr; do complex work with execute_code |
| system_error | sandbox fault | retry once; then use a new session |

`get_execution_guidance {code, language, context?}` checks code before running it: imports and
their fuel, loops, paths, unavailable APIs, and recommended session settings.
"#,
    },
];

/// The page with this URI.
pub fn doc(uri: &str) -> Option<&'static Doc> {
    DOCS.iter().find(|d| d.uri == uri)
}

#[cfg(test)]
mod tests {
    use sandbox_protocol::{ErrorType, FLAVORS, Flavor};

    use super::super::fmt_bytes;
    use super::*;

    #[test]
    fn pages_are_small_unique_and_well_formed() {
        let total: usize = DOCS.iter().map(|d| d.markdown.len()).sum();
        assert!(total < 12 * 1024, "docs total {total} bytes");
        let mut uris: Vec<&str> = DOCS.iter().map(|d| d.uri).collect();
        uris.sort();
        uris.dedup();
        assert_eq!(uris.len(), DOCS.len());
        for d in DOCS {
            assert!(d.uri.starts_with("sandbox://docs/"));
            assert!(d.markdown.starts_with("# "), "{}", d.uri);
            assert!(!d.title.is_empty() && !d.description.is_empty());
        }
        assert_eq!(doc(FUEL).unwrap().title, "Fuel, limits and flavors");
        assert!(doc("sandbox://docs/none").is_none());
    }

    #[test]
    fn errors_page_covers_every_error_type() {
        let errors = doc(ERRORS).unwrap().markdown;
        for kind in ErrorType::ALL {
            assert!(errors.contains(&format!("| {kind} |")), "{kind}");
        }
        // And documents nothing that is not one.
        let rows = errors
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split_once(" |"))
            .map(|(name, _)| name)
            .filter(|name| !matches!(*name, "error_type" | "---"));
        for name in rows {
            assert!(ErrorType::from_name(name).is_some(), "{name}");
        }
    }

    /// `10^10`, `5×10^10`, `2×10^11`: fuel as the pages write it.
    fn power_of_ten(n: u64) -> String {
        let exponent = n.ilog10();
        match n / 10u64.pow(exponent) {
            1 => format!("10^{exponent}"),
            m => format!("{m}×10^{exponent}"),
        }
    }

    /// `1/4/16 GiB`, `256 MiB/1/4 GiB`: sizes per flavor, a unit written once per run.
    fn per_flavor(sizes: [u64; 3]) -> String {
        let shown: Vec<String> = sizes.iter().map(|s| fmt_bytes(*s)).collect();
        let mut out = Vec::new();
        for (i, text) in shown.iter().enumerate() {
            let (number, unit) = text.split_once(' ').unwrap();
            let next_unit = shown
                .get(i + 1)
                .and_then(|t| t.split_once(' '))
                .map(|t| t.1);
            out.push(if next_unit == Some(unit) {
                number.to_owned()
            } else {
                text.clone()
            });
        }
        out.join("/")
    }

    #[test]
    fn flavor_numbers_in_the_pages_come_from_the_flavor_table() {
        let fuel_page = doc(FUEL).unwrap().markdown;
        for spec in FLAVORS {
            let name = match spec.flavor {
                Flavor::Small => "small (default)".to_owned(),
                _ => spec.name().to_owned(),
            };
            let row = format!(
                "| {name} | {} | {} | {} | {} s | {} |",
                spec.cpus,
                fmt_bytes(spec.memory_bytes),
                power_of_ten(spec.fuel),
                spec.timeout_secs,
                fmt_bytes(spec.output_bytes as u64)
            );
            assert!(fuel_page.contains(&row), "{row}");
        }
        let workspace = doc(WORKSPACE).unwrap().markdown.replace("\n ", "");
        let quota = per_flavor(FLAVORS.map(|f| f.disk_quota_bytes));
        let files: Vec<String> = FLAVORS
            .iter()
            .map(|f| {
                let n = f.disk_quota_files;
                format!("{},{:03}", n / 1000, n % 1000)
            })
            .collect();
        let file_cap = per_flavor(FLAVORS.map(|f| f.disk_file_bytes));
        for part in [
            format!("at most {quota}"),
            format!("in {} files", files.join("/")),
            format!("one file at most {file_cap}"),
        ] {
            assert!(workspace.contains(&part), "{part}");
        }
    }

    #[test]
    fn measured_numbers_in_the_fuel_page_match_the_table() {
        let table = super::super::ImportFuelTable::builtin();
        let page = doc(FUEL).unwrap().markdown;
        for (name, shown) in [("json", "229M"), ("re", "193M"), ("asyncio", "1.19B")] {
            assert_eq!(super::super::fmt_fuel(table.get(name).unwrap().fuel), shown);
            assert!(
                page.contains(&format!("`{name}` {shown}"))
                    || page.contains(&format!("`import {name}` {shown}")),
                "{name}"
            );
        }
    }
}
