//! Advice for `command_failed`: a shell command (`execute_command`) exited with a non-zero
//! status. The command's stderr is the evidence: a command the sandbox shell does not have
//! (and why: no network, no package manager, no root), a file that is not in /app, code run
//! with `python`/`node` that raised, or an option the built-in does not support. Without
//! such evidence the advice stays generic: read stderr. The words, and the commands the sandbox
//! cannot have, live in `words/command.toml`.

use super::super::clip;
use super::super::docs::WORKSPACE;
use super::draft::Draft;
use super::shell_habits::{
    expanded_heredoc, nested_quotes, split_variable, unmatched_glob, xargs_splits_names,
};
use crate::words::{self, say};

/// The tables of commands the sandbox cannot have, by kind (`words/command.toml`).
const UNAVAILABLE: &str = "command_failed.unavailable.";

/// Perl's character classes that GNU grep has no word for (it has `\\w \\s` and their
/// negations), each with the letter grep reads instead and the POSIX class to write.
const PERL_CLASSES: [(&str, &str, &str); 2] = [("\\d", "d", "[0-9]"), ("\\D", "D", "[^0-9]")];

impl Draft<'_, '_> {
    pub(super) fn command_failed(&mut self) {
        let stderr = self.f.stderr;
        let first_error = stderr.lines().map(str::trim).find(|l| !l.is_empty());
        // The summary ends the sentence itself: a message's own full stop is not doubled.
        let message = clip(first_error.unwrap_or_else(|| self.message()), 200);
        let message = message.strip_suffix('.').unwrap_or(&message).to_owned();
        self.summary = if message.is_empty() {
            words::text("command_failed.no_message").to_owned()
        } else {
            say!("command_failed.failed", message = message)
        };
        self.doc(WORKSPACE);
        // What the shell did to the line's quoting or here-doc, before what the tool said.
        let reshaped = self.nested_quotes() || self.expanded_heredoc();
        let known = self.known_fix("command_failed.known", &stderr.to_lowercase());
        if let Some(fix) = &known {
            self.fix(fix.clone());
        }
        let explained = reshaped
            || known.is_some()
            || self.nothing_matched(stderr)
            || self.inputs_differ(stderr)
            || self.read_without_stdin(stderr)
            || self.command_not_found(stderr)
            || self.command_missing_file(stderr)
            || self.command_code_raised(stderr)
            || self.command_bad_option(stderr);
        if !explained {
            let message = tool_message(stderr);
            self.fix(match message {
                Some((Some(command), message)) => say!(
                    "command_failed.tool_says",
                    command = command,
                    message = clip(message, 160)
                ),
                Some((None, message)) => {
                    say!("command_failed.a_tool_says", message = clip(message, 160))
                }
                None => words::text("command_failed.read_stderr").to_owned(),
            });
        }
        self.rule_with("command_failed", &[("language", &self.lang())]);
    }

    /// An inline program with its own quotes inside (`python -c '...{'a': 1}...'`, `node -e "..."...""`):
    /// the program ran without the quotes the shell took, whatever it then said.
    fn nested_quotes(&mut self) -> bool {
        let Some((option, quote, inner)) = nested_quotes(self.f.code) else {
            return false;
        };
        let id = if quote == '"' {
            "command_failed.nested_double_quotes"
        } else {
            "command_failed.nested_single_quotes"
        };
        self.fix(say!(id, option = option, inner = clip(inner, 40)));
        true
    }

    /// A here-doc whose unquoted delimiter let the shell expand `$2` or an unset name in its
    /// body: whatever failed then read a body that was not the one written.
    fn expanded_heredoc(&mut self) -> bool {
        let Some((delimiter, expansion)) = expanded_heredoc(self.f.code) else {
            return false;
        };
        let bare = delimiter.trim_matches(['\'', '"', '\\']).to_owned();
        self.fix(say!(
            "command_failed.expanded_heredoc",
            delimiter = clip(&delimiter, 40),
            expansion = clip(&expansion, 40),
            bare = clip(&bare, 40)
        ));
        true
    }

