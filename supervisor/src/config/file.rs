//! The configuration file (`--config FILE`, `SANDBOX_CONFIG`): a TOML table of settings, the
//! layer below the environment and the flags. A key is an option's long name in snake_case
//! (`max_sessions = 64`, `allow_pypi = true`); each value is checked by the option's own clap
//! parser and then becomes the option's default, so clap alone decides flag > variable > file >
//! built-in default.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command};

/// The option that names the file: not a key in it (a file does not include another).
pub(super) const CONFIG_ID: &str = "config";

/// A configuration file, read and checked: every value is one its option accepts.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    pub path: PathBuf,
    /// Option id → value, as clap's parser takes it (paths already made absolute).
    values: BTreeMap<String, String>,
}

/// One thing wrong with a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileProblem {
    #[error("cannot read it: {0}")]
    Unreadable(String),
    #[error("not valid TOML: {0}")]
    Syntax(String),
    #[error("unknown key `{key}`{}", did_you_mean(suggestion.as_deref()))]
    UnknownKey {
        key: String,
        suggestion: Option<String>,
    },
    #[error("key `{key}`: expected {expected}, found {found}")]
    WrongType {
        key: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("key `{key}`: {reason}")]
    BadValue { key: String, reason: String },
}

/// Everything wrong with a configuration file, reported at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("configuration file {}{}", path.display(), list(problems))]
pub struct FileError {
    pub path: PathBuf,
    pub problems: Vec<FileProblem>,
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"))
}

fn list(problems: &[FileProblem]) -> String {
    match problems {
        [one] => format!(": {one}"),
        many => many
            .iter()
            .fold(format!(" has {} problems:", many.len()), |mut text, p| {
                let _ = write!(text, "\n  {p}");
                text
            }),
    }
}

/// The TOML type an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An on/off switch: a boolean.
    Switch,
    /// An option that takes `true` or `false` (on by default): a boolean.
    Toggle,
    /// A count, size or duration: a non-negative integer.
    Integer,
    /// A path: a string, relative to the file's directory.
    Path,
    /// Anything else (an address, a list, a filter): a string.
    Text,
}

impl Kind {
    fn of(arg: &Arg) -> Kind {
        let parsed = arg.get_value_parser().type_id();
        if !arg.get_action().takes_values() {
            Kind::Switch
        } else if parsed == TypeId::of::<bool>() {
            Kind::Toggle
        } else if parsed == TypeId::of::<u64>() {
            Kind::Integer
        } else if parsed == TypeId::of::<PathBuf>() {
            Kind::Path
        } else {
            Kind::Text
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Switch | Kind::Toggle => "a boolean",
            Kind::Integer => "an integer",
            Kind::Path | Kind::Text => "a string",
        }
    }
}

/// The key of `arg` in the file: its long name in snake_case. None for the options a file
/// cannot set (`--config`, `--help`, `--version`).
pub fn key_of(arg: &Arg) -> Option<String> {
    let shown = !matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
    );
    let long = arg
        .get_long()
        .filter(|_| shown && arg.get_id() != CONFIG_ID)?;
    Some(long.replace('-', "_"))
}

/// The default `--help` gives `arg`: clap's own default value, or the `[default: …]` its
/// description ends with (for options whose default is found at start-up, or a switch's).
pub fn documented_default(arg: &Arg) -> Option<String> {
    let values = arg.get_default_values();
    if arg.get_action().takes_values() && !values.is_empty() {
        let values: Vec<_> = values.iter().map(|v| v.to_string_lossy()).collect();
        return Some(values.join(","));
    }
    let help = arg.get_long_help().or(arg.get_help())?.to_string();
    let (_, default) = help.rsplit_once("[default: ")?;
    Some(default.strip_suffix(']')?.to_owned())
}

