//! The supervisor's layers, bottom first, and the tests that keep them. A module may name
//! (`crate::…`, in code or in a doc link) modules of its own layer or of a layer below, never
//! above; within a layer, names must not go round in a cycle, except rmcp's handler and its
//! tools (`server` ↔ `tools`: the `#[tool_router]` impls live with each tool). Test code is
//! free to reach anywhere. Guidance and the inventory of the interpreters are a crate of their
//! own (`sandbox-guidance`), below all of these. The README's "How it works" shows the same
//! list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every top-level module of the supervisor, in its layer, bottom first.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "host facts and identities",
        &[
            "descriptors",
            "notify",
            "jail_layers",
            "cgroup",
            "jail",
            "memory",
            "owner",
        ],
    ),
    ("configuration", &["config", "redact"]),
    ("files", &["workspace", "runtimes", "packages"]),
    ("workers", &["worker", "pool", "metrics"]),
    ("sessions", &["session", "executions"]),
    ("answers", &["report", "resources", "health", "background"]),
    ("engine", &["engine"]),
    ("tools", &["server", "tools"]),
    ("transports", &["guard", "http", "stdio", "check_config"]),
];

/// The one cycle the layers allow.
const ALLOWED_CYCLE: [&str; 2] = ["server", "tools"];

/// A name of one top-level module in another's non-test code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    /// The file (relative to `src`) and line it was first seen on.
    at: String,
}

/// The source with every `#[cfg(test)]` item left out (a module's block or a `mod x;` line).
fn non_test(source: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut kept = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find(MARK) {
        kept.push_str(&rest[..start]);
        let after = &rest[start + MARK.len()..];
        let (brace, semi) = (after.find('{'), after.find(';'));
        rest = match (brace, semi) {
            (Some(b), Some(s)) if s < b => &after[s + 1..],
            (None, Some(s)) => &after[s + 1..],
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                &after[end..]
            }
            (None, None) => "",
        };
    }
    kept.push_str(rest);
    kept
}

/// The top-level modules `source` names: `crate::name` and each name of `crate::{a, b::c}`.
fn named_modules(source: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (number, line) in non_test(source).lines().enumerate() {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or_default();
                for part in group.split(',') {
                    let name = ident(part.trim_start());
                    if !name.is_empty() {
                        names.push((number + 1, name));
                    }
                }
            } else {
                let name = ident(rest);
                if !name.is_empty() {
                    names.push((number + 1, name));
                }
            }
        }
    }
    names
}

/// Every top-level module of `src` (a `name.rs` or a `name/` directory; not `lib`, `main` or
/// this test-only one) with its files.
fn modules(src: &Path) -> BTreeMap<String, Vec<std::path::PathBuf>> {
    fn files(dir: &Path, into: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                files(&path, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                into.push(path);
            }
        }
    }
    let mut modules: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if ["lib", "main", "layers"].contains(&name.as_str()) {
            continue;
        }
        let found = modules.entry(name).or_default();
        if path.is_dir() {
            files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    modules.retain(|_, files| !files.is_empty());
    modules
}

/// Every name from one top-level module to another, first occurrence per pair.
fn edges(src: &Path) -> Vec<Edge> {
    let modules = modules(src);
    let mut edges = BTreeMap::new();
    for (from, files) in &modules {
        for file in files {
            let source = std::fs::read_to_string(file).unwrap();
            for (line, to) in named_modules(&source) {
                if &to != from && modules.contains_key(&to) {
                    let at = format!("{}:{line}", file.strip_prefix(src).unwrap().display());
                    edges.entry((from.clone(), to.clone())).or_insert(Edge {
                        from: from.clone(),
                        to,
                        at,
                    });
                }
            }
        }
    }
    edges.into_values().collect()
}

/// The layer of each module.
fn layer_of() -> BTreeMap<&'static str, usize> {
    let mut layer_of = BTreeMap::new();
    for (index, (_, members)) in LAYERS.iter().enumerate() {
        for module in *members {
            assert!(
                layer_of.insert(*module, index).is_none(),
                "{module} is placed twice"
            );
        }
    }
    layer_of
}

/// The names that go up a layer.
fn upward(edges: &[Edge], layer_of: &BTreeMap<&str, usize>) -> Vec<String> {
    edges
        .iter()
        .filter(|e| layer_of.get(e.to.as_str()) > layer_of.get(e.from.as_str()))
        .map(|e| {
            let name = |m: &str| LAYERS[layer_of[m]].0;
            format!(
                "{} ({}) names {} ({}) at {}",
                e.from,
                name(&e.from),
                e.to,
                name(&e.to),
                e.at
            )
        })
        .collect()
}

/// The cycles among `edges`, each as the modules of one strongly connected component.
fn cycles(edges: &[Edge]) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().push(&e.to);
    }
    // Reachability by search from each module: a few dozen modules, so quadratic is fine.
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(m) = todo.pop() {
            for n in next.get(m).into_iter().flatten() {
                if seen.insert(n.to_string()) {
                    todo.push(n);
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&str, BTreeSet<String>> = next.keys().map(|m| (*m, reach(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (m, from_m) in &reachable {
        if !from_m.contains(*m) || found.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let component = from_m
            .iter()
            .filter(|n| reachable.get(n.as_str()).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        found.push(component);
    }
    found
}

#[test]
fn every_module_is_in_exactly_one_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer_of = layer_of();
    let found = modules(&src);
    let unplaced: Vec<_> = (found.keys())
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(unplaced.is_empty(), "modules in no layer: {unplaced:?}");
    let gone: Vec<_> = (layer_of.keys())
        .filter(|m| !found.contains_key(**m))
        .collect();
    assert!(
        gone.is_empty(),
        "layers name modules that do not exist: {gone:?}"
    );
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(
        edges.len() > 50,
        "the scan found only {} names",
        edges.len()
    );
    let upward = upward(&edges, &layer_of());
    assert!(
        upward.is_empty(),
        "names that go up a layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_only_cycle_is_the_handler_and_its_tools() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeSet<String> = ALLOWED_CYCLE.iter().map(ToString::to_string).collect();
    let cycles = cycles(&edges(&src));
    let left: Vec<_> = cycles.iter().filter(|c| **c != allowed).collect();
    assert!(left.is_empty(), "import cycles: {left:?}");
}

#[test]
fn the_checks_see_upward_names_cycles_and_test_code_apart() {
    let source = "use crate::config::X;\nuse crate::{session::Y, tools};\n\
                  /// See [`crate::http::serve`].\n#[cfg(test)]\nmod tests {\n    \
                  use crate::guard::Z;\n    fn f() { if true { } }\n}\nuse crate::owner;\n";
    let named: Vec<String> = named_modules(source).into_iter().map(|(_, m)| m).collect();
    assert_eq!(named, ["config", "session", "tools", "http", "owner"]);

    let edge = |from: &str, to: &str| Edge {
        from: from.into(),
        to: to.into(),
        at: "x.rs:1".into(),
    };
    let layer_of = layer_of();
    let up = upward(
        &[edge("config", "session"), edge("session", "config")],
        &layer_of,
    );
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].starts_with("config (configuration) names session (sessions)"));

    let found = cycles(&[
        edge("a", "b"),
        edge("b", "c"),
        edge("c", "a"),
        edge("c", "d"),
        edge("server", "tools"),
        edge("tools", "server"),
    ]);
    let as_sets: Vec<Vec<&str>> = found
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(as_sets, [vec!["a", "b", "c"], vec!["server", "tools"]]);
}
