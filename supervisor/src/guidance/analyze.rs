//! `get_execution_guidance`: what a snippet will need before it runs. It detects the patterns
//! that decide success in this sandbox (imports and their measured cost, loops and their
//! bounds, file paths, network, processes, threads, names from earlier calls, Node.js-isms in
//! QuickJS), estimates the fuel with a range, and recommends session settings.
//!
//! The same facts ([`CodeFacts`]) feed the fuel analysis and the failure advice, so all three
//! tell the same story about a piece of code.

use std::collections::HashSet;

use sandbox_protocol::Language;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::imports::ImportFuelTable;
use super::scan::{self, ImportKind, ImportRef, Kind, LoopInfo, Source, StrLit};
use super::{
    FLAVORS, MAX_ECHOED_CODE, MAX_MEMORY_BYTES, MAX_SUGGESTED_FUEL, MAX_TIMEOUT_SECS, NextCall,
    clip, flavor_for, fmt_bytes, fmt_fuel, modules, nice_round_up,
};

/// Analysis looks at most this much code; `execute_code` refuses more than 1 MiB anyway.
const MAX_ANALYZED_BYTES: usize = 2 << 20;

/// Fuel a trivial call costs (measured: `pass` in Python, an expression in QuickJS).
const BASE_FUEL_PYTHON: u64 = 460_000;
const BASE_FUEL_JS: u64 = 100_000;

/// Fuel per loop iteration: (low, expected, high). Python measured 5.1×10^3 for `x += i`
/// over `range(10**6)`; QuickJS 850 for the same loop. The range covers heavier bodies.
const ITERATION_FUEL_PYTHON: (f64, f64, f64) = (2_000.0, 5_000.0, 20_000.0);
const ITERATION_FUEL_JS: (f64, f64, f64) = (300.0, 900.0, 5_000.0);

/// Iterations assumed for a loop over data of unknown size: (low, expected, high). The first
/// unknown level is the data (rows, lines, files); loops nested in it usually walk something
/// small (the cells of a row), hence the smaller numbers for the inner levels.
const UNKNOWN_ITERATIONS: (f64, f64, f64) = (10.0, 1_000.0, 100_000.0);
const UNKNOWN_INNER_ITERATIONS: (f64, f64, f64) = (3.0, 30.0, 1_000.0);

/// Assumed cost of importing a third-party module nobody measured: (low, expected, high).
/// Third-party packages are mostly heavier than stdlib modules (openpyxl takes billions).
const UNMEASURED_IMPORT_FUEL: (u64, u64, u64) = (100_000_000, 1_000_000_000, 8_000_000_000);

/// Modules that share dependencies cost less together than the sum of their single imports:
/// measured on five combinations, the extra over the most expensive one was 0–39 % (median
/// 12 %) of the rest. A quarter keeps the expectation on the safe side.
const SHARED_IMPORT_FACTOR: f64 = 0.25;

/// A first import at or above this is worth mentioning as a cost (about 5 ms).
pub(crate) const HEAVY_IMPORT_FUEL: u64 = 50_000_000;

/// A first import at or above this is a "heavy import" (3 % of the default budget or more):
/// `pathlib`, `dataclasses`, `asyncio`, most third-party packages; not `json` or `re`.
const HEAVY_PATTERN_FUEL: u64 = 300_000_000;

/// Fuel per second used to turn fuel into a timeout: below the 8×10^9/s measured on an idle
/// machine, because the machine is shared.
const FUEL_PER_SECOND: f64 = 4e9;

/// Allocations at or above this are reported as large data.
const LARGE_ALLOCATION: u64 = 64 << 20;

/// The analysis of one snippet, without running it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecutionGuidance {
    pub language: String,
    /// Pattern names found, e.g. `file_io`, `heavy_imports`, `nested_loops`, `state_reliance`.
    pub detected_patterns: Vec<String>,
    /// Each finding with its line and what it means here.
    pub findings: Vec<Finding>,
    /// Every import with its measured first-import fuel or why it will not work.
    pub imports: Vec<ImportInfo>,
    pub estimated_fuel: FuelEstimate,
    pub recommended_session: SessionRecommendation,
    /// Things that will fail or surprise in this sandbox.
    pub warnings: Vec<String>,
    /// Concrete changes or steps.
    pub suggestions: Vec<String>,
    /// The call to make next (create_session with the recommended settings, or execute_code).
    pub next_call: Option<NextCall>,
}

/// One detected pattern.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Finding {
    pub pattern: String,
    /// 1-based line in the code, when the pattern is at one place.
    pub line: Option<u32>,
    pub detail: String,
}

/// An import and what it will cost or why it fails.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ImportInfo {
    pub module: String,
    pub line: u32,
    /// `measured` (fuel known), `unmeasured`, `unavailable` (not in this build),
    /// `no_effect` (imports but cannot work: network, processes, threads), `native` (C
    /// extension, cannot load in WASM), `node_builtin` / `es_module` (JavaScript, not
    /// available), `vendored` (JavaScript requireVendor).
    pub status: String,
    /// Distribution name, when known.
    pub package: Option<String>,
    /// Measured fuel of the first import in a session.
    pub fuel: Option<u64>,
    pub note: Option<String>,
}

/// A fuel estimate with its uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuelEstimate {
    pub low: u64,
    pub expected: u64,
    pub high: u64,
    /// One line, e.g. "~1.2B fuel (300M–6B): import pandas 900M, loop at line 4 ~250M".
    pub summary: String,
    /// Where the expected fuel goes, largest first.
    pub breakdown: Vec<FuelItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuelItem {
    pub source: String,
    pub fuel: u64,
}

/// Session settings that fit the code.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SessionRecommendation {
    /// `default` (execute_code without session_id is fine), `new_session` (create_session
    /// with the settings below) or `same_session` (the code needs state from earlier calls).
    pub session_type: String,
    /// `small`, `medium` or `large`.
    pub flavor: String,
    pub fuel_budget: u64,
    pub timeout_seconds: u64,
    pub memory_bytes: u64,
    /// Whether to persist globals across restarts (multi-turn workflows).
    pub auto_persist_globals: bool,
    pub reason: String,
}

/// The facts about a snippet that analysis, fuel analysis and advice share.
pub(crate) struct CodeFacts<'a> {
    pub src: Source<'a>,
    pub imports: Vec<ImportRef>,
    pub loops: Vec<LoopInfo>,
    pub recursion: Vec<(String, u32)>,
    pub calls: Vec<(String, u32, usize)>,
    pub strings: Vec<StrLit<'a>>,
}

impl<'a> CodeFacts<'a> {
    pub fn new(code: &'a str, language: Language) -> Self {
        let code = cut(code, MAX_ANALYZED_BYTES);
        let src = Source::new(code, language);
        Self {
            imports: scan::imports(&src),
            loops: scan::loops(&src),
            recursion: scan::recursive_functions(&src),
            calls: scan::calls(&src),
            strings: scan::strings(&src),
            src,
        }
    }

    pub fn language(&self) -> Language {
        self.src.language
    }

