//! Short documentation pages served as MCP resources (`sandbox://docs/<topic>`), written for a
//! model to read in one go. Advice links to them through `related_docs`. Each page is a markdown
//! file, `docs/<topic>.md`, compiled in; its title and description are its front matter.
//!
//! They state what this server does, not what sandboxes usually do, and stay small (all pages
//! together under 12 KB, checked by a test) so a model can afford to read them. The numbers
//! they quote are checked against their sources: the flavor table
//! ([`sandbox_protocol::FLAVORS`]), every [`sandbox_protocol::ErrorType`], and the measured
//! import costs.

use std::sync::LazyLock;

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

/// Every page's file, in reading order.
const PAGES: [(&str, &str); 6] = [
    (WORKSPACE, include_str!("../docs/workspace.md")),
    (FUEL, include_str!("../docs/fuel.md")),
    (SESSIONS, include_str!("../docs/sessions.md")),
    (PYTHON, include_str!("../docs/python.md")),
    (JAVASCRIPT, include_str!("../docs/javascript.md")),
    (ERRORS, include_str!("../docs/errors.md")),
];

/// Every page, in reading order.
pub static DOCS: LazyLock<Vec<Doc>> =
    LazyLock::new(|| PAGES.iter().map(|&(uri, file)| page(uri, file)).collect());

/// A page from its file: a front matter of `title: ...` and `description: ...` lines between
/// `---` lines, then the markdown served.
fn page(uri: &'static str, file: &'static str) -> Doc {
    let (front, markdown) = file
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .unwrap_or(("", file));
    let field = |key: &str| {
        front
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
            .unwrap_or_default()
    };
    Doc {
        uri,
        title: field("title"),
        description: field("description"),
        markdown,
    }
}

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
        for d in DOCS.iter() {
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
