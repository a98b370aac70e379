//! `pip install ...` typed into `execute_command`: models reach for it out of habit, so a
//! command line that is only a pip install is read as requirements and answered by the
//! server's own installer instead of the shell (which has no pip).

use super::names;

/// Options of `pip install` that change nothing here and are accepted silently.
const HARMLESS_PIP_OPTIONS: [&str; 6] = [
    "-q",
    "--quiet",
    "-U",
    "--upgrade",
    "--user",
    "--no-cache-dir",
];

/// Characters that make a command line shell syntax rather than a plain install.
const SHELL_SYNTAX: &str = ";&|<>$`'\"(){}*?\\";

/// One requirement of a `pip install` line: a name and, with `==`, an exact version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub name: String,
    pub version: Option<String>,
}

impl Requirement {
    fn parse(word: &str) -> Self {
        match word.split_once("==") {
            Some((name, version)) => Self {
                name: name.to_owned(),
                version: Some(version.to_owned()),
            },
            None => Self {
                name: word.to_owned(),
                version: None,
            },
        }
    }
}

/// A command line that is only `pip install ...` (`pip3`, `python -m pip` too): its
/// requirements, or why an option is refused. `None` for anything else, which goes to the shell
/// (and the shell refuses `pip install` inside a longer command line).
pub fn pip_install_args(command: &str) -> Option<Result<Vec<Requirement>, String>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let rest = match words.as_slice() {
        ["pip" | "pip3", "install", rest @ ..]
        | ["python" | "python3", "-m", "pip", "install", rest @ ..] => rest,
        _ => return None,
    };
    // As sh reads them: quotes around a whole word are removed and what they hold is literal
    // (`'pandas>=2'`); anything else with shell syntax is the shell's.
    let rest: Vec<&str> = rest
        .iter()
        .map(|w| match unquoted(w) {
            Some(inner) => Some(inner),
            None => (!w.contains(|c| SHELL_SYNTAX.contains(c))).then_some(*w),
        })
        .collect::<Option<_>>()?;
    if rest.is_empty() {
        return None;
    }
    let mut requirements = Vec::new();
    for word in rest {
        if word.starts_with('-') {
            if HARMLESS_PIP_OPTIONS.contains(&word) {
                continue;
            }
            return Some(Err(format!(
                "pip option {} is not supported: install packages by name, e.g. `pip install tabulate==0.9.0`",
                names::quote(word)
            )));
        }
        requirements.push(Requirement::parse(word));
    }
    Some(Ok(requirements))
}

/// What one pair of quotes (single or double) around all of `word` holds, when they do and
/// hold no quote or backslash of their own.
fn unquoted(word: &str) -> Option<&str> {
    ['\'', '"'].iter().find_map(|q| {
        let inner = word.strip_prefix(*q)?.strip_suffix(*q)?;
        (!inner.is_empty() && !inner.contains(['\'', '"', '\\', '$', '`'])).then_some(inner)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(command: &str) -> Vec<(String, Option<String>)> {
        pip_install_args(command)
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|r| (r.name, r.version))
            .collect()
    }

    #[test]
    fn plain_installs_are_requirements_and_the_rest_is_the_shells() {
        assert_eq!(
            names("pip install -q tabulate==0.9.0 attrs"),
            [
                ("tabulate".to_owned(), Some("0.9.0".to_owned())),
                ("attrs".to_owned(), None)
            ]
        );
        assert_eq!(names("python3 -m pip install --upgrade six").len(), 1);
        for shell in [
            "pip install",
            "pip install x && ls",
            "pip install 'x",
            "pip install 'x'y'",
            "pip list",
            "ls",
            "pip install x; rm -r /app",
        ] {
            assert!(pip_install_args(shell).is_none(), "{shell}");
        }
        // Quotes around a whole word are the shell's, as in sh.
        assert_eq!(
            names("pip install 'requests>=2.28' \"attrs\""),
            [
                ("requests>=2.28".to_owned(), None),
                ("attrs".to_owned(), None)
            ]
        );
        let refused = pip_install_args("pip install -r requirements.txt").unwrap();
        assert!(refused.unwrap_err().contains("\"-r\""));
    }
}
