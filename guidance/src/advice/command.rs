//! Advice for `command_failed`: a shell command (`execute_command`) exited with a non-zero
//! status. The command's stderr is the evidence: a command the sandbox shell does not have
//! (and why: no network, no package manager, no root), a file that is not in /app, code run
//! with `python`/`node` that raised, or an option the built-in does not support. Without
//! such evidence the advice stays generic: read stderr.

use super::super::clip;
use super::super::docs::WORKSPACE;
use super::draft::Draft;

/// Commands models reach for that the sandbox cannot have, and why.
const UNAVAILABLE_COMMANDS: &[(&[&str], &str)] = &[
    (
        &[
            "curl", "wget", "ssh", "scp", "ping", "nc", "ftp", "http", "rsync", "git",
        ],
        "and the sandbox has no network: have the data passed in (in the code, or written to a file under /app)",
    ),
    (
        &["apt", "apt-get", "yum", "dnf", "apk", "brew", "conda"],
        "and there is no system package manager: Python packages install with `pip install NAME` (pure Python only); list_available_packages shows what is already there",
    ),
    (
        &["npm", "npx", "yarn", "pnpm"],
        "and there is no npm: JavaScript packages come only from the vendored set, loaded with `requireVendor('name')` (list_available_packages lists them)",
    ),
    (
        &["sudo", "su", "doas"],
        "and there is no root (nor any need for it): run the command without it; /app and /tmp are writable",
    ),
];

impl Draft<'_, '_> {
    pub(super) fn command_failed(&mut self) {
        let stderr = self.f.stderr;
        let first_error = stderr.lines().map(str::trim).find(|l| !l.is_empty());
        let message = clip(first_error.unwrap_or_else(|| self.message()), 200);
        self.summary = if message.is_empty() {
            "The command exited with a non-zero status.".to_owned()
        } else {
            format!("The command failed: {message}.")
        };
        self.doc(WORKSPACE);
        let explained = self.command_not_found(stderr)
            || self.command_missing_file(stderr)
            || self.command_code_raised(stderr)
            || self.command_bad_option(stderr);
        if !explained {
            self.fix("Read stderr: the command's own error message says what went wrong (a missing file, a bad option).");
        }
        self.fix("Commands run inside the sandbox, not on the host: only the sandbox's own commands exist, paths resolve under /app, and there is no network.");
        self.fix(format!(
            "For anything non-trivial, do the work in code with execute_code ({}), which reports structured errors.",
            self.lang()
        ));
    }

    /// `curl: command not found`: the command and why the sandbox lacks it.
    fn command_not_found(&mut self, stderr: &str) -> bool {
        let Some(command) = stderr
            .lines()
            .find_map(|l| l.trim().strip_suffix(": command not found"))
        else {
            return false;
        };
        let command = clip(command.trim(), 60);
        let why = UNAVAILABLE_COMMANDS
            .iter()
            .find(|(names, _)| names.contains(&command.as_str()))
            .map(|(_, why)| *why);
        self.fix(match why {
            Some(why) => format!("`{command}` is not a command in the sandbox shell, {why}."),
            None => format!(
                "`{command}` is not a command in the sandbox shell: it has only built-ins (`help` lists them); use `python -c` or `node -e` for anything else."
            ),
        });
        true
    }

    /// `cat: notes.txt: No such file or directory`: the file is not in /app.
    fn command_missing_file(&mut self, stderr: &str) -> bool {
        let Some(line) = stderr
            .lines()
            .find(|l| l.contains("No such file or directory"))
        else {
            return false;
        };
        let name = first_quoted(line).or_else(|| {
            // `tool: NAME: No such file or directory`
            let parts: Vec<&str> = line.split(": ").collect();
            (parts.len() >= 3).then(|| parts[parts.len() - 2].trim())
        });
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return false;
        };
        self.fix(format!(
            "'{}' does not exist in this session's /app (the working directory): `ls` lists what is there; check the name's spelling and case, or create the file first (files written in another session are not here).",
            clip(name, 200)
        ));
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
        self.fix(format!(
            "The code the command ran raised `{}`: run that code with execute_code instead, which explains the exception and keeps its variables in the session.",
            clip(last.trim_start_matches("Uncaught "), 200)
        ));
        true
    }

    /// `sort: unrecognized option '--x'`: the built-in does not support that option.
    fn command_bad_option(&mut self, stderr: &str) -> bool {
        let Some(line) = stderr.lines().find(|l| {
            let lower = l.to_lowercase();
            ["unrecognized option", "invalid option", "unknown option"]
                .iter()
                .any(|o| lower.contains(o))
        }) else {
            return false;
        };
        let command = line.split(':').next().unwrap_or("the command").trim();
        self.fix(format!(
            "The built-in `{}` does not support that option ({}): the sandbox's commands implement the common options only; `help` describes them. Drop the option or do the step in code.",
            clip(command, 40),
            clip(line.trim(), 120)
        ));
        true
    }
}

/// The first `'...'` quoted part of a line (`rm: cannot remove 'old.log': ...`).
fn first_quoted(line: &str) -> Option<&str> {
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(&line[start..end])
}
