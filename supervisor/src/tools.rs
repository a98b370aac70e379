//! The tool descriptions a model reads: one source for the MCP schemas (`server.rs`) and the
//! README (a test checks that the README quotes each one verbatim), kept short enough that all
//! of them together stay under 12,000 characters.

/// `execute_code`
pub const EXECUTE_CODE: &str = "Run Python 3.12 or JavaScript (QuickJS) code in a persistent sandbox session and get stdout, stderr, `result` (the repr of the last expression, like a notebook cell), exit_code, timing and fuel used. Variables, functions and imports persist between calls of a session, so work step by step; omit session_id to use your default session for the language. Files live in /app (the working directory); /tmp is scratch, /data is read-only. Pitfalls: no network, no subprocesses, only pure-Python packages (numpy/pandas are not available: see list_available_packages); JavaScript is not Node.js (no require/fs: use readText/writeText/requireVendor); each call has a fuel (CPU) budget of about 1 s by default, so heavy work needs create_session with a bigger fuel_budget or flavor. On failure, error_type names the problem and actionable_guidance and next_call say what to do. With a progressToken, progress notifications carry the execution_id (for cancel_execution).";

/// `cancel_execution`
pub const CANCEL_EXECUTION: &str = "Stop a running or queued execution by its execution_id. Python gets a KeyboardInterrupt and JavaScript an interrupt (session state kept); code that ignores it is stopped by force. Returns {cancelled, status}.";

/// `create_session`
pub const CREATE_SESSION: &str = "Create a sandbox session explicitly: choose its id, flavor (small/medium/large), fuel budget, memory, timeout or idle TTL. Usually unnecessary: execute_code creates sessions on demand. Errors if the id already exists.";

/// `destroy_session`
pub const DESTROY_SESSION: &str = "Stop a session: its interpreter is killed (a running execution ends) and its /app files are deleted.";

/// `execute_command`
pub const EXECUTE_COMMAND: &str = "Run a shell command line over a session's files (/app, the working directory): pipes, &&, ||, ;, redirects, quotes, globs, variables, cd (persists). Built-in commands only (ls cat grep find sed sort wc head tail cp mv rm mkdir ...; `help` lists them); `python FILE` / `node FILE` run in the session's interpreter; `pip install NAME` installs a package. Paths outside /app, /tmp, /data (read-only) are refused. Returns stdout, stderr, exit_code like execute_code.";

/// `get_workspace_info`
pub const GET_WORKSPACE_INFO: &str = "Describe a session without running code: defined variables (name, type, short repr), imported modules, files in /app (relative paths, sizes), memory and limits, disk quota use of /app and /tmp, running executions (with execution_id for cancel_execution), expires_at.";

/// `reset_workspace`
pub const RESET_WORKSPACE: &str = "Clear a session: its interpreter state (variables, imports) and all files in /app and /tmp are deleted; the session id stays valid. Returns what was deleted.";

/// `install_package`
pub const INSTALL_PACKAGE: &str = "Install a package into a session. Python: pure-Python wheels (and their pure-Python dependencies), fetched by the server, importable in the next execute_code without sys.path changes; packages with compiled extensions (numpy, pandas, ...) are refused with alternatives. Many packages are already vendored: see list_available_packages. JavaScript: vendored packages or the operator's local package directory, loaded with requireVendor(name).";

/// `list_available_packages`
pub const LIST_AVAILABLE_PACKAGES: &str = "List the packages available without installing: vendored Python packages by category with their import name and measured first-import fuel (heavy ones need a bigger fuel_budget), the JavaScript modules, helpers and vendored packages (requireVendor), and what a session installed.";

/// `get_execution_guidance`
pub const GET_EXECUTION_GUIDANCE: &str = "Check code before running it, without executing: detected patterns (file I/O, heavy imports, loops, network, subprocess, threads, reliance on earlier state), estimated fuel from measured import costs, recommended session settings (fuel_budget, timeout, flavor), warnings (paths outside /app, modules that cannot work in WebAssembly, QuickJS [value, err] tuple APIs) and suggestions.";

/// `list_runtimes`
pub const LIST_RUNTIMES: &str = "List the runtimes with exact versions, capabilities and limits, the session flavors, and server health (sessions in use, capacity, isolation).";

/// Every tool, in the order the README lists them.
pub const ALL: [(&str, &str); 11] = [
    ("execute_code", EXECUTE_CODE),
    ("cancel_execution", CANCEL_EXECUTION),
    ("create_session", CREATE_SESSION),
    ("destroy_session", DESTROY_SESSION),
    ("execute_command", EXECUTE_COMMAND),
    ("get_workspace_info", GET_WORKSPACE_INFO),
    ("reset_workspace", RESET_WORKSPACE),
    ("install_package", INSTALL_PACKAGE),
    ("list_available_packages", LIST_AVAILABLE_PACKAGES),
    ("get_execution_guidance", GET_EXECUTION_GUIDANCE),
    ("list_runtimes", LIST_RUNTIMES),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_stay_lean() {
        let total: usize = ALL.iter().map(|(_, d)| d.len()).sum();
        assert!(total < 12_000, "tool descriptions total {total} characters");
    }

    #[test]
    fn the_readme_quotes_every_description() {
        let readme = include_str!("../../README.md");
        for (name, description) in ALL {
            assert!(
                readme.contains(description),
                "README is missing the description of {name}"
            );
        }
    }
}