    /// Python imports with their table entry: (module as written, matched name, cost).
    pub fn measured_imports<'t>(
        &self,
        table: &'t ImportFuelTable,
    ) -> Vec<(String, &'t str, &'t super::ImportCost)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for import in &self.imports {
            let language = match import.kind {
                ImportKind::Python => Language::Python,
                ImportKind::Vendor => Language::JavaScript,
                _ => continue,
            };
            // `from xml.etree import ElementTree` imports the submodule.
            let submodule = import
                .names
                .iter()
                .map(|n| format!("{}.{n}", import.module))
                .find_map(|full| table.get_in(language, &full).map(|_| full));
            let wanted = submodule.unwrap_or_else(|| import.module.clone());
            if let Some((name, cost)) = table.resolve(language, &wanted)
                && seen.insert(name)
            {
                out.push((wanted, name, cost));
            }
        }
        out
    }

    /// Third-party Python imports that the table does not know (their cost is a guess).
    pub fn unmeasured_imports(&self, table: &ImportFuelTable) -> Vec<&ImportRef> {
        self.imports
            .iter()
            .filter(|i| i.kind == ImportKind::Python)
            .filter(|i| table.resolve(Language::Python, &i.module).is_none())
            .filter(|i| {
                modules::missing_stdlib(&i.module).is_none()
                    && modules::native_package(&i.module).is_none()
                    && !modules::network_package(&i.module)
            })
            .collect()
    }

    /// Calls to QuickJS functions that return `[value, error]`, assigned without destructuring:
    /// (callee, line, variable).
    pub fn tuple_misuse(&self) -> Vec<(String, u32, String)> {
        if self.language() != Language::JavaScript {
            return Vec::new();
        }
        let t = &self.src.tokens;
        let mut out = Vec::new();
        for (callee, line, open) in &self.calls {
            if !is_tuple_api(callee) {
                continue;
            }
            let parts = callee.matches('.').count() + 1;
            let start = open.saturating_sub(2 * parts - 1);
            // `<decl> name = os.readdir(` or `name = os.readdir(`
            if start >= 2 && self.src.is(start - 1, "=") && t[start - 2].kind == Kind::Ident {
                let name = t[start - 2].text;
                if !matches!(name, "let" | "const" | "var") {
                    out.push((callee.clone(), *line, name.to_owned()));
                }
            }
        }
        out
    }

    /// Big constant allocations: (description, line, estimated bytes).
    pub fn large_allocations(&self) -> Vec<(String, u32, u64)> {
        let src = &self.src;
        let t = &src.tokens;
        let mut out = Vec::new();
        let number_at = |k: usize| -> Option<f64> {
            let tok = t.get(k)?;
            if tok.kind != Kind::Number {
                return None;
            }
            // `10**8` is the usual way to write a big size.
            if src.is(k + 1, "**") {
                scan::const_value(src, k, k + 3)
            } else {
                scan::number_value(tok.text)
            }
        };
        let arg_value = |open: usize| -> Option<f64> {
            let close = *src.partner.get(open)?;
            if close == scan::NONE {
                return None;
            }
            let end = (open + 1..close)
                .find(|&k| src.is(k, ",") && t[k].depth == t[open].depth + 1)
                .unwrap_or(close);
            scan::const_value(src, open + 1, end)
        };
        for (callee, line, open) in &self.calls {
            let per_item: Option<(f64, &str)> = match (self.language(), callee.as_str()) {
                (Language::Python, "bytearray" | "bytes") => Some((1.0, "bytes")),
                (Language::JavaScript, "Uint8Array" | "Int8Array" | "ArrayBuffer") => {
                    Some((1.0, "bytes"))
                }
                (Language::JavaScript, "Float64Array" | "BigInt64Array") => Some((8.0, "items")),
                (Language::JavaScript, "Float32Array" | "Int32Array" | "Uint32Array") => {
                    Some((4.0, "items"))
                }
                (Language::JavaScript, "Array") => Some((16.0, "items")),
                (_, "repeat") => Some((1.0, "characters")),
                (Language::Python, "range") => {
                    // Only a materialised range costs memory.
                    let outer = self.calls.iter().find(|(c, _, o)| {
                        matches!(c.as_str(), "list" | "set" | "tuple" | "sorted")
                            && *o + 1 == open - 1
                    });
                    outer.map(|_| (36.0, "ints"))
                }
                _ => None,
            };
            let Some((bytes_each, unit)) = per_item else {
                continue;
            };
            if let Some(n) = arg_value(*open) {
                let bytes = (n * bytes_each).max(0.0);
                if bytes >= LARGE_ALLOCATION as f64 {
                    out.push((
                        format!("{callee}(...) of {} {unit}", fmt_count(n)),
                        *line,
                        saturate(bytes),
                    ));
                }
            }
        }
        if self.language() == Language::Python {
            // [0] * N, "x" * N
            for k in 1..t.len().saturating_sub(1) {
                if !src.is(k, "*") {
                    continue;
                }
                let (left, right) = (&t[k - 1], &t[k + 1]);
                let (n, item_bytes, what) = if left.text == "]" && left.kind == Kind::Op {
                    (number_at(k + 1), 8.0, "list")
                } else if left.kind == Kind::Str {
                    (number_at(k + 1), left.text.len().max(1) as f64, "string")
                } else if right.kind == Kind::Str && left.kind == Kind::Number {
                    (number_at(k - 1), right.text.len().max(1) as f64, "string")
                } else {
                    continue;
                };
                if let Some(n) = n {
                    let bytes = n * item_bytes;
                    if bytes >= LARGE_ALLOCATION as f64 {
                        out.push((
                            format!("a {what} of {} items", fmt_count(n)),
                            left.line,
                            saturate(bytes),
                        ));
                    }
                }
            }
        }
        out
    }
}

/// QuickJS functions that return `[value, error]`.
pub(crate) fn is_tuple_api(callee: &str) -> bool {
    matches!(
        callee,
        "os.readdir" | "os.stat" | "os.lstat" | "os.getcwd" | "os.realpath" | "os.readlink"
    )
}

fn saturate(x: f64) -> u64 {
    if x.is_nan() {
        0
    } else {
        x.min(u64::MAX as f64) as u64
    }
}

fn fmt_count(n: f64) -> String {
    fmt_fuel(saturate(n))
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// What a path literal means in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathClass {
    /// Under /app, /tmp, /data or /shared, or relative and staying under /app.
    Inside,
    /// Under /data (read-only).
    ReadOnly,
    /// An absolute host path, a home directory, a Windows path or `..` escaping /app.
    Outside,
    /// Not a path.
    NotAPath,
}

/// Classifies a string as a path. `in_file_call` says the string is an argument of a
/// file-system call, which makes any absolute path a path (otherwise only well-known host
/// roots count, so "/api/users" in a URL builder is not flagged).
pub(crate) fn classify_path(text: &str, in_file_call: bool) -> PathClass {
    const HOST_ROOTS: &[&str] = &[
        "/etc",
        "/home",
        "/Users",
        "/usr",
        "/var",
        "/root",
        "/opt",
        "/mnt",
        "/proc",
        "/sys",
        "/dev",
        "/bin",
        "/sbin",
        "/lib",
        "/srv",
        "/private",
        "/Volumes",
        "/workspace",
        "/content",
        "/kaggle",
        "/code",
        "/project",
        "/sandbox",
        "/mnt/data",
        "/media",
        "/run",
        "/boot",
    ];
    let text = text.trim();
    if text.is_empty() || text.len() > 4096 || text.contains('\n') {
        return PathClass::NotAPath;
    }
    let under = |root: &str| text == root || text.starts_with(&format!("{root}/"));
    if text.starts_with('/') {
        if text.starts_with("//") {
            return PathClass::NotAPath;
        }
        if under("/data") {
            return PathClass::ReadOnly;
        }
        if ["/app", "/tmp", "/shared"].iter().any(|r| under(r)) {
            return if escapes(text) {
                PathClass::Outside
            } else {
                PathClass::Inside
            };
        }
        if text.contains(' ') && !in_file_call {
            return PathClass::NotAPath;
        }
        if in_file_call || HOST_ROOTS.iter().any(|r| under(r)) {
            return PathClass::Outside;
        }
        return PathClass::NotAPath;
    }
    let bytes = text.as_bytes();
    let windows = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes[2] == b'\\' || bytes[2] == b'/');
    if windows || text == "~" || text.starts_with("~/") {
        return PathClass::Outside;
    }
    if (in_file_call || text.contains('/')) && escapes(&format!("/app/{text}")) {
        return PathClass::Outside;
    }
    if in_file_call {
        PathClass::Inside
    } else {
        PathClass::NotAPath
    }
}

