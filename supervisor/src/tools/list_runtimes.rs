//! `list_runtimes`: the runtimes with exact versions, capabilities and limits (Python
//! with its compiled-in packages' memory, disk and fuel costs and whether this server has it),
//! the session flavors, and the server's health. The capability manifest resource
//! (`sandbox://capabilities`) states the same facts for clients that read resources.

use std::collections::BTreeMap;

use rmcp::model::CallToolResult;
use rmcp::{ErrorData as McpError, tool, tool_router};
use sandbox_protocol::{Language, Runtime};
use serde::Serialize;
use serde_json::Value;

use super::reply;
use super::session_info::{Limits, flavor_table};
use crate::guidance;
use crate::inventory;
use crate::packages::catalog;
use crate::runtimes::{Availability, INSTALL_HINT, RUNTIMES, RuntimeInfo};
use crate::server::SandboxServer;
use crate::session::SessionSpec;

/// What the model reads about `list_runtimes`.
pub const DESCRIPTION: &str =
    "Runtime versions, capabilities and limits, the session flavors, and server health.";

/// A runtime as the capability manifest describes it.
#[derive(Debug, Serialize)]
struct RuntimeSummary {
    name: &'static str,
    version: &'static str,
    engine: &'static str,
    capabilities: &'static [&'static str],
    notes: &'static [&'static str],
}

impl From<&RuntimeInfo> for RuntimeSummary {
    fn from(r: &RuntimeInfo) -> Self {
        RuntimeSummary {
            name: r.runtime.as_str(),
            version: r.version,
            engine: r.engine,
            capabilities: r.capabilities,
            notes: r.notes,
        }
    }
}

/// A runtime as `list_runtimes` describes it: the summary, its default limits and what it
/// ships (vendored Python packages, or the JavaScript library).
#[derive(Debug, Serialize)]
struct RuntimeEntry {
    #[serde(flatten)]
    summary: RuntimeSummary,
    language: &'static str,
    default_limits: Limits,
    #[serde(skip_serializing_if = "Option::is_none")]
    vendored_packages: Option<VendoredPackages>,
    /// Modules, helpers and packages with signatures, examples and API notes (the
    /// `[value, err]` tuple returns).
    #[serde(skip_serializing_if = "Option::is_none")]
    library: Option<&'static Value>,
    /// What Python's compiled-in packages cost, and whether this server has its interpreter.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    python: Option<PythonFacts>,
}

/// What Python's compiled-in packages cost, and whether this server has its interpreter.
#[derive(Debug, Serialize)]
struct PythonFacts {
    /// `installed`, `preparing` (its precompile is running), `not_installed` or `failed`.
    status: &'static str,
    /// What the operator can do when it is not usable.
    #[serde(skip_serializing_if = "Option::is_none")]
    install: Option<String>,
    /// Fuel it burns per second of CPU at most: unless fuel_budget is given, each execution
    /// gets enough to run until its timeout.
    fuel_per_second: u64,
    memory: PythonMemory,
    disk: inventory::Disk,
    compiled_in: CompiledIn,
}

/// Guest memory of a Python session (MiB), measured.
#[derive(Debug, Serialize)]
struct PythonMemory {
    fresh_session_mib: f64,
    with_pandas_mib: Option<f64>,
    /// Typical imports together, by label.
    with_imports_mib: BTreeMap<String, f64>,
    /// What admission counts a session of this runtime for until its worker is measured
    /// (numpy and pandas preloaded).
    expected_use_mib: u64,
}

/// The packages compiled into CPython.
#[derive(Debug, Serialize)]
struct CompiledIn {
    distributions: usize,
    headline: String,
    more: &'static str,
}

#[derive(Debug, Serialize)]
struct VendoredPackages {
    count: usize,
    names: Vec<String>,
}

/// What `list_runtimes` answers.
#[derive(Debug, Serialize)]
struct RuntimeList {
    runtimes: Vec<RuntimeEntry>,
    flavors: BTreeMap<&'static str, Limits>,
    health: Health,
}

/// The server's capacity and isolation.
#[derive(Debug, Serialize)]
struct Health {
    sessions: usize,
    max_sessions: usize,
    /// What sessions and pooled workers use, as measured (see `sandbox://capabilities`).
    memory_in_use_bytes: u64,
    memory_budget_bytes: u64,
    /// Idle workers started ahead of sessions.
    pooled_workers: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    host_available_bytes: Option<u64>,
    running_executions: usize,
    isolation: String,
    jail: Value,
    cgroups: &'static str,
    per_client_caps: ClientCaps,
}

/// The caps one HTTP client has.
#[derive(Debug, Serialize)]
struct ClientCaps {
    applies_to: &'static str,
    max_sessions: usize,
    max_executions_in_flight: usize,
}

