//! Where each effective setting came from (a flag, a variable, the configuration file, the
//! default) and its value with secrets masked: what `check-config` prints.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

use super::file::{CONFIG_ID, ConfigFile, documented_default, key_of};

/// What a secret looks like wherever settings are shown.
pub const MASK: &str = "********";

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The command line.
    Flag,
    /// This environment variable.
    Env(String),
    /// The configuration file.
    File,
    /// The built-in default (or unset).
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => f.write_str("flag"),
            Source::Env(name) => write!(f, "env {name}"),
            Source::File => f.write_str("file"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// One setting as it ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    /// The key in the file (the option's name in snake_case; `config` for the file itself).
    pub key: String,
    /// The value, secrets masked; `(…)` for an unset option, with what it defaults to.
    pub value: String,
    pub source: Source,
    /// Only the end-to-end tests use it (hidden from `-h`).
    pub testing_only: bool,
}

/// Where every setting came from, in `--help` order.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// The configuration file read, if any.
    pub file: Option<PathBuf>,
    pub settings: Vec<Effective>,
}

impl Provenance {
    /// Reads what clap matched (with `file`'s values as defaults) into sources and values.
    pub fn record(command: &Command, matches: &ArgMatches, file: Option<&ConfigFile>) -> Self {
        let settings = command
            .get_arguments()
            .filter_map(|arg| {
                let id = arg.get_id().as_str();
                let key = key_of(arg).or_else(|| (id == CONFIG_ID).then(|| id.to_owned()))?;
                let source = match matches.value_source(id) {
                    Some(ValueSource::CommandLine) => Source::Flag,
                    Some(ValueSource::EnvVariable) => Source::Env(
                        arg.get_env()
                            .map(|e| e.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    ),
                    Some(ValueSource::DefaultValue) if file.is_some_and(|f| f.sets(id)) => {
                        Source::File
                    }
                    _ => Source::Default,
                };
                let raw: Option<Vec<String>> = matches
                    .get_raw(id)
                    .map(|values| values.map(|v| v.to_string_lossy().into_owned()).collect());
                let value = match raw {
                    Some(_) if arg.is_hide_env_values_set() => MASK.to_owned(),
                    Some(values) => values.join(","),
                    None => format!(
                        "({})",
                        documented_default(arg).unwrap_or_else(|| "unset".into())
                    ),
                };
                Some(Effective {
                    key,
                    value,
                    source,
                    testing_only: arg.is_hide_short_help_set(),
                })
            })
            .collect();
        Self {
            file: file.map(|f| f.path.clone()),
            settings,
        }
    }

    /// The setting with file key `key`.
    pub fn get(&self, key: &str) -> Option<&Effective> {
        self.settings.iter().find(|s| s.key == key)
    }

    /// A table of the settings, one per line: key, value, source. Testing-only settings are
    /// left out while they have their defaults.
    pub fn render(&self) -> String {
        let shown: Vec<&Effective> = (self.settings.iter())
            .filter(|s| !s.testing_only || s.source != Source::Default)
            .collect();
        let key_width = shown.iter().map(|s| s.key.len()).max().unwrap_or(0);
        let value_width = shown
            .iter()
            .map(|s| s.value.len())
            .max()
            .unwrap_or(0)
            .min(40);
        shown.iter().fold(String::new(), |mut text, s| {
            let _ = writeln!(
                text,
                "  {:key_width$}  {:value_width$}  {}",
                s.key, s.value, s.source
            );
            text
        })
    }
}
