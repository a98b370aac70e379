//! The fourteen MCP tools, one file each (mini-redis `cmd/` style). A tool's file holds its
//! argument struct (whose doc comments are the JSON Schema descriptions the model reads), its
//! description, its annotations and its handler, in a `#[tool_router]` block of its own;
//! [`SandboxServer::tool_router`] here combines them for `server.rs`'s handler.
//!
//! What several tools share: [`args`] (the language and session selector arguments, bounded
//! argument checks), [`sessions`] (which session a call acts on), [`run`] (running work as a
//! registered execution and teaching its result), [`reply`] (how results are shaped) and
//! [`session_info`] (what clients are told about a session and its limits).
//!
//! Every tools/list costs a model's context, so the descriptions and input schemas together
//! stay under 2,000 tokens (bytes/4), each fact said once: the pitfalls every language call
//! shares are in `execute_code`'s description, an argument's bounds and default in its own.
//! Annotations state only what differs from MCP's defaults (not read-only, destructive, not
//! idempotent, open world): a hint left out means its default, at no cost. No tool has a
//! title: its name says as much, and fourteen titles cost 400 bytes of every tools/list.
//! The README quotes each description verbatim (tests check both).

pub mod args;
pub mod cancel_execution;
pub mod checkpoint_session;
pub mod create_session;
pub mod destroy_session;
pub mod execute_code;
pub mod execute_command;
pub mod fork_session;
pub mod get_execution_guidance;
pub mod get_workspace_info;
pub mod install_package;
pub mod list_available_packages;
pub mod list_runtimes;
pub mod reply;
pub mod reset_workspace;
pub mod restore_session;
pub mod run;
pub mod schema;
pub mod session_info;
pub mod sessions;

use std::sync::OnceLock;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::server::SandboxServer;

/// Every tool and its description, in the order the README lists them.
pub const ALL: [(&str, &str); 14] = [
    ("execute_code", execute_code::DESCRIPTION),
    ("cancel_execution", cancel_execution::DESCRIPTION),
    ("create_session", create_session::DESCRIPTION),
    ("destroy_session", destroy_session::DESCRIPTION),
    ("execute_command", execute_command::DESCRIPTION),
    ("get_workspace_info", get_workspace_info::DESCRIPTION),
    ("reset_workspace", reset_workspace::DESCRIPTION),
    ("checkpoint_session", checkpoint_session::DESCRIPTION),
    ("restore_session", restore_session::DESCRIPTION),
    ("fork_session", fork_session::DESCRIPTION),
    ("install_package", install_package::DESCRIPTION),
    (
        "list_available_packages",
        list_available_packages::DESCRIPTION,
    ),
    (
        "get_execution_guidance",
        get_execution_guidance::DESCRIPTION,
    ),
    ("list_runtimes", list_runtimes::DESCRIPTION),
];

impl SandboxServer {
    /// Every tool, each from its own file under `tools/`.
    ///
    /// Built once per process: the per-tool routers combined, with every schema made portable
    /// ([`schema`]).
    pub(crate) fn tool_router() -> &'static ToolRouter<Self> {
        static ROUTER: OnceLock<ToolRouter<SandboxServer>> = OnceLock::new();
        ROUTER.get_or_init(Self::build_tool_router)
    }

    fn build_tool_router() -> ToolRouter<Self> {
        let mut router = Self::execute_code_router()
            + Self::cancel_execution_router()
            + Self::create_session_router()
            + Self::destroy_session_router()
            + Self::execute_command_router()
            + Self::get_workspace_info_router()
            + Self::reset_workspace_router()
            + Self::checkpoint_session_router()
            + Self::restore_session_router()
            + Self::fork_session_router()
            + Self::install_package_router()
            + Self::list_available_packages_router()
            + Self::get_execution_guidance_router()
            + Self::list_runtimes_router();
        for route in router.map.values_mut() {
            schema::make_portable(&mut route.attr);
        }
        router
    }
}

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
        let readme = include_str!("../../../README.md");
        for (name, description) in ALL {
            assert!(
                readme.contains(description),
                "README is missing the description of {name}"
            );
        }
    }

    /// What tools/list costs the model's context, as a client receives it: each tool's
    /// description, input schema, name, title and annotations (everything but the output
    /// schema), in tokens estimated as bytes/4. Run with `--nocapture` to see the table.
    #[test]
    fn tool_list_fits_the_context_budget() {
        const BUDGET_TOKENS: usize = 2_000;
        let tools = SandboxServer::tool_router().list_all();
        let (mut listed_total, mut described_total, mut output_total) = (0, 0, 0);
        println!(
            "{:<24} {:>11} {:>12} {:>6} {:>7} {:>13}",
            "tool", "description", "input_schema", "other", "listed", "output_schema"
        );
        for tool in &tools {
            let output = tool
                .output_schema
                .as_ref()
                .map_or(0, |schema| serde_json::to_string(schema).unwrap().len());
            let mut listed = tool.clone();
            listed.output_schema = None;
            let listed = serde_json::to_string(&listed).unwrap().len();
            let description = tool.description.as_deref().unwrap_or_default().len();
            let input = serde_json::to_string(&tool.input_schema).unwrap().len();
            let other = listed - description - input;
            println!(
                "{:<24} {description:>11} {input:>12} {other:>6} {listed:>7} {output:>13}",
                tool.name
            );
            listed_total += listed;
            described_total += description + input;
            output_total += output;
        }
        let tokens = listed_total / 4;
        println!(
            "descriptions + input schemas: {described_total} bytes = {} tokens",
            described_total / 4
        );
        println!("tools/list without output schemas: {listed_total} bytes = {tokens} tokens");
        println!(
            "output schemas (not counted): {output_total} bytes = {} tokens",
            output_total / 4
        );
        assert!(
            tokens < BUDGET_TOKENS,
            "tools/list costs {tokens} tokens, the budget is {BUDGET_TOKENS}"
        );
    }

    /// Each tool the server routes is described by the text in its own file.
    #[test]
    fn every_routed_tool_has_its_files_description() {
        let tools = SandboxServer::tool_router().list_all();
        assert_eq!(tools.len(), ALL.len());
        for (name, description) in ALL {
            let tool = tools.iter().find(|t| t.name == name).expect(name);
            assert_eq!(tool.description.as_deref(), Some(description), "{name}");
        }
    }

    /// Every number a client can send has documented bounds in the schema the client sees
    /// (which the guard enforces).
    #[test]
    fn every_numeric_argument_has_bounds() {
        let tools = SandboxServer::tool_router().list_all();
        assert_eq!(tools.len(), ALL.len());
        let mut numeric = Vec::new();
        for tool in &tools {
            let properties = tool.input_schema["properties"].as_object();
            for (name, schema) in properties.into_iter().flatten() {
                let types = schema["type"].to_string();
                if types.contains("integer") || types.contains("number") {
                    numeric.push(format!("{}.{name}", tool.name));
                    for key in ["minimum", "maximum"] {
                        assert!(
                            schema[key].is_number(),
                            "{}.{name} has no {key}: {schema}",
                            tool.name
                        );
                    }
                    let description = schema["description"].as_str().unwrap_or_default();
                    assert!(
                        description.contains(" to "),
                        "{}.{name}: the description states the bounds: {description}",
                        tool.name
                    );
                }
            }
        }
        numeric.sort();
        assert_eq!(
            numeric,
            [
                "create_session.fuel_budget",
                "create_session.memory_bytes",
                "create_session.timeout",
                "create_session.ttl_seconds",
                "execute_code.timeout",
                "execute_command.timeout",
            ]
        );
    }
}
