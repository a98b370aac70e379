//! End-to-end tests: the real `sandbox-mcp` binary, real worker processes, real Wasmtime and
//! interpreters, driven over stdio (and Streamable HTTP) by rmcp's MCP client. One test binary
//! (link time on 2 cores).

mod advice_corpus;
mod arguments;
mod chaos;
mod crash;
mod durable;
mod escape_delete;
mod escape_packages;
mod escape_resources;
mod escape_shell;
mod forking;
mod gnu;
mod http;
mod http_load;
mod http_sdk;
mod install_quota;
mod jail;
mod javascript;
mod javascript_batteries;
mod limits;
mod observability;
mod output_caps;
mod packages;
mod pool;
mod python;
mod quota;
mod reaping;
mod scientific;
mod sessions_as_values;
mod shell_language;
mod supervision;
mod teaching;
mod tenancy;
mod toolbox;
mod tools;
mod vendor_python;
mod workspace_tools;