    /// `grep` that matched nothing: status 1 and no word on stderr, which grep's convention
    /// makes an answer, not an error; unless its pattern has a Perl class (`\\d`) that grep
    /// without `-P` reads as a letter, which is then the cause.
    fn nothing_matched(&mut self, stderr: &str) -> bool {
        let status_1 = self.message().ends_with("status 1");
        let greps: Vec<&str> = (self.f.code.split(['|', ';', '&', '\n']))
            .filter(|stage| {
                matches!(
                    stage.split_whitespace().next(),
                    Some("grep" | "egrep" | "fgrep")
                )
            })
            .collect();
        let matched_nothing = stderr.trim().is_empty() && status_1 && !greps.is_empty();
        if !matched_nothing {
            return false;
        }
        let perl_class = greps
            .iter()
            .filter(|stage| {
                !stage
                    .split_whitespace()
                    .any(|w| w == "-P" || w == "--perl-regexp")
            })
            .find_map(|stage| {
                PERL_CLASSES
                    .iter()
                    .find(|(class, ..)| stage.contains(class))
            });
        self.fix(match perl_class {
            Some((class, letter, posix)) => say!(
                "command_failed.nothing_matched_perl_class",
                class,
                letter,
                posix
            ),
            None => words::text("command_failed.nothing_matched").to_owned(),
        });
        true
    }

    /// `diff` or `cmp` whose inputs differ: status 1 and no word on stderr, which their
    /// convention makes the answer (the differences are on stdout), not an error; trouble is
    /// status 2 with a message.
    fn inputs_differ(&mut self, stderr: &str) -> bool {
        let status_1 = self.message().ends_with("status 1");
        let comparer = (self.f.code.split(['|', ';', '&', '\n'])).find_map(|stage| {
            stage
                .split_whitespace()
                .next()
                .filter(|word| matches!(*word, "diff" | "cmp"))
        });
        let Some(command) = comparer.filter(|_| status_1 && stderr.trim().is_empty()) else {
            return false;
        };
        self.summary = say!("command_failed.inputs_differ_summary", command);
        self.fix(say!("command_failed.inputs_differ", command));
        true
    }

    /// `read` that found no input: it fails with status 1 and says nothing, because a command
    /// line has no stdin (nobody can type an answer to a prompt); a `read` fed by a pipe or a
    /// redirect is not this.
    fn read_without_stdin(&mut self, stderr: &str) -> bool {
        if !stderr.trim().is_empty() || !self.message().ends_with("status 1") {
            return false;
        }
        let reads_stdin = self.f.code.split([';', '&', '\n']).any(|command| {
            // Only the first stage of a pipeline reads the line's own stdin.
            let first = command.split('|').next().unwrap_or("");
            let words: Vec<&str> = first.split_whitespace().collect();
            let start = words
                .iter()
                .position(|w| !matches!(*w, "if" | "then" | "!" | "do"));
            start.is_some_and(|at| words[at] == "read")
                && !first.contains('<')
                && !command.contains('|')
        });
        if reads_stdin {
            self.fix(words::text("command_failed.no_stdin"));
        }
        reads_stdin
    }

    /// `curl: command not found`: the command and why the sandbox lacks it. The toolbox's own
    /// `bc: not a command of this toolbox` (exit 127, a name it was called by but does not
    /// hold) says the same.
    fn command_not_found(&mut self, stderr: &str) -> bool {
        let Some(command) = stderr.lines().find_map(|l| {
            let l = l.trim();
            l.strip_suffix(": command not found")
                .or_else(|| l.strip_suffix(": not a command of this toolbox"))
        }) else {
            return false;
        };
        let command = clip(command.trim(), 60);
        let why = words::list("command_failed.unavailable_kinds")
            .iter()
            .find(|kind| words::list(&format!("{UNAVAILABLE}{kind}.commands")).contains(&command))
            .map(|kind| words::text(&format!("{UNAVAILABLE}{kind}.why")));
        self.fix(match why {
            Some(why) => say!("command_failed.not_found_why", command = command, why = why),
            None => say!("command_failed.not_found", command = command),
        });
        true
    }

