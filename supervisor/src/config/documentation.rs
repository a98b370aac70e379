//! The documentation of the settings, checked against their definition: the README's
//! Configuration table and `sandbox-mcp.example.toml` must name every option with the default
//! `--help` gives it, so neither drifts when an option is added or changed.

use std::collections::BTreeMap;
use std::path::Path;

use clap::{Arg, ArgAction, CommandFactory};

use super::Settings;
use super::file::{ConfigFile, documented_default, key_of};

const README: &str = include_str!("../../../README.md");
const EXAMPLE: &str = include_str!("../../sandbox-mcp.example.toml");

/// A row of the README's table, its cells without backticks.
#[derive(Debug)]
struct Row {
    key: String,
    variable: String,
    default: String,
}

/// The README's `## Configuration` section.
fn readme_section() -> &'static str {
    let (_, section) = README
        .split_once("\n## Configuration\n")
        .expect("the README has a ## Configuration section");
    section.split("\n## ").next().unwrap_or(section)
}

/// The rows of the section's table, by flag.
fn readme_rows() -> BTreeMap<String, Row> {
    readme_section()
        .lines()
        .filter(|line| line.starts_with('|'))
        .filter_map(|line| {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().replace('`', ""))
                .collect();
            let [key, flag, variable, default, _meaning] = <[String; 5]>::try_from(cells).ok()?;
            let is_flag = flag
                .strip_prefix("--")
                .is_some_and(|name| name.starts_with(|c: char| c.is_ascii_lowercase()));
            is_flag.then_some((
                flag,
                Row {
                    key,
                    variable,
                    default,
                },
            ))
        })
        .collect()
}

/// The options an operator sets (not `--help` or `--version`).
fn options() -> Vec<Arg> {
    Settings::command()
        .get_arguments()
        .filter(|arg| {
            !matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .cloned()
        .collect()
}

#[test]
fn the_readme_table_has_every_option_with_its_default() {
    let rows = readme_rows();
    let mut tabled = 0;
    for arg in options() {
        let flag = format!(
            "--{}",
            arg.get_long().expect("every option has a long flag")
        );
        if arg.is_hide_short_help_set() {
            // Testing-only options have a note of their own, not a row.
            assert!(
                readme_section().contains(&format!("`{flag}`")),
                "{flag} is not mentioned"
            );
            continue;
        }
        let row = (rows.get(&flag)).unwrap_or_else(|| panic!("{flag} has no row in the README"));
        tabled += 1;
        let key = key_of(&arg).unwrap_or_else(|| "—".into());
        assert_eq!(row.key, key, "{flag}");
        let variable = arg.get_env().map(|v| v.to_string_lossy().into_owned());
        assert_eq!(Some(&row.variable), variable.as_ref(), "{flag}");
        let default = documented_default(&arg)
            .unwrap_or_else(|| panic!("{flag} documents no default in --help"));
        assert_eq!(
            row.default, default,
            "{flag}: the README's default is not --help's"
        );
    }
    assert_eq!(
        rows.len(),
        tabled,
        "rows for options that do not exist: {rows:#?}"
    );
}

#[test]
fn the_example_file_sets_every_key_to_its_default() {
    // Its `# key = value` lines, uncommented, make a configuration file the server accepts.
    let assignments: Vec<&str> = EXAMPLE
        .lines()
        .filter_map(|line| line.strip_prefix("# "))
        .filter(|line| {
            line.split_once(" = ")
                .is_some_and(|(key, _)| key.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        })
        .collect();
    let text = assignments.join("\n");
    let command = Settings::command_line();
    let file = ConfigFile::parse(Path::new("/etc/sandbox-mcp.toml"), &text, &command)
        .unwrap_or_else(|e| panic!("the example does not parse: {e}"));
    let table: toml::Table = text.parse().unwrap();
    for arg in options() {
        let Some(key) = key_of(&arg) else {
            continue;
        };
        assert!(file.sets(arg.get_id().as_str()), "the example lacks {key}");
        let given = match &table[&key] {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(on) => on.to_string(),
            other => panic!("{key}: {other:?} is no option's type"),
        };
        if !arg.get_action().takes_values() {
            assert_eq!(given, "false", "{key}: a switch is off by default");
        } else if !arg.get_default_values().is_empty() {
            assert_eq!(Some(given), documented_default(&arg), "{key}");
        }
    }
}
