//! End-to-end tests: the real `sandbox-mcp` binary, real worker processes, real Wasmtime and
//! interpreters, driven over stdio by rmcp's MCP client. One test binary (link time on 2 cores).

mod chaos;
mod crash;
mod http;
mod javascript;
mod javascript_batteries;
mod limits;
mod python;
mod supervision;
mod teaching;
mod tools;
mod vendor_python;
mod workspace_tools;