/// True when `..` components climb above the first directory of an absolute path.
fn escapes(path: &str) -> bool {
    let mut depth: i32 = 0;
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            depth -= 1;
            if depth < 1 {
                return true;
            }
        } else {
            depth += 1;
        }
    }
    false
}

/// Functions whose string arguments are file paths (matched on the last part of the callee).
#[rustfmt::skip]
const FILE_CALLS: &[&str] = &[
    "open", "Path", "listdir", "scandir", "walk", "stat", "exists", "isfile", "isdir", "remove",
    "unlink", "rmdir", "mkdir", "makedirs", "rename", "replace", "chdir", "read_text", "write_text",
    "read_bytes", "write_bytes", "copy", "copyfile", "copytree", "rmtree", "move", "glob", "iglob",
    "read_csv", "connect", "loadFile", "writeFile", "readdir", "lstat", "realpath", "readJson",
    "writeJson", "readText", "writeText", "appendText", "fileExists", "listFiles", "fdopen",
    "ZipFile", "TarFile", "load_workbook", "getsize", "abspath",
];

/// Functions that write, delete or rename (for "/data is read-only").
#[rustfmt::skip]
const WRITE_CALLS: &[&str] = &[
    "write_text", "write_bytes", "remove", "unlink", "rmdir", "mkdir", "makedirs", "rename",
    "writeFile", "writeJson", "writeText", "appendText", "rmtree", "copy", "copyfile", "move",
];

/// Calls whose string arguments are file paths.
pub(crate) fn is_file_call(callee: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    FILE_CALLS.contains(&last) || callee == "tarfile.open"
}

/// Calls that write: a write function, or `open` with a writing mode among the arguments.
fn is_write_call(callee: &str, args_text: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    WRITE_CALLS.contains(&last)
        || (matches!(last, "open" | "fdopen")
            && ["'w", "\"w", "'a", "\"a", "'x", "\"x", "'r+", "\"r+"]
                .iter()
                .any(|m| args_text.contains(m)))
}

/// Analyses `code` for `get_execution_guidance`.
pub fn analyze(
    code: &str,
    language: Language,
    context: Option<&str>,
    imports: &ImportFuelTable,
    default_fuel_budget: u64,
) -> ExecutionGuidance {
    let facts = CodeFacts::new(code, language);
    let mut out = Analysis::default();
    let default_fuel_budget = default_fuel_budget.max(1);

    import_findings(&facts, imports, &mut out);
    loop_findings(&facts, &mut out, default_fuel_budget);
    path_findings(&facts, &mut out);
    api_findings(&facts, &mut out);
    state_findings(&facts, &mut out);
    language_mismatch(&facts, &mut out);

    let context = context.unwrap_or("").to_lowercase();
    let estimate = out.estimate(language, default_fuel_budget);
    let memory_need = out.memory_need;
    let session = recommend_session(
        &estimate,
        memory_need,
        out.sleep_seconds,
        &context,
        default_fuel_budget,
        out.patterns.contains("state_reliance"),
        &mut out,
    );
    let next_call = if out.blocking {
        None
    } else {
        session_next_call(code, language, &session, &context)
    };

    let mut patterns: Vec<String> = out.order.clone();
    patterns.dedup();
    ExecutionGuidance {
        language: language.to_string(),
        detected_patterns: patterns,
        findings: out.findings,
        imports: out.imports,
        estimated_fuel: estimate,
        recommended_session: session,
        warnings: dedup(out.warnings),
        suggestions: dedup(out.suggestions),
        next_call,
    }
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .collect()
}

/// Accumulates findings while the passes run.
#[derive(Default)]
struct Analysis {
    patterns: HashSet<&'static str>,
    order: Vec<String>,
    findings: Vec<Finding>,
    imports: Vec<ImportInfo>,
    warnings: Vec<String>,
    suggestions: Vec<String>,
    /// (source, low, expected, high) fuel contributions.
    fuel: Vec<(String, u64, u64, u64)>,
    import_costs: Vec<(String, u64)>,
    memory_need: u64,
    sleep_seconds: f64,
    /// The code will fail as written (unavailable module, path outside, endless loop, ...):
    /// no `execute_code` is proposed until it is fixed.
    blocking: bool,
}

impl Analysis {
    fn find(&mut self, pattern: &'static str, line: Option<u32>, detail: impl Into<String>) {
        if self.patterns.insert(pattern) {
            self.order.push(pattern.to_owned());
        }
        // Keep the output bounded on generated code with thousands of loops.
        if self.findings.len() < 40 {
            self.findings.push(Finding {
                pattern: pattern.to_owned(),
                line,
                detail: detail.into(),
            });
        }
    }

    fn warn(&mut self, text: impl Into<String>) {
        if self.warnings.len() < 30 {
            self.warnings.push(text.into());
        }
    }

    /// A warning about something that makes the code fail as written.
    fn block(&mut self, text: impl Into<String>) {
        self.blocking = true;
        self.warn(text);
    }

    fn suggest(&mut self, text: impl Into<String>) {
        if self.suggestions.len() < 20 {
            self.suggestions.push(text.into());
        }
    }

    fn estimate(&self, language: Language, budget: u64) -> FuelEstimate {
        let base = match language {
            Language::Python => BASE_FUEL_PYTHON,
            Language::JavaScript => BASE_FUEL_JS,
        };
        let mut items: Vec<FuelItem> = Vec::new();
        let (mut low, mut expected, mut high) = (base, base, base);

        // Imports overlap: between the most expensive one and the sum.
        if !self.import_costs.is_empty() {
            let sum: u64 = self.import_costs.iter().map(|(_, f)| *f).sum();
            let max = self.import_costs.iter().map(|(_, f)| *f).max().unwrap_or(0);
            let shared = max + ((sum - max) as f64 * SHARED_IMPORT_FACTOR) as u64;
            low += max;
            expected += shared;
            high = high.saturating_add(sum);
            let names: Vec<String> = self
                .import_costs
                .iter()
                .filter(|(_, f)| *f >= HEAVY_IMPORT_FUEL)
                .map(|(n, f)| format!("{n} {}", fmt_fuel(*f)))
                .collect();
            let label = if names.is_empty() {
                "imports (light)".to_owned()
            } else {
                format!("imports: {}", names.join(", "))
            };
            items.push(FuelItem {
                source: label,
                fuel: shared,
            });
        }
        for (source, l, e, h) in &self.fuel {
            low = low.saturating_add(*l);
            expected = expected.saturating_add(*e);
            high = high.saturating_add(*h);
            items.push(FuelItem {
                source: source.clone(),
                fuel: *e,
            });
        }
        items.sort_by_key(|i| std::cmp::Reverse(i.fuel));
        items.truncate(8);
        let shown: Vec<String> = items
            .iter()
            .take(4)
            .map(|i| format!("{} ~{}", i.source, fmt_fuel(i.fuel)))
            .collect();
        let share = expected as f64 / budget as f64 * 100.0;
        let summary = format!(
            "~{} fuel ({}–{}), {:.0}% of a {} budget{}",
            fmt_fuel(expected),
            fmt_fuel(low),
            fmt_fuel(high),
            share,
            fmt_fuel(budget),
            if shown.is_empty() {
                String::new()
            } else {
                format!(": {}", shown.join("; "))
            }
        );
        FuelEstimate {
            low,
            expected,
            high,
            summary,
            breakdown: items,
        }
    }
}

