//! What the shell language itself asks of files before or around its commands: pathname
//! expansion (`*.csv`), the file tests of `test`/`[`/`[[ ]]` (`-f`, `-d`, `-nt`, `-ef`...),
//! whether `cd`'s target is a directory, the files it reads whole (`< file`, `source FILE`,
//! `./script`, `python FILE`, `pip install -r FILE`) and the files its output redirections
//! write (`> file` creates or truncates it at once; what the command writes is gathered and
//! appended when the redirection ends, charged to the disk quota by the WASI layer). The toolbox's `sandbox-files`
//! (`runtimes/toolbox/src/shell_files.rs`) answers, in a fresh instance inside the session's
//! sandbox: WASI resolves every path beneath the preopened directories, with the command
//! line's fuel and deadline, so no host code stats or lists a guest path for them.
//!
//! Each question costs one instance (about a millisecond). A session without the toolbox gets
//! no answers: patterns stay as written, file tests are false, and `cd` says why.

use super::exec::Shell;
use super::guest_fs::{Access, FsError, Kind, normalize};
use super::streams::Target;
use crate::toolbox::ToolEnd;

/// The toolbox's hidden command for these questions.
const FILES: &str = "sandbox-files";

/// What a file test needs to know of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileInfo {
    pub kind: Kind,
    pub len: u64,
    /// The permission bits.
    pub mode: u32,
    /// Nanoseconds since the epoch (`-nt` tells apart files written in the same second, as
    /// bash does).
    pub mtime: u64,
}

