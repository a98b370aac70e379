//! Where commands read and write: the outcome's capped stdout and stderr, pipe buffers between
//! pipeline stages (and for command substitutions), what goes to redirection files (gathered
//! here, and written inside the sandbox when the redirection ends, `files.rs`), and stdin as
//! bytes in memory with a read position its copies share.
//!
//! Every output is bounded: a [`Sink`] keeps its first bytes and says when it dropped the rest,
//! which is how a producer learns that its reader will see no more (the shell's SIGPIPE), a
//! redirection gathers at most [`PIPE_CAP`] bytes, and files together take at most
//! [`WRITE_BUDGET`] bytes per call.

use std::cell::Cell;
use std::rc::Rc;

use super::parser::Script;

/// The most a pipe (or a `<` redirection) holds: bounds memory, and stops endless producers.
/// The same as a WebAssembly tool may write, so that a tool piped or redirected loses nothing.
pub(crate) const PIPE_CAP: usize = crate::toolbox::TOOL_OUTPUT_CAP;

/// Bytes all commands of one `execute` may write into files together. RLIMIT_FSIZE bounds each
/// file; this bounds their sum so `seq 1 1e12 > a; ... > b` cannot fill the disk before the
/// deadline.
pub(crate) const WRITE_BUDGET: u64 = 1 << 30;

/// Where a file descriptor writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Stdout,
    Stderr,
    /// A pipe buffer, by index into [`Io`]'s stack of pipes.
    Pipe(usize),
    /// A redirection file, by index into [`Io`]'s open files.
    File(usize),
    Null,
}

/// A capped buffer: keeps the first `cap` bytes and remembers it dropped the rest.
#[derive(Debug)]
pub(crate) struct Sink {
    pub buf: Vec<u8>,
    cap: usize,
    pub truncated: bool,
}

impl Sink {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cap,
            truncated: false,
        }
    }

    /// Appends what fits; `false` once anything was dropped (the reader will not get more).
    fn push(&mut self, data: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.buf.len());
        if data.len() > room {
            self.buf.extend_from_slice(&data[..room]);
            self.truncated = true;
            return false;
        }
        self.buf.extend_from_slice(data);
        !self.truncated
    }
}

/// What a command wrote to a redirection file, to append to it when the redirection ends.
pub(crate) struct OutFile {
    /// The path as the command line named it, for messages.
    pub shown: String,
    /// The absolute guest path, fixed when the redirection was made (a `cd` inside a
    /// redirected block does not move it).
    pub guest: String,
    pub data: Vec<u8>,
    pub failed: bool,
    /// Opened without asking the sandbox (`>>` of a file this call's redirections already
    /// made): the write-back creates it again if it went, even with nothing written.
    pub unchecked: bool,
    /// Made by `exec > file`: it stays open, past the command that made it, to the end of
    /// the call.
    pub kept: bool,
}

/// Every output of a script: the outcome's streams, pipe buffers and redirection files.
pub(crate) struct Io {
    pub stdout: Sink,
    pub stderr: Sink,
    pipes: Vec<Sink>,
    files: Vec<Option<OutFile>>,
    /// The guest paths this call's redirections opened: a loop's `>> f` asks the sandbox once.
    opened: std::collections::HashSet<String>,
    /// The files of this call's process substitutions (`<(...)`, `>(...)`), removed when their
    /// command ends.
    pub temporaries: Vec<String>,
    /// The `>(...)` whose command is still running: each one's file and the script that reads
    /// it when the command ends.
    pub readers: Vec<(String, Rc<Script>)>,
    /// Bytes written into files so far (see [`WRITE_BUDGET`]).
    pub written: u64,
}

impl Io {
    pub(crate) fn new(stdout_cap: usize, stderr_cap: usize) -> Self {
        Self {
            stdout: Sink::new(stdout_cap),
            stderr: Sink::new(stderr_cap),
            pipes: Vec::new(),
            files: Vec::new(),
            opened: std::collections::HashSet::new(),
            temporaries: Vec::new(),
            readers: Vec::new(),
            written: 0,
        }
    }