fn import_findings(facts: &CodeFacts<'_>, table: &ImportFuelTable, out: &mut Analysis) {
    let language = facts.language();
    let measured = facts.measured_imports(table);
    for import in facts.imports.iter().take(200) {
        let module = import.module.clone();
        let mut info = ImportInfo {
            module: module.clone(),
            line: import.line,
            status: "unmeasured".into(),
            package: None,
            fuel: None,
            note: None,
        };
        match import.kind {
            ImportKind::Python => {
                if let Some(why) = modules::missing_stdlib(&module) {
                    info.status = "unavailable".into();
                    info.note = Some(why.into());
                    out.find(
                        "unavailable_modules",
                        Some(import.line),
                        format!("{module}: not in this CPython build"),
                    );
                    out.block(format!("`import {module}` (line {}) fails: the module is not in the sandbox's CPython; {why}", import.line));
                } else if let Some((dist, alternative)) = modules::native_package(&module) {
                    info.status = "native".into();
                    info.package = Some(dist.into());
                    info.note = Some(format!("native extension; use {alternative}"));
                    out.find(
                        "native_packages",
                        Some(import.line),
                        format!("{module} ({dist}) has native code"),
                    );
                    out.block(format!("`{module}` (line {}) is a native package ({dist}): C extensions cannot load in the WebAssembly interpreter and install_package cannot add it", import.line));
                    out.suggest(format!("Instead of {module}: {alternative}."));
                } else if modules::network_package(&module) {
                    info.status = "no_effect".into();
                    info.package = Some(modules::pypi_name(&module));
                    info.note = Some("needs the network, which the sandbox does not have".into());
                    out.find(
                        "network",
                        Some(import.line),
                        format!("{module} is a network client"),
                    );
                    out.block(format!("`{module}` (line {}) is a network client: the sandbox has no network, so every request fails", import.line));
                } else {
                    if let Some(why) = modules::limited_stdlib(&module) {
                        info.status = "no_effect".into();
                        info.note = Some(why.into());
                        let pattern = limited_pattern(&module);
                        out.find(pattern, Some(import.line), format!("{module}: {why}"));
                        out.warn(format!("`{module}` (line {}) {why}", import.line));
                    }
                    if let Some((_, name, cost)) = measured.iter().find(|(wanted, _, _)| {
                        *wanted == module || wanted.starts_with(&format!("{module}."))
                    }) {
                        if info.status == "unmeasured" {
                            info.status = "measured".into();
                        }
                        info.fuel = Some(cost.fuel);
                        info.package = Some(cost.package.clone());
                        out.import_costs.push(((*name).to_owned(), cost.fuel));
                        if cost.fuel >= HEAVY_PATTERN_FUEL {
                            out.find(
                                "heavy_imports",
                                Some(import.line),
                                format!(
                                    "import {name}: {} fuel, {:.0} ms on first import",
                                    fmt_fuel(cost.fuel),
                                    cost.ms
                                ),
                            );
                        }
                    } else if info.status == "unmeasured" {
                        info.package = Some(modules::pypi_name(&module));
                        let (l, e, h) = UNMEASURED_IMPORT_FUEL;
                        out.fuel
                            .push((format!("import {module} (not measured)"), l, e, h));
                        out.find("third_party_imports", Some(import.line), format!("{module}: cost not measured; if it is not vendored, install_package {} first", modules::pypi_name(&module)));
                    }
                }
            }
            ImportKind::Vendor => {
                info.status = "vendored".into();
                if let Some((_, name, cost)) = measured.iter().find(|(w, _, _)| *w == module) {
                    info.fuel = Some(cost.fuel);
                    info.package = Some(cost.package.clone());
                    info.status = "measured".into();
                    out.import_costs.push(((*name).to_owned(), cost.fuel));
                } else if table.len(Language::JavaScript) > 0 {
                    info.note = Some("not in the vendored package list".into());
                    out.block(format!(
                        "requireVendor('{module}') (line {}): '{module}' is not a known vendored package; call list_available_packages {{\"language\": \"javascript\"}}",
                        import.line
                    ));
                }
                out.find(
                    "vendored_packages",
                    Some(import.line),
                    format!("requireVendor('{module}')"),
                );
            }
            ImportKind::Require => {
                info.status = if modules::node_builtin(&module).is_some() {
                    "node_builtin".into()
                } else {
                    "unavailable".into()
                };
                let alternative = modules::node_builtin(&module).unwrap_or(
                    "a vendored package via requireVendor(name), if list_available_packages lists one",
                );
                info.note = Some(alternative.into());
                out.find(
                    "js_require",
                    Some(import.line),
                    format!("require('{module}')"),
                );
                out.block(format!(
                    "require('{module}') (line {}) fails: this is QuickJS, not Node.js, and `require` does not exist",
                    import.line
                ));
                out.suggest(format!("Instead of require('{module}'): {alternative}."));
            }
            ImportKind::EsImport => {
                info.status = "es_module".into();
                info.note = Some("cells are scripts; import statements are syntax errors".into());
                out.find(
                    "js_import",
                    Some(import.line),
                    format!("import from '{module}'"),
                );
                out.block(format!(
                    "`import ... from '{module}'` (line {}) is a syntax error: each cell runs as a script, not an ES module",
                    import.line
                ));
                let alternative = modules::node_builtin(&module)
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("const lib = requireVendor('{module}') if it is vendored (see list_available_packages)"));
                out.suggest(format!("Instead of importing '{module}': {alternative}."));
            }
        }
        out.imports.push(info);
    }
    if language == Language::Python {
        let heavy: Vec<&(String, u64)> = out
            .import_costs
            .iter()
            .filter(|(_, f)| *f >= 300_000_000)
            .collect();
        if let Some((name, fuel)) = heavy.iter().max_by_key(|(_, f)| *f) {
            out.suggest(format!(
                "The first import of {name} costs {} fuel; later calls in the same session reuse the loaded module for free. For a tight budget, run the imports alone in a first call.",
                fmt_fuel(*fuel)
            ));
        }
    }
}

fn limited_pattern(module: &str) -> &'static str {
    match module.split('.').next().unwrap_or(module) {
        "subprocess" | "asyncio" => "subprocess",
        "threading" | "concurrent" => "threads",
        _ => "network",
    }
}