impl Shell<'_> {
    /// `sandbox-files`'s command line for `op`, with the session's mount points.
    fn files_argv(&self, op: &[&str]) -> Vec<String> {
        let mut argv = vec![FILES.to_owned()];
        for mount in self.fs.mount_points() {
            argv.extend(["--mount".to_owned(), mount.to_owned()]);
        }
        argv.extend(op.iter().map(|a| (*a).to_owned()));
        argv
    }

    /// Runs `sandbox-files OP ARGS...` in the working directory: its stdout and status, or
    /// `None` when it did not exit (no toolbox, or the call was stopped).
    fn ask_files(&mut self, op: &[&str]) -> Option<(Vec<u8>, i32)> {
        let (out, _, status) = self.ask_files_with_stderr(op)?;
        Some((out, status))
    }

    /// [`Shell::ask_files`] with its stderr too.
    fn ask_files_with_stderr(&mut self, op: &[&str]) -> Option<(Vec<u8>, Vec<u8>, i32)> {
        self.ask_files_with_input(op, &[])
    }

    /// [`Shell::ask_files_with_stderr`] with `input` on its stdin.
    fn ask_files_with_input(
        &mut self,
        op: &[&str],
        input: &[u8],
    ) -> Option<(Vec<u8>, Vec<u8>, i32)> {
        let argv = self.files_argv(op);
        let env: Vec<(String, String)> = Vec::new();
        let cwd = self.state.cwd.clone();
        let modes = self.fs.clone();
        let ran = self
            .interpreters
            .run_tool(&argv, &cwd, &env, input, None, modes);
        match ran.end {
            ToolEnd::Exited(status) => Some((ran.stdout, ran.stderr, status)),
            _ => None,
        }
    }

    /// Pathname expansion of one field, where a backslash quotes the next character: the
    /// matching paths, sorted; empty when none match.
    pub(crate) fn pathnames(&mut self, pattern: &str) -> Vec<String> {
        let Some((out, 0)) = self.ask_files(&["glob", pattern]) else {
            return Vec::new();
        };
        (out.split(|&b| b == 0))
            .filter(|path| !path.is_empty())
            .map(|path| String::from_utf8_lossy(path).into_owned())
            .collect()
    }

    /// What `path` is (its last link followed when `follow`), or `None` when there is nothing
    /// there (or the sandbox refuses the path).
    pub(crate) fn file_info(&mut self, path: &str, follow: bool) -> Option<FileInfo> {
        self.file_infos(&[path], follow).pop().flatten()
    }

    /// [`Shell::file_info`] of each of `paths`, asked in one instance.
    pub(crate) fn file_infos(&mut self, paths: &[&str], follow: bool) -> Vec<Option<FileInfo>> {
        let how = if follow { "-L" } else { "-P" };
        let op: Vec<&str> = ["stat", how, "--"]
            .into_iter()
            .chain(paths.iter().copied())
            .collect();
        let mut infos = match self.ask_files(&op) {
            Some((out, 0)) => String::from_utf8_lossy(&out)
                .lines()
                .map(parse_info)
                .collect(),
            _ => Vec::new(),
        };
        infos.resize(paths.len(), None);
        infos
    }

    /// The first `max` bytes of the regular file `path`, and whether it holds more.
    ///
    /// # Errors
    /// Why it cannot be read: the sandbox's refusal when a lookup finds one (a link out of its
    /// mount, a path outside them), else what WASI said.
    pub(crate) fn read_file(&mut self, path: &str, max: u64) -> Result<(Vec<u8>, bool), FsError> {
        let max_text = max.to_string();
        match self.ask_files_with_stderr(&["read", &max_text, path]) {
            Some((data, _, 0)) => Ok((data, false)),
            Some((data, _, 3)) => Ok((data, true)),
            Some((_, why, _)) => Err(self.explained(path, Access::Read, &why)),
            None => Err(FsError::Io(std::io::Error::other("the read was stopped"))),
        }
    }

    /// `> path` (or `>> path` when `append`): the file created, or truncated, now; what is
    /// written to the target is appended when the redirection ends ([`Shell::close_files`]).
    ///
    /// # Errors
    /// Why the file cannot be written: the sandbox's refusal (outside the mounts, a read-only
    /// mount, a link out), else what WASI said.
    pub(crate) fn open_output(&mut self, path: &str, append: bool) -> Result<Target, FsError> {
        let place = self.fs.place(&self.state.cwd, path, Access::Write)?;
        let guest = normalize(&self.state.cwd, path);
        // `while ...; do echo "$x" >> log; done`: the sandbox was asked at the first `>>`;
        // the write-back of each later one makes the file again if it went.
        if append && self.io.was_opened(&place.guest) {
            return Ok(self.io.open_file(path.to_owned(), place.guest, true));
        }
        let op = if append { "append" } else { "write" };
        match self.ask_files_with_stderr(&[op, &guest]) {
            Some((_, _, 0)) => Ok(self.io.open_file(path.to_owned(), place.guest, false)),
            Some((_, why, _)) => Err(self.explained(path, Access::Write, &why)),
            None => Err(FsError::Io(std::io::Error::other("the open was stopped"))),
        }
    }

    /// Ends the redirections made since `mark`: appends what each gathered to its file (not
    /// one `exec` keeps open: those end with the call, [`Shell::close_all_files`]).
    pub(crate) fn close_files(&mut self, mark: usize) {
        self.write_back_files(false, mark);
    }

    /// Ends every redirection, at the end of the call.
    pub(crate) fn close_all_files(&mut self) {
        self.write_back_files(true, 0);
    }

    /// Ends every redirection made since `mark`, kept ones too (a subshell that ran `exec >
    /// file` ends).
    pub(crate) fn close_files_kept_since(&mut self, mark: usize) {
        self.write_back_files(true, mark);
    }

    fn write_back_files(&mut self, all: bool, mark: usize) {
        for file in self.io.take_files(mark, all) {
            if file.failed || (file.data.is_empty() && !file.unchecked) {
                continue;
            }
            let argv = self.files_argv(&["append", &file.guest]);
            let (cwd, modes) = (self.state.cwd.clone(), self.fs.clone());
            let ran = (self.interpreters).write_back(&argv, &cwd, &file.data, modes);
            let why = match ran.end {
                ToolEnd::Exited(0) => continue,
                ToolEnd::Exited(_) => String::from_utf8_lossy(&ran.stderr).trim_end().to_owned(),
                _ => "the write was stopped".to_owned(),
            };
            let line = format!("sh: {}: write error: {why}\n", file.shown);
            self.io.write(self.base_err, line.as_bytes());
        }
    }

    /// A new file in `/tmp` holding `data` (what `<(...)` printed; nothing yet for `>(...)`):
    /// its guest path.
    ///
    /// # Errors
    /// Why it could not be written (the disk quota, a call stopped).
    pub(crate) fn temporary_file(&mut self, data: &[u8]) -> Result<String, String> {
        let nanos = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH))
            .map_or(0, |d| d.subsec_nanos());
        let path = format!("/tmp/.sh-subst-{}-{nanos:08x}", self.io.temporaries.len());
        match self.ask_files_with_input(&["write", &path], data) {
            Some((_, _, 0)) => {
                self.io.temporaries.push(path.clone());
                Ok(path)
            }
            Some((_, why, _)) => Err(String::from_utf8_lossy(&why).trim_end().to_owned()),
            None => Err("the call was stopped".to_owned()),
        }
    }

    /// Removes the files of the process substitutions made since `mark` (their command
    /// ended), even when the call was stopped (with the grace of a write-back).
    pub(crate) fn remove_temporaries(&mut self, mark: usize) {
        let paths = self
            .io
            .temporaries
            .split_off(mark.min(self.io.temporaries.len()));
        if paths.is_empty() {
            return;
        }
        let argv: Vec<String> = ["rm", "-f", "--"]
            .map(str::to_owned)
            .into_iter()
            .chain(paths)
            .collect();
        let (cwd, modes) = (self.state.cwd.clone(), self.fs.clone());
        (self.interpreters).write_back(&argv, &cwd, &[], modes);
    }

    /// The refusal that explains why `path` could not be used for `access`, found by resolving
    /// it (a lookup, nothing opened), else `why` (a tool's reason).
    pub(crate) fn explained(&self, path: &str, access: Access, why: &[u8]) -> FsError {
        match self.fs.resolve(&self.state.cwd, path, access, true) {
            Err(e) if e.restricted().is_some() => e,
            _ => {
                let why = String::from_utf8_lossy(why);
                FsError::Io(std::io::Error::other(why.trim_end().to_owned()))
            }
        }
    }

    /// `test A -ef B`: both name the same file.
    pub(crate) fn same_file(&mut self, a: &str, b: &str) -> bool {
        matches!(self.ask_files(&["same", a, b]), Some((_, 0)))
    }
}

/// A line of `sandbox-files stat`: `KIND SIZE MODE MTIME_NS`, or `-`.
fn parse_info(line: &str) -> Option<FileInfo> {
    let mut fields = line.split(' ');
    let kind = match fields.next()? {
        "f" => Kind::File,
        "d" => Kind::Dir,
        "l" => Kind::Symlink,
        "p" => Kind::Fifo,
        _ => return None,
    };
    let len = fields.next()?.parse().ok()?;
    let mode = u32::from_str_radix(fields.next()?, 8).ok()?;
    let mtime = fields.next()?.parse().ok()?;
    Some(FileInfo {
        kind,
        len,
        mode,
        mtime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_strictly() {
        assert_eq!(
            parse_info("f 12 644 1700000000123456789"),
            Some(FileInfo {
                kind: Kind::File,
                len: 12,
                mode: 0o644,
                mtime: 1_700_000_000_123_456_789
            })
        );
        assert_eq!(parse_info("d 0 555 0").map(|i| i.kind), Some(Kind::Dir));
        for bad in ["-", "", "x 1 644 0", "f one 644 0", "f 1 999 0", "f 1 644"] {
            assert_eq!(parse_info(bad), None, "{bad}");
        }
    }
}