    /// Writes to a target; `false` when the reader will not see (all of) it, so producers stop.
    pub(crate) fn write(&mut self, t: Target, data: &[u8]) -> bool {
        match t {
            Target::Stdout => self.stdout.push(data),
            Target::Stderr => self.stderr.push(data),
            Target::Pipe(i) => self.pipes.get_mut(i).is_some_and(|p| p.push(data)),
            Target::Null => true,
            Target::File(i) => {
                let Self {
                    files,
                    stderr,
                    written,
                    ..
                } = self;
                let Some(Some(f)) = files.get_mut(i) else {
                    return false;
                };
                if f.failed {
                    return false;
                }
                *written += data.len() as u64;
                let refused = if *written > WRITE_BUDGET {
                    Some(format!(
                        "File too large (the shell writes at most {} MiB per call)",
                        WRITE_BUDGET >> 20
                    ))
                } else if f.data.len() + data.len() > PIPE_CAP {
                    Some(format!(
                        "File too large (a redirection takes at most {} MiB per command: write \
                         in parts with >>, or from python)",
                        PIPE_CAP >> 20
                    ))
                } else {
                    f.data.extend_from_slice(data);
                    None
                };
                match refused {
                    None => true,
                    Some(msg) => {
                        f.failed = true;
                        stderr.push(format!("sh: {}: write error: {msg}\n", f.shown).as_bytes());
                        false
                    }
                }
            }
        }
    }

    /// A redirection to the file `guest` (absolute; `shown` as the command line named it),
    /// already created or truncated: its target, gathering what is written to it.
    pub(crate) fn open_file(&mut self, shown: String, guest: String, unchecked: bool) -> Target {
        self.opened.insert(guest.clone());
        self.files.push(Some(OutFile {
            shown,
            guest,
            data: Vec::new(),
            failed: false,
            unchecked,
            kept: false,
        }));
        Target::File(self.files.len() - 1)
    }

    /// Whether a redirection of this call opened `guest` before.
    pub(crate) fn was_opened(&self, guest: &str) -> bool {
        self.opened.contains(guest)
    }

    /// Takes the files opened since `mark`, in the order they were opened, to be written. A
    /// file `exec` keeps open stays where its [`Target`] finds it (unless `all`), wherever it
    /// was opened; what it gathered so far is taken, as a file of its own, so that the
    /// commands after it read what was written.
    pub(crate) fn take_files(&mut self, mark: usize, all: bool) -> Vec<OutFile> {
        let mut taken = Vec::new();
        for (at, slot) in self.files.iter_mut().enumerate() {
            match slot {
                Some(f) if f.kept && !all && !f.data.is_empty() => taken.push(OutFile {
                    shown: f.shown.clone(),
                    guest: f.guest.clone(),
                    data: std::mem::take(&mut f.data),
                    failed: f.failed,
                    unchecked: false,
                    kept: true,
                }),
                Some(f) if at >= mark && (all || !f.kept) => taken.extend(slot.take()),
                _ => {}
            }
        }
        while self.files.last().is_some_and(Option::is_none) {
            self.files.pop();
        }
        taken
    }

    /// Keeps the file `t` writes to open to the end of the call (`exec > file`).
    pub(crate) fn keep_open(&mut self, t: Target) {
        if let Target::File(i) = t
            && let Some(Some(f)) = self.files.get_mut(i)
        {
            f.kept = true;
        }
    }

    pub(crate) fn file_count(&self) -> usize {
        self.files.len()
    }

    /// A new pipe buffer for the next pipeline stage to write into.
    pub(crate) fn open_pipe(&mut self) -> Target {
        self.pipes.push(Sink::new(PIPE_CAP));
        Target::Pipe(self.pipes.len() - 1)
    }

    /// Whether `t` is a pipe that took all it can (its reader will see no more): a loop
    /// writing there stops, as at SIGPIPE.
    pub(crate) fn pipe_full(&self, t: Target) -> bool {
        matches!(t, Target::Pipe(i) if self.pipes.get(i).is_some_and(|p| p.truncated))
    }