    /// `cat: notes.txt: No such file or directory` (or Info-ZIP's `unzip:  cannot find or open
    /// data.zip, data.zip.zip or data.zip.ZIP.`): the file is not in /app.
    fn command_missing_file(&mut self, stderr: &str) -> bool {
        const INFO_ZIP: &str = "cannot find or open ";
        let Some(line) = stderr
            .lines()
            .find(|l| l.contains("No such file or directory") || l.contains(INFO_ZIP))
        else {
            return false;
        };
        let name = match line.split_once(INFO_ZIP) {
            Some((_, named)) => named.split(", ").next().map(str::trim),
            None => first_quoted(line).or_else(|| {
                // `tool: NAME: No such file or directory`
                let parts: Vec<&str> = line.split(": ").collect();
                (parts.len() >= 3).then(|| parts[parts.len() - 2].trim())
            }),
        };
        // `jq: error: Could not open file data.json: ...`: the name is the word of that text
        // the command line wrote, not the whole sentence.
        let code = self.f.code;
        let name = name.map(|n| {
            if n.contains(' ') && !code.contains(n) {
                n.split_whitespace()
                    .rev()
                    .find(|w| code.contains(w))
                    .unwrap_or(n)
            } else {
                n
            }
        });
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return false;
        };
        // `> logs/run.log`: what is missing is the directory the file would be written into.
        let written = [">", ">>"].iter().any(|op| {
            let code = self.f.code;
            code.contains(&format!("{op} {name}")) || code.contains(&format!("{op}{name}"))
        });
        if let Some((dir, _)) = name
            .rsplit_once('/')
            .filter(|(dir, _)| written && !dir.is_empty())
        {
            self.fix(say!(
                "command_failed.missing_directory",
                dir = clip(dir, 200)
            ));
            return true;
        }
        // What the shell did to the words: a pattern that matched nothing, a variable split
        // at its blanks, names split by xargs.
        let name = clip(name, 200);
        if unmatched_glob(&name) {
            self.fix(say!("command_failed.unmatched_glob", name));
        } else if let Some((var, value)) = split_variable(self.f.code, &name) {
            let value = clip(value, 80);
            self.fix(say!("command_failed.split_variable", var, value, name));
        } else if xargs_splits_names(self.f.code) {
            self.fix(say!("command_failed.xargs_split", name));
        } else {
            self.fix(say!("command_failed.missing_file", name));
        }
        true
    }

    /// `python FILE` / `python -c` / `node -e` ran code that raised: quote the exception.
    fn command_code_raised(&mut self, stderr: &str) -> bool {
        if !(stderr.contains("Traceback (most recent call last)") || stderr.contains("Uncaught ")) {
            return false;
        }
        let last = stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("at "))
            .unwrap_or("");
        self.fix(say!(
            "command_failed.code_raised",
            exception = clip(last.trim_start_matches("Uncaught "), 200)
        ));
        true
    }

    /// `sort: unrecognized option '--x'`: the built-in does not support that option.
    fn command_bad_option(&mut self, stderr: &str) -> bool {
        let Some(line) = stderr.lines().find(|l| {
            let lower = l.to_lowercase();
            words::list("command_failed.option_errors")
                .iter()
                .any(|o| lower.contains(o.as_str()))
        }) else {
            return false;
        };
        // `split` yields at least one part. uutils' tools (clap) say `error: unexpected
        // argument '--x' found` and name themselves on their `Usage: sort ...` line.
        let mut command = line.split(':').next().unwrap_or_default().trim();
        if command == "error"
            && let Some(usage) = stderr
                .lines()
                .find_map(|l| l.trim().strip_prefix("Usage: "))
        {
            command = usage.split_whitespace().next().unwrap_or(command);
        }
        self.fix(say!(
            "command_failed.bad_option",
            command = clip(command, 40),
            line = clip(line.trim(), 120)
        ));
        true
    }
}

/// The first line of stderr in the form `tool: message` (GNU's form for a tool's own error),
/// as (tool, message); not the shell's own lines (`sh: ...`). uutils' option errors (clap)
/// say `error: ...` and name the tool on a `Usage:` line, when they have one (else no tool).
fn tool_message(stderr: &str) -> Option<(Option<&str>, &str)> {
    let line = stderr.lines().map(str::trim).find(|l| !l.is_empty())?;
    if let Some(message) = line.strip_prefix("error: ") {
        let usage = stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("Usage: "));
        let command = usage.and_then(|u| u.split_whitespace().next());
        return Some((command, message.trim()));
    }
    let (command, message) = line.split_once(": ")?;
    let named = !command.is_empty()
        && command.len() <= 32
        && command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '['))
        && !matches!(command, "sh" | "bash" | "error" | "warning");
    let message = message.trim();
    (named && !message.is_empty()).then_some((Some(command), message))
}

/// The first `'...'` quoted part of a line (`rm: cannot remove 'old.log': ...`).
fn first_quoted(line: &str) -> Option<&str> {
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(&line[start..end])
}