impl ConfigFile {
    /// Reads `path` and checks every key and value against `command`'s options.
    ///
    /// # Errors
    /// Every problem of the file: unreadable, not TOML, unknown keys, wrong types, values the
    /// option refuses.
    pub fn read(path: &Path, command: &Command) -> Result<Self, FileError> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&path, &text, command),
            Err(e) => Err(FileError {
                path,
                problems: vec![FileProblem::Unreadable(e.to_string())],
            }),
        }
    }

    /// Checks `text` as the file at `path` (whose directory relative paths start from).
    ///
    /// # Errors
    /// As [`ConfigFile::read`].
    pub fn parse(path: &Path, text: &str, command: &Command) -> Result<Self, FileError> {
        let fail = |problems| FileError {
            path: path.to_path_buf(),
            problems,
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| fail(vec![FileProblem::Syntax(e.to_string())]))?;
        let base = path.parent().unwrap_or(Path::new("/"));
        let keys: BTreeMap<String, &Arg> = command
            .get_arguments()
            .filter_map(|arg| Some((key_of(arg)?, arg)))
            .collect();
        let (mut values, mut problems) = (BTreeMap::new(), Vec::new());
        for (key, value) in &table {
            let Some(arg) = keys.get(key) else {
                let suggestion = suggest(key, keys.keys().map(String::as_str), command);
                problems.push(FileProblem::UnknownKey {
                    key: key.clone(),
                    suggestion,
                });
                continue;
            };
            match checked_value(arg, key, value, base) {
                Ok(text) => {
                    values.insert(arg.get_id().to_string(), text);
                }
                Err(problem) => problems.push(problem),
            }
        }
        if problems.is_empty() {
            Ok(Self {
                path: path.to_path_buf(),
                values,
            })
        } else {
            Err(fail(problems))
        }
    }

    /// Whether the file sets the option `id`.
    pub fn sets(&self, id: &str) -> bool {
        self.values.contains_key(id)
    }

    /// `command` with the file's values as its options' defaults.
    pub fn apply(&self, command: Command) -> Command {
        command.mut_args(|arg| match self.values.get(arg.get_id().as_str()) {
            Some(value) => arg.default_value(value.clone()),
            None => arg,
        })
    }
}

/// `value` as the text `arg`'s clap parser takes, once that parser accepted it.
fn checked_value(
    arg: &Arg,
    key: &str,
    value: &toml::Value,
    base: &Path,
) -> Result<String, FileProblem> {
    let kind = Kind::of(arg);
    let bad = |reason: String| FileProblem::BadValue {
        key: key.to_owned(),
        reason,
    };
    let text = match (kind, value) {
        (Kind::Switch | Kind::Toggle, toml::Value::Boolean(on)) => on.to_string(),
        (Kind::Integer, toml::Value::Integer(n)) if *n < 0 => {
            return Err(bad(format!("{n} is negative")));
        }
        (Kind::Integer, toml::Value::Integer(n)) => n.to_string(),
        // An empty variable means "unset"; in a file, leaving the key out says that.
        (Kind::Path | Kind::Text, toml::Value::String(text)) if text.is_empty() => {
            return Err(bad("empty (leave the key out for the default)".into()));
        }
        (Kind::Path, toml::Value::String(path)) => base.join(path).to_string_lossy().into_owned(),
        (Kind::Text, toml::Value::String(text)) => text.clone(),
        (_, other) => {
            return Err(FileProblem::WrongType {
                key: key.to_owned(),
                expected: kind.name(),
                found: type_name(other),
            });
        }
    };
    // The option alone, parsed from `--name=value`: its own value parser and bounds decide.
    let alone = Command::new("sandbox-mcp")
        .no_binary_name(true)
        .arg(arg.clone().env(None).global(false));
    let long = arg.get_long().unwrap_or_default();
    match (
        kind,
        alone.try_get_matches_from([format!("--{long}={text}")]),
    ) {
        (Kind::Switch, _) | (_, Ok(_)) => Ok(text),
        (_, Err(e)) => Err(bad(reason_of(&e))),
    }
}

