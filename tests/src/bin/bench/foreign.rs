//! `--against 'CMD ARGS'`: another MCP server, started from a command line, measured with the
//! same calls as ours. This module splits the command line, connects, and measures what needs
//! a fresh connection (the first call of a server without sessions).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sandbox_tests::bench_support::CommandServer;

use crate::subject::{Lang, SharedClient, Subject};

/// Splits a command line the way a POSIX shell splits words: blanks separate words; single
/// quotes keep everything literally; double quotes keep blanks, and a backslash in them escapes
/// only `"`, `\`, `$` and `` ` ``; a backslash outside quotes escapes any character. No
/// expansion of variables, globs or `~` is done.
///
/// # Errors
/// An unterminated quote or a trailing backslash, or no words at all.
pub fn split_command(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => text.push(c),
                        None => bail!("unterminated ' in {line:?}"),
                    }
                }
            }
            '"' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => text.push(c),
                            Some(c) => text.extend(['\\', c]),
                            None => bail!("unterminated \" in {line:?}"),
                        },
                        Some(c) => text.push(c),
                        None => bail!("unterminated \" in {line:?}"),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => bail!("a trailing backslash in {line:?}"),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if words.is_empty() {
        bail!("an empty server command");
    }
    Ok(words)
}

/// A connected server and the [`Subject`] that measures it. Stop it with [`Connected::stop`].
pub struct Connected {
    server: Arc<CommandServer>,
    pub subject: Arc<Subject>,
}

impl Connected {
    /// Starts `command` and learns its tools.
    ///
    /// # Errors
    /// When it does not start, the handshake fails, or no tool runs code.
    pub async fn start(command: &[String]) -> Result<Connected> {
        let server = Arc::new(CommandServer::start(command).await?);
        let pid = server.pid;
        let shared: SharedClient = Arc::clone(&server) as SharedClient;
        let subject = Subject::new(shared, pid).await.with_context(|| {
            format!(
                "{}: its stderr ends: {}",
                command.join(" "),
                server.stderr_tail()
            )
        })?;
        Ok(Connected {
            server,
            subject: Arc::new(subject),
        })
    }

    /// The end of the server's stderr, for an error message.
    pub fn stderr_tail(&self) -> String {
        self.server.stderr_tail()
    }

    /// Closes the connection, so the server exits as stdio servers do at EOF (it is killed
    /// instead if something still holds the subject).
    pub async fn stop(self) {
        drop(self.subject);
        if let Ok(server) = Arc::try_unwrap(self.server) {
            let _ = server.stop().await;
        }
    }
}

/// For a server without sessions, "first call" is the first call after connecting: `samples`
/// times, a fresh server is started, connected, and its first call of `lang`'s trivial cell
/// timed (the handshake and tool listing are not counted).
///
/// # Errors
/// When a server does not start or its first call fails.
pub async fn first_calls_after_connecting(
    command: &[String],
    lang: Lang,
    samples: usize,
) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let connected = Connected::start(command).await?;
        let ran = connected.subject.run(lang, lang.trivial, None).await;
        let tail = connected.stderr_tail();
        connected.stop().await;
        let (_, elapsed) = ran.with_context(|| format!("its stderr ends: {tail}"))?;
        times.push(elapsed);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_command(line).unwrap()
    }

    #[test]
    fn blanks_separate_words() {
        assert_eq!(
            split("target/release/sandbox-mcp"),
            ["target/release/sandbox-mcp"]
        );
        assert_eq!(
            split("  npx -y\t@pydantic/mcp-run-python   stdio "),
            ["npx", "-y", "@pydantic/mcp-run-python", "stdio"]
        );
    }

    #[test]
    fn quotes_keep_blanks_and_join_with_neighbours() {
        assert_eq!(
            split(r#"deno run --allow-read='/a b' "x y".ts"#),
            ["deno", "run", "--allow-read=/a b", "x y.ts"]
        );
        assert_eq!(
            split("a '' b"),
            ["a", "", "b"],
            "an empty quoted word counts"
        );
        assert_eq!(split(r"'a\b'"), [r"a\b"], "no escapes in single quotes");
    }

    #[test]
    fn backslashes_escape_as_a_shell_would() {
        assert_eq!(split(r"a\ b c"), ["a b", "c"]);
        assert_eq!(split(r#""say \"hi\" \n""#), [r#"say "hi" \n"#]);
        assert_eq!(split(r#""$HOME""#), ["$HOME"], "no expansion");
    }

    #[test]
    fn broken_command_lines_are_errors() {
        assert!(split_command("a 'b").is_err());
        assert!(split_command("a \"b").is_err());
        assert!(split_command("a \\").is_err());
        assert!(split_command("   ").is_err());
    }
}