fn loop_findings(facts: &CodeFacts<'_>, out: &mut Analysis, budget: u64) {
    let (il, ie, ih) = match facts.language() {
        Language::Python => ITERATION_FUEL_PYTHON,
        Language::JavaScript => ITERATION_FUEL_JS,
    };
    let (ul, ue, uh) = UNKNOWN_ITERATIONS;
    let (nl, ne, nh) = UNKNOWN_INNER_ITERATIONS;
    let mut deepest = 0;
    for l in facts.loops.iter().take(500) {
        deepest = deepest.max(l.depth);
        if l.endless {
            out.find(
                "infinite_loop_risk",
                Some(l.line),
                format!("`{}` at line {} has no break/return: it runs until the fuel budget or the timeout stops it", l.header, l.line),
            );
            out.block(format!(
                "`{}` (line {}) never ends: it will use the whole fuel budget and fail with out_of_fuel; add a break condition",
                l.header, l.line
            ));
            out.fuel.push((
                format!("endless loop at line {}", l.line),
                budget,
                budget,
                budget,
            ));
            continue;
        }
        let inner = l.unknown_levels.saturating_sub(1).min(64) as i32;
        let iterations = |first: f64, nested: f64| {
            if l.unknown_levels == 0 {
                l.total_known
            } else {
                l.total_known * first * nested.powi(inner)
            }
        };
        let low = saturate(iterations(ul, nl) * il);
        let expected = saturate(iterations(ue, ne) * ie);
        let high = saturate((iterations(uh, nh) * ih).min(1e16));
        let size = match l.bound {
            Some(b) if l.unknown_levels == 0 => {
                format!("{} iterations in total", fmt_count(l.total_known.max(b)))
            }
            Some(_) | None if l.unknown_levels > 0 => "iterations depend on the data".to_owned(),
            _ => String::new(),
        };
        out.find(
            "loops",
            Some(l.line),
            format!("`{}` ({size})", clip(&l.header, 80)),
        );
        if l.depth >= 2 {
            out.find(
                "nested_loops",
                Some(l.line),
                format!(
                    "loop at line {} is nested {} deep: the work multiplies",
                    l.line, l.depth
                ),
            );
        }
        out.fuel
            .push((format!("loop at line {}", l.line), low, expected, high));
        if l.unknown_levels == 0 && expected as f64 > MAX_SUGGESTED_FUEL as f64 {
            out.block(format!(
                "the loop at line {} runs {} iterations (~{} fuel): more than any budget allows (max {}); reduce the range or sample the data",
                l.line,
                fmt_count(l.total_known),
                fmt_fuel(expected),
                fmt_fuel(MAX_SUGGESTED_FUEL)
            ));
        } else if l.unknown_levels == 0 && expected > budget / 2 {
            out.suggest(format!(
                "The loop at line {} (~{} iterations) alone needs about {} fuel: split it into chunks over several calls, or raise fuel_budget.",
                l.line,
                fmt_count(l.total_known),
                fmt_fuel(expected)
            ));
        }
    }
    if deepest >= 3 {
        out.suggest("Loops nested 3+ deep multiply quickly: precompute lookups (dict/set/Map) to drop a level.");
    }
    for (name, line) in facts.recursion.iter().take(10) {
        out.find(
            "recursion",
            Some(*line),
            format!("{name}() calls itself: deep inputs overflow the interpreter's fixed stack"),
        );
    }
    if !facts.recursion.is_empty() {
        let names: Vec<&str> = facts
            .recursion
            .iter()
            .map(|(n, _)| n.as_str())
            .take(3)
            .collect();
        out.suggest(format!(
            "Recursive {}: keep depth under ~1000 (Python) or rewrite with an explicit stack; memoize (functools.cache / a Map) when calls repeat.",
            names.join(", ")
        ));
    }
    for (what, line, bytes) in facts.large_allocations().into_iter().take(10) {
        out.find(
            "large_data",
            Some(line),
            format!("{what}: about {}", fmt_bytes(bytes)),
        );
        out.memory_need = out.memory_need.saturating_add(bytes);
    }
    // Sleeps take wall time, not fuel.
    for (callee, _, open) in &facts.calls {
        let seconds_per_unit = match (facts.language(), callee.as_str()) {
            (Language::Python, "time.sleep" | "sleep" | "asyncio.sleep") => 1.0,
            (Language::JavaScript, "os.sleep" | "setTimeout" | "os.setTimeout") => 0.001,
            _ => continue,
        };
        let src = &facts.src;
        let close = src.partner[*open];
        if close == scan::NONE {
            continue;
        }
        let depth = src.tokens[*open].depth + 1;
        let args: Vec<usize> = (*open + 1..close)
            .filter(|&k| src.is(k, ",") && src.tokens[k].depth == depth)
            .collect();
        let (from, to) = if callee.ends_with("setTimeout") {
            match args.first() {
                Some(&comma) => (comma + 1, args.get(1).copied().unwrap_or(close)),
                None => continue,
            }
        } else {
            (*open + 1, args.first().copied().unwrap_or(close))
        };
        if let Some(v) = scan::const_value(src, from, to) {
            out.sleep_seconds += v.max(0.0) * seconds_per_unit;
            out.find(
                "sleep",
                Some(src.tokens[*open].line),
                format!(
                    "{callee} waits {:.1} s (wall time, no fuel)",
                    v.max(0.0) * seconds_per_unit
                ),
            );
        }
    }
}

fn path_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let mut reported = HashSet::new();
    let mut file_io = false;
    for (callee, line, _) in &facts.calls {
        if is_file_call(callee) && callee != "connect" {
            if !file_io {
                out.find("file_io", Some(*line), format!("{callee}(...)"));
            }
            file_io = true;
        }
    }
    for lit in &facts.strings {
        let in_file_call = lit.call.as_deref().is_some_and(is_file_call);
        let class = classify_path(lit.text, in_file_call);
        if matches!(class, PathClass::NotAPath | PathClass::Inside) || !reported.insert(lit.text) {
            continue;
        }
        if reported.len() > 20 {
            break;
        }
        let shown = clip(lit.text, 120);
        match class {
            PathClass::Outside => {
                out.find(
                    "paths_outside_workspace",
                    Some(lit.line),
                    format!("'{shown}'"),
                );
                let why = if lit.text.starts_with("/mnt/data") {
                    "there is no /mnt/data here; the workspace is /app"
                } else if lit.text.starts_with('~') {
                    "there is no home directory; the working directory is /app"
                } else if lit.text.contains("..") {
                    "`..` cannot climb out of /app"
                } else if lit.text.as_bytes().get(1) == Some(&b':') {
                    "Windows paths do not exist in the sandbox"
                } else {
                    "host paths do not exist in the sandbox"
                };
                out.block(format!(
                    "'{shown}' (line {}) is outside the sandbox: {why}. Only /app (workspace and working directory), /tmp (scratch), /data (read-only) and /shared (if configured) exist",
                    lit.line
                ));
                out.suggest(format!(
                    "Put the file in /app and refer to it by a relative name, e.g. '{}'.",
                    suggested_relative(lit.text)
                ));
            }
            PathClass::ReadOnly => {
                let writes = facts.calls.iter().any(|(callee, line, open)| {
                    *line == lit.line && {
                        let close = facts.src.partner[*open];
                        let args: String = if close == scan::NONE {
                            String::new()
                        } else {
                            facts.src.tokens[*open..=close]
                                .iter()
                                .map(|t| match t.kind {
                                    Kind::Str => format!("'{}'", t.text),
                                    _ => t.text.to_owned(),
                                })
                                .collect()
                        };
                        is_write_call(callee, &args)
                    }
                });
                if writes {
                    out.find(
                        "paths_outside_workspace",
                        Some(lit.line),
                        format!("writes to '{shown}'"),
                    );
                    out.block(format!(
                        "'{shown}' (line {}) is under /data, which is read-only (vendored packages); write to /app or /tmp instead",
                        lit.line
                    ));
                }
            }
            _ => {}
        }
    }
}

/// `data.csv` for `/home/me/data.csv`: the file name, as a relative path under /app.
fn suggested_relative(path: &str) -> String {
    let name = path
        .rsplit(['/', '\\'])
        .find(|p| !p.is_empty() && *p != ".." && *p != "." && *p != "~")
        .unwrap_or("data.txt");
    clip(name, 60)
}