/// What a clap parser said about a value, without clap's framing ("error: invalid value …").
fn reason_of(error: &clap::Error) -> String {
    use std::error::Error as _;
    if let Some(source) = error.source() {
        return source.to_string();
    }
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// The key `key` was probably meant to be: the same in snake_case (`max-sessions`), the key of
/// a variable (`SANDBOX_MAX_SESSIONS`), or the nearest key by edit distance, if near enough.
fn suggest<'k>(
    key: &str,
    keys: impl Iterator<Item = &'k str>,
    command: &Command,
) -> Option<String> {
    let keys: Vec<&str> = keys.collect();
    let snake = key.replace('-', "_");
    if keys.contains(&snake.as_str()) {
        return Some(snake);
    }
    let by_variable = command.get_arguments().find(|arg| {
        arg.get_env()
            .is_some_and(|env| env.eq_ignore_ascii_case(OsStr::new(key)))
    });
    if let Some(found) = by_variable.and_then(key_of) {
        return Some(found);
    }
    let (distance, nearest) = keys.iter().map(|k| (edit_distance(&snake, k), *k)).min()?;
    (distance <= (key.len() / 4).max(2)).then(|| nearest.to_owned())
}

/// Levenshtein distance: insertions, deletions and substitutions of characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::config::{MASK, Settings, Source, Task};

    /// A configuration file in a temporary directory.
    fn config_file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sandbox-mcp.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn parse_with(path: &Path, args: &[&str]) -> Result<Settings, clap::Error> {
        let config = ["sandbox-mcp", "--config", path.to_str().unwrap()];
        Settings::try_parse_args(config.iter().chain(args))
    }

    /// The problems of `text` as a configuration file.
    fn problems(text: &str) -> Vec<FileProblem> {
        let command = Settings::command_line();
        match ConfigFile::parse(Path::new("/etc/sandbox-mcp.toml"), text, &command) {
            Ok(file) => panic!("{text:?} was accepted: {file:?}"),
            Err(e) => e.problems,
        }
    }

    #[test]
    fn the_file_is_below_the_flags_and_above_the_defaults() {
        let (dir, path) = config_file(
            "max_sessions = 5\nsuspend_idle_secs = 9\nallow_pypi = true\nhttp = \"127.0.0.1:8765\"\n\
             worker_pool = \"python=1\"\nstate_dir = \"state\"\nhttp_token = \"s3cret-token\"\n",
        );
        let s = parse_with(&path, &["--max-sessions", "8"]).unwrap();
        assert_eq!(s.admission.max_sessions, 8);
        assert_eq!(s.admission.suspend_idle_secs, 9);
        assert!(s.packages.index);
        assert_eq!(s.transport.http, Some("127.0.0.1:8765".parse().unwrap()));
        assert_eq!(s.admission.worker_pool.to_string(), "python=1");
        assert_eq!(s.admission.principal_max_sessions, 16);
        // Relative paths start from the file's directory, not from wherever the server starts.
        assert_eq!(s.paths.state_dir, Some(dir.path().join("state")));
        let p = &s.provenance;
        assert_eq!(p.file.as_deref(), Some(path.as_path()));
        let source = |key| p.get(key).map(|e| e.source.clone());
        assert_eq!(source("max_sessions"), Some(Source::Flag));
        assert_eq!(source("suspend_idle_secs"), Some(Source::File));
        assert_eq!(source("allow_pypi"), Some(Source::File));
        assert_eq!(source("principal_max_sessions"), Some(Source::Default));
        assert_eq!(source("config"), Some(Source::Flag));
        assert_eq!(p.get("http_token").unwrap().value, MASK);
        assert!(!p.render().contains("s3cret"), "{}", p.render());
        assert!(!format!("{s:?}").contains("s3cret"));
        assert_eq!(p.get("max_sessions").unwrap().value, "8");
        assert_eq!(
            p.get("memory_budget_bytes").unwrap().value,
            "(three quarters of RAM)"
        );
    }

    #[test]
    fn every_option_works_before_or_after_check_config() {
        let (_dir, path) = config_file("max_sessions = 5\n");
        let path = path.to_str().unwrap();
        for args in [
            ["check-config", "--max-sessions", "3", "--config", path],
            ["--max-sessions", "3", "check-config", "--config", path],
            ["--config", path, "--max-sessions", "3", "check-config"],
        ] {
            let s = Settings::try_parse_args(std::iter::once("sandbox-mcp").chain(args)).unwrap();
            assert_eq!(s.task, Some(Task::CheckConfig), "{args:?}");
            assert_eq!(s.admission.max_sessions, 3, "{args:?}");
            assert_eq!(
                s.provenance.get("max_sessions").unwrap().source,
                Source::Flag
            );
        }
        let s =
            Settings::try_parse_args(["sandbox-mcp", "check-config", "--config", path]).unwrap();
        assert_eq!(s.admission.max_sessions, 5);
        let plain = Settings::try_parse_args(["sandbox-mcp"]).unwrap();
        assert_eq!(plain.task, None);
    }

    #[test]
    fn unknown_keys_are_named_with_the_nearest_key() {
        let suggested = |text: &str| match &problems(text)[..] {
            [FileProblem::UnknownKey { suggestion, .. }] => suggestion.clone(),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            suggested("max_sesions = 3").as_deref(),
            Some("max_sessions")
        );
        assert_eq!(
            suggested("max-sessions = 3").as_deref(),
            Some("max_sessions")
        );
        assert_eq!(
            suggested("SANDBOX_ALLOW_PYPI = true").as_deref(),
            Some("allow_pypi")
        );
        assert_eq!(
            suggested("index = true"),
            None,
            "the field name is not the key"
        );
        assert_eq!(suggested("frobnicate = 1"), None);
        assert_eq!(suggested("config = \"other.toml\""), None, "no includes");
        let problem = &problems("sesion_ttl_secs = 3")[0];
        assert_eq!(
            problem.to_string(),
            "unknown key `sesion_ttl_secs` (did you mean `session_ttl_secs`?)"
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused() {
        for (text, expected, found) in [
            ("max_sessions = \"256\"", "an integer", "a string"),
            ("allow_pypi = \"yes\"", "a boolean", "a string"),
            ("http = 8765", "a string", "an integer"),
            ("state_dir = [\"/a\"]", "a string", "an array"),
            ("default_fuel = 1.5", "an integer", "a float"),
        ] {
            let key = text.split(' ').next().unwrap().to_owned();
            assert_eq!(
                problems(text),
                [FileProblem::WrongType {
                    key,
                    expected,
                    found
                }],
                "{text}"
            );
        }
    }

    #[test]
    fn a_value_the_option_refuses_is_refused_with_its_reason() {
        for (text, reason) in [
            ("max_sessions = 0", "0 is not in 1.."),
            ("default_timeout_secs = 301", "301 is not in 1..=300"),
            ("suspend_idle_secs = -1", "-1 is negative"),
            ("worker_pool = \"ruby=1\"", "unknown runtime \"ruby\""),
            ("require = \"seccomp,teleport\"", "teleport"),
            ("http = \"localhost\"", "invalid socket address"),
            ("log_format = \"xml\"", "xml"),
            ("state_dir = \"\"", "empty (leave the key out"),
        ] {
            let key = text.split(' ').next().unwrap();
            match &problems(text)[..] {
                [FileProblem::BadValue { key: k, reason: r }] => {
                    assert_eq!(k, key);
                    assert!(r.contains(reason), "{text}: {r}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn every_problem_is_reported_at_once_naming_the_file() {
        let (_dir, path) = config_file("max_sesions = 3\nhttp = 1\nmax_code_bytes = 10\n");
        let error = parse_with(&path, &[]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
        let text = error.to_string();
        for part in [
            path.to_str().unwrap(),
            "unknown key `max_sesions` (did you mean `max_sessions`?)",
            "key `http`: expected a string, found an integer",
            "key `max_code_bytes`: 10 is not in 256..=16777216",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn an_unreadable_or_malformed_file_is_named() {
        let missing = parse_with(Path::new("/nonexistent/sandbox.toml"), &[]).unwrap_err();
        let text = missing.to_string();
        assert!(
            text.contains("/nonexistent/sandbox.toml") && text.contains("cannot read"),
            "{text}"
        );
        let (_dir, path) = config_file("max_sessions = \n");
        let text = parse_with(&path, &[]).unwrap_err().to_string();
        assert!(
            text.contains("not valid TOML") && text.contains("line 1"),
            "{text}"
        );
    }

    #[test]
    fn documented_defaults_come_from_clap_or_the_help_text() {
        let command = Settings::command();
        let default = |id: &str| {
            let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
            documented_default(arg)
        };
        assert_eq!(default("max_sessions").as_deref(), Some("256"));
        assert_eq!(default("log_format").as_deref(), Some("text"));
        assert_eq!(default("keep_state").as_deref(), Some("off"));
        assert_eq!(default("require").as_deref(), Some("none, best effort"));
        assert_eq!(
            default("worker_pool").as_deref(),
            Some(crate::config::settings::DEFAULT_WORKER_POOL)
        );
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("max_sesions", "max_sessions"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    /// Marks the child process of [`a_variable_beats_the_file`].
    const CHILD: &str = "SANDBOX_TEST_PRECEDENCE_CHILD";

    /// The environment layer is clap's own reading of the process environment, which a test
    /// must not change in its own (multi-threaded) process: the check runs in a child, this test
    /// binary again, with the variables set.
    #[test]
    fn a_variable_beats_the_file() {
        let (_dir, path) =
            config_file("max_sessions = 5\nsuspend_idle_secs = 9\nprincipal_max_sessions = 3\n");
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "config::file::tests::child_sees_flag_over_variable_over_file",
            ])
            .args(["--ignored", "--nocapture", "--test-threads", "1"])
            .env(CHILD, "1")
            .env("SANDBOX_CONFIG", &path)
            .env("SANDBOX_MAX_SESSIONS", "7")
            .env("SANDBOX_SUSPEND_IDLE_SECS", "11")
            .env("SANDBOX_PRINCIPAL_MAX_EXECUTIONS", "")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("1 passed"), "the child test ran: {stdout}");
    }

    #[test]
    #[ignore = "run by a_variable_beats_the_file in a child process with the variables set"]
    fn child_sees_flag_over_variable_over_file() {
        assert!(
            std::env::var_os(CHILD).is_some(),
            "run through a_variable_beats_the_file"
        );
        // SANDBOX_CONFIG names the file; the flag beats SANDBOX_MAX_SESSIONS, which beats the file.
        let s = Settings::try_parse_args(["sandbox-mcp", "--max-sessions", "8"]).unwrap();
        assert_eq!(s.admission.max_sessions, 8);
        assert_eq!(s.admission.suspend_idle_secs, 11);
        assert_eq!(s.admission.principal_max_sessions, 3);
        // An empty variable is unset: the default stands.
        assert_eq!(s.admission.principal_max_executions, 16);
        let source = |key| s.provenance.get(key).unwrap().source.clone();
        assert_eq!(source("config"), Source::Env("SANDBOX_CONFIG".into()));
        assert_eq!(source("max_sessions"), Source::Flag);
        assert_eq!(
            source("suspend_idle_secs"),
            Source::Env("SANDBOX_SUSPEND_IDLE_SECS".into())
        );
        assert_eq!(source("principal_max_sessions"), Source::File);
        assert_eq!(source("principal_max_executions"), Source::Default);
    }
}
