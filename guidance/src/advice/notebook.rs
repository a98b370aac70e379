//! Advice for notebook habits in Python: IPython's `!command` and `%magic` lines are not
//! Python, so the cell fails to parse. Each habit has one right answer here: `!pip install x`
//! and `%pip install x` are `install_package`, any other `!command` is `execute_command` (a
//! GNU-like shell over the session's files), display magics such as `%matplotlib inline` do
//! nothing (figures come back by themselves), and `%timeit` is the `timeit` module. The
//! words live in `words/syntax.toml` (`[notebook]`).

use sandbox_protocol::ErrorType;
use serde_json::{Value, json};

use super::super::{MAX_ECHOED_CODE, NextCall, clip};
use super::draft::Draft;
use crate::words::{self, say};

/// Magics that only set up IPython's display or extensions: without IPython, nothing to do.
const DISPLAY_MAGICS: &[&str] = &[
    "matplotlib",
    "config",
    "load_ext",
    "reload_ext",
    "autoreload",
];

/// What a notebook line asks for.
enum Habit<'c> {
    /// `!pip install ...` or `%pip install ...`: the packages, with an optional `==version`.
    Install(Vec<(&'c str, Option<&'c str>)>),
    /// `!command args`.
    Shell(&'c str),
    /// `%matplotlib inline` and the like.
    Display,
    /// `%timeit stmt` (or `%time stmt`).
    Timing(&'c str),
    /// Any other `%magic` or `%%cell magic`.
    Magic,
}

impl Draft<'_, '_> {
    /// Advice for the first notebook line of the code (the error's line when it is one); false
    /// when the code has none.
    pub(super) fn notebook_habit(&mut self) -> bool {
        let code = self.f.code;
        let line = self
            .error_line()
            .filter(|l| is_notebook_line(l))
            .or_else(|| code.lines().find(|l| is_notebook_line(l)));
        let Some(line) = line.map(str::trim) else {
            return false;
        };
        let shown = clip(line, 120);
        match habit(line) {
            Habit::Install(packages) => self.install_advice("notebook.install", &shown, &packages),
            Habit::Shell(command) => {
                self.rule_with("notebook.shell", &[("line", &shown), ("command", &command)]);
                let args = json!({"command": command, "language": "python"});
                let reason = words::text("notebook.shell_reason");
                self.next = Some(NextCall::new(
                    "execute_command",
                    self.with_session(args),
                    reason,
                ));
            }
            Habit::Display => {
                let magic = line.split_whitespace().next().unwrap_or(line);
                self.rule_with("notebook.display", &[("line", &shown), ("magic", &magic)]);
                self.rerun_without_display_magics();
            }
            Habit::Timing(statement) => {
                let statement = python_string(&clip(statement, 120));
                self.rule_with(
                    "notebook.timing",
                    &[("line", &shown), ("statement", &statement)],
                );
            }
            Habit::Magic => {
                let magic = line.split_whitespace().next().unwrap_or(line);
                self.rule_with("notebook.magic", &[("line", &shown), ("magic", &magic)]);
            }
        }
        true
    }

    /// Code that is shell commands, one per line (`ls -la /app`, `head -n 5 data.csv`): the
    /// answer is `execute_command` (or `install_package` for `pip install`). False when any
    /// line is not a command line.
    pub(super) fn shell_as_code(&mut self) -> bool {
        let lines: Vec<&str> = self
            .f
            .code
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let commands = words::list("shell_as_code.commands");
        if !lines.is_empty() && !lines.iter().all(|l| is_command_line(l, commands)) {
            return self.command_line_in_code(commands);
        }
        if lines.is_empty() || lines.len() > 5 {
            return false;
        }
        if let [line] = lines[..]
            && let Habit::Install(packages) = habit(line)
        {
            // `pip install x` as code: the notebook's install advice, without the `!`.
            self.install_advice("shell_as_code.install", &clip(line, 120), &packages);
            return true;
        }
        let command = lines.join(" && ");
        let language = if self.python() {
            "Python"
        } else {
            "JavaScript"
        };
        let shown = clip(&command, 120);
        self.rule_with(
            "shell_as_code",
            &[("command", &shown), ("language", &language)],
        );
        let args = json!({"command": command, "language": self.lang()});
        self.next = Some(NextCall::new(
            "execute_command",
            self.with_session(args),
            words::text("notebook.shell_reason"),
        ));
        true
    }

    /// `install_package` for the packages a pip line names, the first as the next call.
    fn install_advice(&mut self, rule: &str, shown: &str, packages: &[(&str, Option<&str>)]) {
        let names = packages
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ");
        self.rule_with(rule, &[("line", &shown), ("packages", &names)]);
        if let Some((package, version)) = packages.first() {
            let mut args = json!({"package": package, "language": self.lang()});
            if let Some(version) = version {
                args["version"] = json!(version);
            }
            let reason = say!("notebook.install_reason", package = package);
            self.next = Some(NextCall::new(
                "install_package",
                self.with_session(args),
                reason,
            ));
        }
    }

    /// Code that does not parse because one of its lines is a shell command (`pip install x`
    /// or `ls data/` above the Python): that line, on its own, is the cause. False when the
    /// failure is not a syntax error or its line is not a command line.
    fn command_line_in_code(&mut self, commands: &[String]) -> bool {
        if self.f.error_type != ErrorType::SyntaxError {
            return false;
        }
        let Some(line) = self
            .error_line()
            .map(str::trim)
            .filter(|l| is_command_line(l, commands))
        else {
            return false;
        };
        let shown = clip(line, 120);
        if let Habit::Install(packages) = habit(line) {
            self.install_advice("shell_as_code.install", &shown, &packages);
            return true;
        }
        let language = if self.python() {
            "Python"
        } else {
            "JavaScript"
        };
        self.rule_with(
            "shell_as_code.mixed",
            &[("command", &shown), ("language", &language)],
        );
        true
    }

    /// `args` with this session's id when it has a valid one, and without the language then
    /// (the session says it).
    fn with_session(&self, args: Value) -> Value {
        let mut args = self.session_args(args);
        if args.get("session_id").is_some()
            && let Some(map) = args.as_object_mut()
        {
            map.remove("language");
        }
        args
    }

    /// The same code without its display magics, when nothing else stands in the way.
    fn rerun_without_display_magics(&mut self) {
        let code = self.f.code;
        let kept: Vec<&str> = code
            .lines()
            .filter(|l| !matches!(habit_of_notebook_line(l), Some(Habit::Display)))
            .collect();
        let rest = kept.join("\n");
        if rest.trim().is_empty()
            || rest.len() > MAX_ECHOED_CODE
            || rest.lines().any(is_notebook_line)
        {
            return;
        }
        let args = self.session_args(json!({"code": rest, "language": "python"}));
        self.next = Some(NextCall::new(
            "execute_code",
            args,
            words::text("notebook.display_reason"),
        ));
    }
}

/// A name `install_package` takes: letters, digits, `-`, `_` and `.`, starting with a letter
/// or digit (no paths, URLs, extras or options).
fn valid_package_name(name: &str) -> bool {
    name.len() <= 100
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// `text` as a Python string literal.
fn python_string(text: &str) -> String {
    if !text.contains('\'') {
        format!("'{text}'")
    } else if !text.contains('"') {
        format!("\"{text}\"")
    } else {
        format!("'''{text}'''")
    }
}

/// A line that is a shell command: a known command first, then options, paths or file names,
/// and nothing that only code has (a call's parenthesis, an assignment, a block's colon).
fn is_command_line(line: &str, commands: &[String]) -> bool {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let rest: Vec<&str> = words.collect();
    let code_only = line.contains('(') || line.contains(" = ") || line.ends_with(':');
    // `git status`, `npm test`: a command and a bare subcommand, two names side by side,
    // which no Python or JavaScript statement is.
    let subcommand = matches!(rest.as_slice(), [word] | [word, _] | [word, _, _]
        if word.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
    commands.iter().any(|c| c == first)
        && !code_only
        && (rest.is_empty()
            || rest.first() == Some(&"install")
            || subcommand
            || rest.iter().any(|w| {
                w.starts_with('-') || w.contains('/') || w.contains('.') || w.contains('*')
            }))
}

/// A line IPython would treat as a shell command or a magic: `!...` or `%...` first.
fn is_notebook_line(line: &str) -> bool {
    let line = line.trim_start();
    (line.starts_with('!') && !line.starts_with("!=")) || line.starts_with('%')
}

fn habit_of_notebook_line(line: &str) -> Option<Habit<'_>> {
    is_notebook_line(line).then(|| habit(line.trim()))
}

/// What a trimmed notebook line asks for.
fn habit(line: &str) -> Habit<'_> {
    let (bang, body) = match line.strip_prefix('!') {
        Some(rest) => (true, rest.trim()),
        None => (false, line.trim_start_matches('%').trim()),
    };
    let mut words = body.split_whitespace();
    let first = words.next().unwrap_or("");
    let pip = match first {
        "pip" | "pip3" => true,
        "python" | "python3" => {
            words.next() == Some("-m") && matches!(words.next(), Some("pip" | "pip3"))
        }
        _ => false,
    };
    if pip && words.next() == Some("install") {
        let packages: Vec<(&str, Option<&str>)> = words
            .filter(|w| !w.starts_with('-'))
            .map(|w| w.trim_matches(['"', '\'']))
            .map(|w| match w.split_once("==") {
                Some((name, version)) => (name, Some(version)),
                None => (w, None),
            })
            .filter(|(name, _)| valid_package_name(name))
            .collect();
        if !packages.is_empty() {
            return Habit::Install(packages);
        }
    }
    if bang {
        return if body.is_empty() {
            Habit::Magic
        } else {
            Habit::Shell(body)
        };
    }
    let statement = body[first.len()..].trim();
    match first {
        m if DISPLAY_MAGICS.contains(&m) => Habit::Display,
        "timeit" | "time" if !statement.is_empty() => Habit::Timing(statement),
        _ => Habit::Magic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_ipython_reads_them() {
        assert!(matches!(habit("!pip install -q tabulate==0.9.0 rich"),
            Habit::Install(p) if p == [("tabulate", Some("0.9.0")), ("rich", None)]));
        assert!(matches!(habit("%pip install tabulate"), Habit::Install(p) if p.len() == 1));
        assert!(matches!(
            habit("!python -m pip install x"),
            Habit::Install(_)
        ));
        assert!(matches!(habit("!ls -la /app"), Habit::Shell("ls -la /app")));
        assert!(matches!(habit("!pip list"), Habit::Shell("pip list")));
        assert!(matches!(habit("%matplotlib inline"), Habit::Display));
        assert!(matches!(
            habit("%timeit sum(range(9))"),
            Habit::Timing("sum(range(9))")
        ));
        assert!(matches!(habit("%%writefile a.txt"), Habit::Magic));
        assert!(!is_notebook_line("x != 1"));
        assert!(!is_notebook_line("a % b"));
        assert!(is_notebook_line("  !ls"));
    }
}