fn api_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let src = &facts.src;
    match facts.language() {
        Language::Python => {
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
            if src
                .tokens
                .iter()
                .any(|t| t.kind == Kind::Ident && t.text == "__file__")
            {
                out.block("`__file__` is not defined in a cell; use '/app' (the working directory) or os.getcwd()");
            }
        }
        Language::JavaScript => {
            for (callee, line, _) in facts.calls.iter() {
                match callee.as_str() {
                    "fetch" | "XMLHttpRequest" | "WebSocket" => {
                        out.find("network", Some(*line), format!("{callee}(...)"));
                        out.block(format!("{callee} (line {line}) does not exist: QuickJS in the sandbox has no network"));
                    }
                    "os.exec" | "std.popen" | "os.Worker" | "Worker" => {
                        out.find("subprocess", Some(*line), format!("{callee}(...)"));
                        out.block(format!("{callee} (line {line}) cannot work: the sandbox has no processes or threads"));
                    }
                    _ => {}
                }
            }
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
    }
}

fn state_findings(facts: &CodeFacts<'_>, out: &mut Analysis) {
    let free = scan::free_names(&facts.src, 12);
    if free.is_empty() {
        return;
    }
    let names: Vec<&str> = free.iter().map(|(n, _)| n.as_str()).collect();
    let (first, line) = &free[0];
    out.find(
        "state_reliance",
        Some(*line),
        format!(
            "uses {} without defining {}: they must exist from an earlier call",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ),
    );
    out.suggest(format!(
        "`{first}`{} must come from an earlier call in the same session: run this with the same session_id (or without one, in your default session) after the code that defines {}; after a session restart they are gone and must be recreated.",
        if names.len() > 1 { format!(" and {} other name(s)", names.len() - 1) } else { String::new() },
        if names.len() == 1 { "it" } else { "them" }
    ));
}

fn language_mismatch(facts: &CodeFacts<'_>, out: &mut Analysis) {
    if let Some(other) = looks_like_other_language(&facts.src) {
        out.find(
            "wrong_language",
            None,
            format!("the code looks like {other}"),
        );
        out.block(format!(
            "this code looks like {other} but language is {}: it will fail with a syntax error",
            facts.language()
        ));
    }
}