    /// When `t` is a pipe: the bytes it still takes (none once it dropped some).
    pub(crate) fn pipe_room(&self, t: Target) -> Option<usize> {
        let Target::Pipe(i) = t else {
            return None;
        };
        let pipe = self.pipes.get(i)?;
        Some(if pipe.truncated {
            0
        } else {
            pipe.cap.saturating_sub(pipe.buf.len())
        })
    }

    /// Marks the pipe `t` as cut: a writer had more than it took (and was stopped, as by
    /// SIGPIPE), so a reader of all of it learns its input is incomplete.
    pub(crate) fn cut_pipe(&mut self, t: Target) {
        if let Target::Pipe(i) = t
            && let Some(pipe) = self.pipes.get_mut(i)
        {
            pipe.truncated = true;
        }
    }

    /// The last pipe opened, as the next stage's stdin.
    pub(crate) fn close_pipe(&mut self) -> Input {
        self.pipes
            .pop()
            .map(|sink| Input::new(sink.buf, sink.truncated))
            .unwrap_or_default()
    }
}

/// A command's stdin: bytes already in memory (a pipe, a file, a here-document).
///
/// Copies share one read position, as processes share a file descriptor: each `read` of
/// `while read line; do ...; done < file` takes the next line, and a command in the loop that
/// reads its stdin takes the rest.
#[derive(Debug, Clone, Default)]
pub(crate) struct Input {
    data: Rc<Vec<u8>>,
    /// The producer was cut at the pipe cap.
    pub truncated: bool,
    /// Someone read it to the end (so a cut matters).
    consumed: Rc<Cell<bool>>,
    /// How much of it has been read.
    pos: Rc<Cell<usize>>,
}

impl Input {
    pub(crate) fn new(data: Vec<u8>, truncated: bool) -> Self {
        Self {
            data: Rc::new(data),
            truncated,
            consumed: Rc::default(),
            pos: Rc::default(),
        }
    }

    /// All that is left of it (marks it consumed).
    pub(crate) fn all(&self) -> &[u8] {
        self.consumed.set(true);
        self.rest()
    }

    /// All that is left of it, for a reader that may stop before the end (a WebAssembly tool
    /// is given all of it): it counts as consumed only once [`Input::read_to_end`] says so, so
    /// `yes | head -1` warns of no cut input.
    pub(crate) fn rest(&self) -> &[u8] {
        let start = self.pos.get().min(self.data.len());
        self.pos.set(self.data.len());
        &self.data[start..]
    }

    /// Its reader read it to the end.
    pub(crate) fn read_to_end(&self) {
        self.consumed.set(true);
    }

    /// The next line (up to and without `delim`), and whether `delim` ended it; `None` at the
    /// end of the input.
    pub(crate) fn read_line(&self, delim: u8) -> Option<(Vec<u8>, bool)> {
        let start = self.pos.get().min(self.data.len());
        let rest = &self.data[start..];
        if rest.is_empty() {
            self.consumed.set(true);
            return None;
        }
        let (line, used, ended) = match rest.iter().position(|&b| b == delim) {
            Some(i) => (&rest[..i], i + 1, true),
            None => (rest, rest.len(), false),
        };
        self.pos.set(start + used);
        Some((line.to_vec(), ended))
    }

    pub(crate) fn was_consumed(&self) -> bool {
        self.consumed.get()
    }

    /// Whether both are the same stream (one read position), not just equal bytes.
    pub(crate) fn same(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.data, &other.data) && Rc::ptr_eq(&self.pos, &other.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_keep_the_first_bytes_and_say_when_full() {
        let mut s = Sink::new(5);
        assert!(s.push(b"abc"));
        assert!(!s.push(b"defg"));
        assert!(!s.push(b"h"));
        assert_eq!(s.buf, b"abcde");
        assert!(s.truncated);
        let mut exact = Sink::new(3);
        assert!(exact.push(b"abc"));
        assert!(!exact.truncated);
    }
}