/// The capability manifest (`sandbox://capabilities`).
#[derive(Debug, Serialize)]
struct Manifest {
    server: ServerName,
    runtimes: Vec<RuntimeSummary>,
    flavors: BTreeMap<&'static str, Limits>,
    default_limits: Limits,
    filesystem: Filesystem,
    javascript_library: &'static Value,
    isolation: &'static str,
    docs: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
struct ServerName {
    name: &'static str,
    version: &'static str,
}

/// What each directory a sandbox sees is for.
#[derive(Debug, Serialize)]
struct Filesystem {
    #[serde(rename = "/app")]
    app: &'static str,
    #[serde(rename = "/tmp")]
    tmp: &'static str,
    #[serde(rename = "/data")]
    data: &'static str,
    /// Null without a shared volume.
    #[serde(rename = "/shared")]
    shared: Option<&'static str>,
}

#[tool_router(router = list_runtimes_router, vis = "pub(crate)")]
impl SandboxServer {
    #[tool(
        description = DESCRIPTION,
        annotations(
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_runtimes(&self) -> Result<CallToolResult, McpError> {
        let vendored = catalog::vendored_python(self.sandbox.config.data_dir.as_deref());
        let defaults = SessionSpec::new(
            Language::Python,
            self.sandbox.config.defaults.clone(),
            self.sandbox.config.session_ttl,
        );
        let runtimes = RUNTIMES
            .iter()
            .map(|r| {
                let (vendored_packages, library) = match r.runtime {
                    Runtime::Python => {
                        let names = catalog::vendored_distributions(&vendored);
                        let count = names.len();
                        (Some(VendoredPackages { count, names }), None)
                    }
                    Runtime::JavaScript => (None, Some(catalog::js_catalog())),
                };
                let python = (r.runtime == Runtime::Python).then(|| {
                    python_facts(
                        &self
                            .sandbox
                            .runtimes
                            .availability(r.runtime, &self.sandbox.config),
                    )
                });
                RuntimeEntry {
                    summary: RuntimeSummary::from(r),
                    language: r.runtime.language().as_str(),
                    default_limits: Limits::from(&defaults.limits_on(r.runtime)),
                    vendored_packages,
                    library,
                    python,
                }
            })
            .collect();
        reply::data(&RuntimeList {
            runtimes,
            flavors: flavor_table(),
            health: self.health(),
        })
    }
}

/// Python's facts, from its measured catalogue and this server's state.
fn python_facts(availability: &Availability) -> PythonFacts {
    let catalogue = inventory::catalogue();
    let (status, install) = match availability {
        Availability::Installed => ("installed", None),
        Availability::Preparing => ("preparing", None),
        Availability::NotInstalled => ("not_installed", Some(INSTALL_HINT.to_owned())),
        Availability::Failed(e) => (
            "failed",
            Some(format!(
                "the interpreters could not be prepared ({e}); {INSTALL_HINT}"
            )),
        ),
    };
    let with_imports_mib = catalogue
        .memory
        .stacks
        .iter()
        .map(|(label, stack)| (label.clone(), stack.memory_mib))
        .collect();
    PythonFacts {
        status,
        install,
        fuel_per_second: Runtime::Python.fuel_per_second(),
        memory: PythonMemory {
            fresh_session_mib: catalogue.memory.baseline_mib,
            with_pandas_mib: catalogue.imports.get("pandas").map(|p| p.memory_mib),
            with_imports_mib,
            expected_use_mib: Runtime::Python.expected_use_bytes() >> 20,
        },
        disk: catalogue.disk,
        compiled_in: CompiledIn {
            distributions: catalogue.distributions.len(),
            headline: catalogue.versions_of(&inventory::HEADLINE),
            more: "list_available_packages {language: \"python\"} lists every package with its import cost",
        },
    }
}

impl SandboxServer {
    fn health(&self) -> Health {
        let usage = self.sandbox.sessions.usage();
        Health {
            sessions: usage.sessions,
            max_sessions: usage.max_sessions,
            memory_in_use_bytes: usage.memory_in_use_bytes,
            memory_budget_bytes: usage.memory_budget_bytes,
            pooled_workers: usage.pooled_workers,
            host_available_bytes: usage.host_available_bytes,
            running_executions: self.sandbox.executions.count(),
            isolation: format!(
                "one sandbox-worker process per session: WebAssembly (Wasmtime) with fuel, epoch deadlines and a memory cap; rlimits (RLIMIT_DATA, NOFILE, FSIZE, CPU, CORE=0), no_new_privs, own process group, PDEATHSIG; {}",
                self.sandbox.config.jail.summary()
            ),
            jail: self.sandbox.config.jail.health(),
            cgroups: self.sandbox.config.cgroups.describe_public(),
            per_client_caps: ClientCaps {
                applies_to: "HTTP clients (a named principal, or one MCP session)",
                max_sessions: self.sandbox.config.principal_max_sessions,
                max_executions_in_flight: self.sandbox.config.principal_max_executions,
            },
        }
    }

    /// The capability manifest (`sandbox://capabilities`): runtimes, flavors, default limits,
    /// the sandbox's directories, the JavaScript library, isolation and the documentation.
    pub(crate) fn capabilities(&self) -> Value {
        let shared = self
            .sandbox
            .config
            .shared_dir
            .as_ref()
            .map(|(_, writable)| {
                if *writable {
                    "shared volume, read-write"
                } else {
                    "shared volume, read-only"
                }
            });
        let manifest = Manifest {
            server: ServerName {
                name: "sandbox-mcp",
                version: env!("CARGO_PKG_VERSION"),
            },
            runtimes: RUNTIMES.iter().map(RuntimeSummary::from).collect(),
            flavors: flavor_table(),
            default_limits: Limits::from(&self.sandbox.config.defaults),
            filesystem: Filesystem {
                app: "session workspace, read-write, working directory",
                tmp: "per-session scratch, read-write",
                data: "vendored packages, read-only",
                shared,
            },
            javascript_library: catalog::js_catalog(),
            isolation: self.sandbox.config.cgroups.describe_public(),
            docs: guidance::DOCS.iter().map(|d| d.uri).collect(),
        };
        // A value, so its keys come out sorted like every other answer's.
        serde_json::to_value(&manifest).unwrap_or_default()
    }
}