/// The other language's name when the code shows several of its tell-tale signs.
pub(crate) fn looks_like_other_language(src: &Source<'_>) -> Option<&'static str> {
    let t = &src.tokens;
    let mut score = 0;
    for i in 0..t.len().min(20_000) {
        let hit = match src.language {
            Language::Python => {
                (matches!(t[i].text, "const" | "let" | "var")
                    && t[i].kind == Kind::Ident
                    && src.ident(i + 1).is_some()
                    && src.is(i + 2, "="))
                    || (t[i].text == "console"
                        && src.is(i + 1, ".")
                        && src.ident(i + 2) == Some("log"))
                    || (t[i].kind == Kind::Op
                        && matches!(t[i].text, "===" | "!==" | "=>" | "&&" | "||"))
                    || (t[i].text == "function" && src.ident(i + 1).is_some() && src.is(i + 2, "("))
            }
            Language::JavaScript => {
                (t[i].line_start
                    && t[i].text == "def"
                    && src.ident(i + 1).is_some()
                    && src.is(i + 2, "("))
                    || (t[i].line_start
                        && t[i].text == "import"
                        && src.ident(i + 1).is_some()
                        && t.get(i + 2)
                            .is_none_or(|n| n.line != t[i].line || n.text == ","))
                    || (t[i].line_start
                        && t[i].text == "from"
                        && src.ident(i + 1).is_some()
                        && src.is(i + 2, "import"))
                    || (t[i].kind == Kind::Ident
                        && matches!(t[i].text, "elif" | "None" | "True" | "False" | "self")
                        && !src.is_member(i))
            }
        };
        if hit {
            score += 1;
            if score >= 2 {
                return Some(match src.language {
                    Language::Python => "JavaScript",
                    Language::JavaScript => "Python",
                });
            }
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn recommend_session(
    estimate: &FuelEstimate,
    memory_need: u64,
    sleep_seconds: f64,
    context: &str,
    default_fuel: u64,
    needs_state: bool,
    out: &mut Analysis,
) -> SessionRecommendation {
    let multi_turn = [
        "multi-turn",
        "multi turn",
        "agent",
        "workflow",
        "conversation",
        "incremental",
        "over several",
        "across calls",
        "persist",
        "notebook",
    ]
    .iter()
    .any(|w| context.contains(w));
    let big_data = ["large", "big", " gb", "gigabyte", "million", "huge"]
        .iter()
        .any(|w| context.contains(w));
    let fuel_need = nice_round_up(estimate.expected.saturating_mul(2)).min(MAX_SUGGESTED_FUEL);
    let memory_need =
        memory_need
            .saturating_mul(2)
            .max(if big_data { FLAVORS[1].memory_bytes } else { 0 });
    let seconds = estimate.expected as f64 / FUEL_PER_SECOND + sleep_seconds;
    let needs_more_fuel = fuel_need > default_fuel;
    let needs_more_memory = memory_need > FLAVORS[0].memory_bytes;
    let new_session = !needs_state && (needs_more_fuel || needs_more_memory || multi_turn);
    let flavor = flavor_for(
        if needs_more_fuel { fuel_need } else { 0 },
        memory_need.min(MAX_MEMORY_BYTES),
    )
    .unwrap_or(&FLAVORS[2]);
    // What the code needs, whichever session it ends up in.
    let bigger = needs_more_fuel || needs_more_memory;
    let fuel_budget = if bigger || new_session {
        fuel_need.max(flavor.fuel)
    } else {
        default_fuel
    };
    let floor = if bigger || new_session {
        flavor.timeout_secs
    } else {
        30
    };
    let timeout = ((seconds * 2.0).ceil() as u64).clamp(floor, MAX_TIMEOUT_SECS);

    if estimate.expected > MAX_SUGGESTED_FUEL {
        out.warn(format!(
            "estimated {} fuel is beyond the largest budget guidance proposes ({}): split the work across calls or shrink the input",
            fmt_fuel(estimate.expected),
            fmt_fuel(MAX_SUGGESTED_FUEL)
        ));
    } else if needs_more_fuel {
        let how = if needs_state {
            "a session keeps the budget it was created with, so split the work across calls or rebuild the state in a session created with a larger fuel_budget"
        } else {
            "create the session with the recommended fuel_budget first"
        };
        out.warn(format!(
            "estimated ~{} fuel leaves too little headroom in the default budget of {} (recommended: {}): {how}",
            fmt_fuel(estimate.expected),
            fmt_fuel(default_fuel),
            fmt_fuel(fuel_budget)
        ));
    }
    if seconds * 1.5 > MAX_TIMEOUT_SECS as f64 {
        out.warn(format!(
            "estimated ~{:.0} s of work is close to or over the {MAX_TIMEOUT_SECS} s timeout limit: process the data in chunks across several calls",
            seconds
        ));
    }
    if memory_need > MAX_MEMORY_BYTES {
        out.warn(format!(
            "the data needs about {} but a session has at most {}: stream it (process line by line or in chunks) instead of holding it in memory",
            fmt_bytes(memory_need / 2),
            fmt_bytes(MAX_MEMORY_BYTES)
        ));
    }
    if big_data {
        out.suggest("For large inputs, read and process files in chunks (line by line, or fixed-size blocks) and keep only aggregates in memory.");
    }

    let (session_type, reason) = if needs_state {
        (
            "same_session",
            format!(
                "the code uses names defined by earlier calls: run it in the session that has them (~{} fuel expected)",
                fmt_fuel(estimate.expected)
            ),
        )
    } else if new_session {
        let mut why = Vec::new();
        if needs_more_fuel {
            why.push(format!(
                "~{} fuel expected (default budget {})",
                fmt_fuel(estimate.expected),
                fmt_fuel(default_fuel)
            ));
        }
        if needs_more_memory {
            why.push(format!("~{} of data in memory", fmt_bytes(memory_need / 2)));
        }
        if multi_turn {
            why.push("a multi-turn workflow keeps its state in a named session".into());
        }
        ("new_session", why.join("; "))
    } else {
        (
            "default",
            format!(
                "~{} fuel expected, well within the default budget of {}",
                fmt_fuel(estimate.expected),
                fmt_fuel(default_fuel)
            ),
        )
    };
    SessionRecommendation {
        session_type: session_type.to_owned(),
        flavor: flavor.name.to_owned(),
        fuel_budget,
        timeout_seconds: timeout,
        memory_bytes: memory_need.clamp(flavor.memory_bytes, MAX_MEMORY_BYTES),
        auto_persist_globals: multi_turn,
        reason,
    }
}

fn session_next_call(
    code: &str,
    language: Language,
    session: &SessionRecommendation,
    context: &str,
) -> Option<NextCall> {
    match session.session_type.as_str() {
        "new_session" => {
            let mut args = json!({
                "language": language.as_str(),
                "session_id": session_slug(context, language),
                "flavor": session.flavor,
            });
            let flavor_fuel = FLAVORS
                .iter()
                .find(|f| f.name == session.flavor)
                .map_or(0, |f| f.fuel);
            if session.fuel_budget > flavor_fuel {
                args["fuel_budget"] = json!(session.fuel_budget);
            }
            if session.auto_persist_globals {
                args["auto_persist_globals"] = json!(true);
            }
            Some(NextCall::new(
                "create_session",
                args,
                format!(
                    "{}; then run the code with execute_code in that session",
                    session.reason
                ),
            ))
        }
        "default" if code.len() <= MAX_ECHOED_CODE && !code.trim().is_empty() => {
            let mut args = json!({"code": code, "language": language.as_str()});
            if session.timeout_seconds > 30 {
                args["timeout"] = json!(session.timeout_seconds);
            }
            Some(NextCall::new(
                "execute_code",
                args,
                "the default session's limits fit this code",
            ))
        }
        _ => None,
    }
}

/// A readable session id from the use-case text: "one-off Excel processing" → "excel-processing".
fn session_slug(context: &str, language: Language) -> String {
    const FILLER: &[&str] = &[
        "a",
        "an",
        "the",
        "for",
        "with",
        "and",
        "of",
        "to",
        "in",
        "one-off",
        "llm",
        "multi-turn",
    ];
    let words: Vec<String> = context
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty() && !FILLER.contains(w))
        .take(3)
        .map(|w| w.chars().take(16).collect())
        .collect();
    let slug = words.join("-");
    let slug = slug.trim_matches('-');
    if slug.is_empty()
        || !slug
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    {
        format!("{}-work", language.as_str())
    } else {
        slug.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ImportFuelTable {
        ImportFuelTable::builtin()
    }

    fn py(code: &str) -> ExecutionGuidance {
        analyze(code, Language::Python, None, &table(), 10_000_000_000)
    }

    fn js(code: &str) -> ExecutionGuidance {
        analyze(code, Language::JavaScript, None, &table(), 10_000_000_000)
    }

    fn has(g: &ExecutionGuidance, pattern: &str) -> bool {
        g.detected_patterns.iter().any(|p| p == pattern)
    }

    fn warned(g: &ExecutionGuidance, needle: &str) -> bool {
        g.warnings.iter().any(|w| w.contains(needle))
    }

    #[test]
    fn trivial_code_fits_the_default_session() {
        let g = py("print(sum(range(10)))");
        assert_eq!(g.recommended_session.session_type, "default");
        assert_eq!(g.recommended_session.flavor, "small");
        assert!(g.warnings.is_empty(), "{:?}", g.warnings);
        let call = g.next_call.unwrap();
        assert_eq!(call.tool, "execute_code");
        assert_eq!(call.arguments["language"], "python");
        assert!(g.estimated_fuel.expected < 100_000_000);
    }

    #[test]
    fn imports_are_priced_from_the_measured_table() {
        let g = py("import json, csv\nimport asyncio\nfrom xml.etree import ElementTree as ET\n");
        let asyncio = g.imports.iter().find(|i| i.module == "asyncio").unwrap();
        assert_eq!(asyncio.status, "measured");
        assert!(asyncio.fuel.unwrap() > 1_000_000_000);
        let et = g.imports.iter().find(|i| i.module == "xml.etree").unwrap();
        assert_eq!(
            et.fuel,
            table().get("xml.etree.ElementTree").map(|c| c.fuel)
        );
        assert!(has(&g, "heavy_imports"));
        let e = &g.estimated_fuel;
        assert!(e.low <= e.expected && e.expected <= e.high, "{e:?}");
        assert!(e.low >= table().get("asyncio").unwrap().fuel);
        assert!(e.summary.contains("asyncio"), "{}", e.summary);
    }

    #[test]
    fn unavailable_native_and_network_modules_are_warned() {
        let g = py(
            "import lzma\nimport numpy as np\nimport requests\nimport subprocess\nsubprocess.run(['ls'])\nimport threading\nthreading.Thread(target=f).start()\nimport yaml",
        );
        for pattern in [
            "unavailable_modules",
            "native_packages",
            "network",
            "subprocess",
            "threads",
            "third_party_imports",
        ] {
            assert!(has(&g, pattern), "{pattern}: {:?}", g.detected_patterns);
        }
        assert!(warned(&g, "lzma"));
        assert!(warned(&g, "numpy"));
        assert!(warned(&g, "requests"));
        assert!(
            g.next_call.is_none(),
            "code that fails as written gets no execute_code"
        );
        assert!(g.suggestions.iter().any(|s| s.contains("Instead of numpy")));
        let yaml = g.imports.iter().find(|i| i.module == "yaml").unwrap();
        assert_eq!(yaml.package.as_deref(), Some("pyyaml"));
    }

    #[test]
    fn loops_are_estimated_and_huge_ones_flagged() {
        let g = py("total = 0\nfor i in range(10**6):\n    total += i\n");
        let e = &g.estimated_fuel;
        // Measured: ~5.1B for this exact loop.
        assert!(e.low < 5_100_000_000 && 5_100_000_000 < e.high, "{e:?}");
        assert!(has(&g, "loops"));
        let g = py("for i in range(10**6):\n    for j in range(10**6):\n        pass\n");
        assert!(has(&g, "nested_loops"));
        assert!(
            warned(&g, "more than any budget allows"),
            "{:?}",
            g.warnings
        );
    }

    #[test]
    fn heavy_code_gets_a_new_session_with_a_valid_create_call() {
        let g = py("for i in range(4 * 10**6):\n    x = i * i\n");
        assert_eq!(g.recommended_session.session_type, "new_session");
        assert!(g.recommended_session.fuel_budget > 10_000_000_000);
        let call = g.next_call.clone().unwrap();
        assert_eq!(call.tool, "create_session");
        assert_eq!(call.arguments["language"], "python");
        assert!(["small", "medium", "large"].contains(&call.arguments["flavor"].as_str().unwrap()));
        assert!(warned(&g, "too little headroom"));
    }

    #[test]
    fn endless_loops_are_flagged() {
        let g = py("while True:\n    x = 1\n");
        assert!(has(&g, "infinite_loop_risk"));
        assert!(warned(&g, "never ends"));
        let g = js("while (true) { x++ }");
        assert!(has(&g, "infinite_loop_risk"));
        let g = py("while True:\n    if x: break\n");
        assert!(!has(&g, "infinite_loop_risk"));
    }

    #[test]
    fn paths_outside_the_workspace_are_warned() {
        let g = py(
            "open('/etc/passwd').read()\nopen('../secret.txt')\nopen('/mnt/data/x.csv')\nopen('C:\\\\Users\\\\me\\\\a.txt')\nopen('/data/out.txt', 'w')\nopen('data.csv')\nopen('/app/ok.txt')\nopen('/tmp/scratch')\nurl = '/api/users'\n",
        );
        assert!(has(&g, "paths_outside_workspace"));
        assert!(has(&g, "file_io"));
        for needle in [
            "/etc/passwd",
            "../secret.txt",
            "/mnt/data",
            "C:",
            "/data/out.txt",
        ] {
            assert!(warned(&g, needle), "{needle}: {:?}", g.warnings);
        }
        for fine in ["data.csv", "/app/ok.txt", "/tmp/scratch", "/api/users"] {
            assert!(
                !g.warnings.iter().any(|w| w.contains(&format!("'{fine}'"))),
                "{fine}: {:?}",
                g.warnings
            );
        }
        assert!(g.suggestions.iter().any(|s| s.contains("'passwd'")));
    }

    #[test]
    fn path_classes() {
        assert_eq!(classify_path("/app/x", false), PathClass::Inside);
        assert_eq!(classify_path("/app/../etc", false), PathClass::Outside);
        assert_eq!(classify_path("x/../../y", true), PathClass::Outside);
        assert_eq!(classify_path("x/../y", true), PathClass::Inside);
        assert_eq!(
            classify_path("/data/site-packages", false),
            PathClass::ReadOnly
        );
        assert_eq!(classify_path("/home/u/x", false), PathClass::Outside);
        assert_eq!(classify_path("/weird/x", true), PathClass::Outside);
        assert_eq!(classify_path("/weird/x", false), PathClass::NotAPath);
        assert_eq!(classify_path("~/x", false), PathClass::Outside);
        assert_eq!(classify_path("//cdn/x", true), PathClass::NotAPath);
        assert_eq!(classify_path("hello world", false), PathClass::NotAPath);
    }

    #[test]
    fn javascript_node_isms_and_tuple_misuse() {
        let g = js(
            "const fs = require('fs');\nimport path from 'path';\nconst files = os.readdir('/app');\nfiles.forEach(f => console.log(f));\nfetch('http://x');\nconsole.log(process.env.HOME, Buffer.from('a'));\n",
        );
        for pattern in [
            "js_require",
            "js_import",
            "quickjs_tuple_api",
            "network",
            "node_apis",
        ] {
            assert!(has(&g, pattern), "{pattern}: {:?}", g.detected_patterns);
        }
        assert!(warned(&g, "[value, error]"));
        assert!(
            g.suggestions
                .iter()
                .any(|s| s.contains("const [files, err] = os.readdir(...)")),
            "{:?}",
            g.suggestions
        );
        assert!(warned(&g, "`process`"));
        let g = js("const [files, err] = os.readdir('/app');");
        assert!(!warned(&g, "[value, error]"));
    }

    #[test]
    fn state_reliance_names_the_missing_names() {
        let g = py("df_summary = summarize(df)\nprint(df_summary)");
        assert!(has(&g, "state_reliance"));
        assert_eq!(g.recommended_session.session_type, "same_session");
        let finding = g
            .findings
            .iter()
            .find(|f| f.pattern == "state_reliance")
            .unwrap();
        assert!(
            finding.detail.contains("summarize, df"),
            "{}",
            finding.detail
        );
        assert!(!has(&py("x = 1\nprint(x)"), "state_reliance"));
    }

    #[test]
    fn context_drives_persistence_and_memory() {
        let g = analyze(
            "x = 1",
            Language::Python,
            Some("LLM agent multi-turn workflow"),
            &table(),
            10_000_000_000,
        );
        assert!(g.recommended_session.auto_persist_globals);
        assert_eq!(g.recommended_session.session_type, "new_session");
        let call = g.next_call.unwrap();
        assert_eq!(call.arguments["auto_persist_globals"], true);
        assert_eq!(call.arguments["session_id"], "agent-workflow");
        let g = analyze(
            "x = 1",
            Language::Python,
            Some("process a large CSV with millions of rows"),
            &table(),
            10_000_000_000,
        );
        assert_ne!(g.recommended_session.flavor, "small");
    }

    #[test]
    fn large_allocations_need_memory() {
        let g = py("buf = bytearray(3 * 10**9)\n");
        assert!(has(&g, "large_data"));
        assert!(warned(&g, "at most 4 GiB"), "{:?}", g.warnings);
        let g = py("xs = [0] * 10**8\n");
        assert!(has(&g, "large_data"));
        assert_eq!(
            g.recommended_session.flavor, "medium",
            "{:?}",
            g.recommended_session
        );
        let g = js("const a = new Float64Array(1e8);");
        assert!(has(&g, "large_data"));
    }

    #[test]
    fn language_mismatch_is_noticed() {
        let g = py("const x = 1;\nconsole.log(x);");
        assert!(has(&g, "wrong_language"));
        let g = js("def f(x):\n    return x\nprint(f(None))");
        assert!(has(&g, "wrong_language"));
        assert!(!has(&py("x = 1 and 2\nprint(x)"), "wrong_language"));
    }

    #[test]
    fn sleeps_raise_the_timeout() {
        let g = py("import time\ntime.sleep(100)\n");
        assert!(has(&g, "sleep"));
        assert!(g.recommended_session.timeout_seconds >= 200);
    }

    #[test]
    fn recursion_and_recursion_limit() {
        let g = py(
            "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n-1) if n else 0\nf(10**5)",
        );
        assert!(has(&g, "recursion"));
        assert!(warned(&g, "setrecursionlimit"));
    }

    #[test]
    fn never_panics_on_random_or_huge_input() {
        // A small deterministic generator: no extra dependency, reproducible failures.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"()[]{}'\"`\\/#*.=:;,\n\t forwhileimportdefconst0123456789_x$+-<>!?";
        let started = std::time::Instant::now();
        for round in 0..300 {
            let len = (next() % 400) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if round % 3 == 0 {
                        r as u8
                    } else {
                        alphabet[(r as usize) % alphabet.len()]
                    }
                })
                .collect();
            let code = String::from_utf8_lossy(&bytes);
            for language in [Language::Python, Language::JavaScript] {
                let g = analyze(&code, language, Some(&code), &table(), 10_000_000_000);
                assert!(g.estimated_fuel.low <= g.estimated_fuel.high);
                let _ = serde_json::to_string(&g).unwrap();
            }
        }
        // Huge inputs stay linear.
        let huge = "for i in range(10):\n    x = (1 + 2) * '/etc/passwd'[0]\n".repeat(40_000);
        let deep = "(".repeat(200_000) + &"[".repeat(200_000);
        let strings = "'".repeat(300_000);
        for code in [huge.as_str(), deep.as_str(), strings.as_str()] {
            for language in [Language::Python, Language::JavaScript] {
                let _ = analyze(code, language, None, &table(), 10_000_000_000);
            }
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "took {:?}",
            started.elapsed()
        );
    }
}
