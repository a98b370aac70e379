//! `patch`: GNU patch 2.7's options, messages and statuses (0 when every hunk applied, 1 when
//! some failed or were skipped, 2 on trouble). The patch is read by [`parse`] (unified, context
//! and normal diffs, several files, leading text skipped), each hunk found and applied by
//! [`apply`]; here: which file each part patches, GNU's questions about reversed patches and
//! missing files (answered with their defaults: there is no terminal), backups, reject files.
//! A GNU option this patch does not have is refused by name, never ignored.

mod apply;
mod parse;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::getopt::{self, Long, refused};
use parse::{FilePatch, Format, Hunk, Kind, Line};

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub strip: Option<usize>,
    pub reverse: bool,
    pub forward: bool,
    pub dry_run: bool,
    pub output: Option<String>,
    pub backup: bool,
    pub backup_if_mismatch: bool,
    pub suffix: String,
    pub silent: bool,
    pub directory: Option<String>,
    pub remove_empty: bool,
    pub fuzz: usize,
    pub ignore_whitespace: bool,
    pub input: Option<String>,
    pub reject_file: Option<String>,
    pub batch: bool,
    pub force: bool,
    pub origfile: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            strip: None,
            reverse: false,
            forward: false,
            dry_run: false,
            output: None,
            backup: false,
            backup_if_mismatch: true,
            suffix: ".orig".to_owned(),
            silent: false,
            directory: None,
            remove_empty: false,
            fuzz: 2,
            ignore_whitespace: false,
            input: None,
            reject_file: None,
            batch: false,
            force: false,
            origfile: None,
        }
    }
}

/// Letters standing for GNU's long-only options (private-use characters, never typed).
const DRY_RUN: char = '\u{e000}';
const IF_MISMATCH: char = '\u{e001}';
const NO_IF_MISMATCH: char = '\u{e002}';
/// GNU's long-only options this patch refuses: each its own letter ([`getopt::refused`]).
const REFUSED_LONG: &[&str] = &[
    "verbose",
    "posix",
    "binary",
    "quoting-style",
    "reject-format",
    "read-only",
    "follow-symlinks",
    "merge",
    "help",
    "version",
];
const REFUSED_VALUED: &[&str] = &["quoting-style", "reject-format", "read-only", "merge"];

/// Every short letter of GNU patch (`:` after one taking a value).
const SHORT: &str = "bB:cd:D:eEfF:g:i:lnNo:p:r:RsStTuvV:x:Y:z:Z";

const LONG: &[Long] = &[
    ("backup", 'b', false),
    ("prefix", 'B', true),
    ("context", 'c', false),
    ("directory", 'd', true),
    ("ifdef", 'D', true),
    ("ed", 'e', false),
    ("remove-empty-files", 'E', false),
    ("force", 'f', false),
    ("fuzz", 'F', true),
    ("get", 'g', true),
    ("input", 'i', true),
    ("ignore-whitespace", 'l', false),
    ("normal", 'n', false),
    ("forward", 'N', false),
    ("output", 'o', true),
    ("strip", 'p', true),
    ("reject-file", 'r', true),
    ("reverse", 'R', false),
    ("quiet", 's', false),
    ("silent", 's', false),
    ("set-time", 'T', false),
    ("batch", 't', false),
    ("unified", 'u', false),
    ("version", 'v', false),
    ("version-control", 'V', true),
    ("debug", 'x', true),
    ("basename-prefix", 'Y', true),
    ("suffix", 'z', true),
    ("set-utc", 'Z', false),
    ("dry-run", DRY_RUN, false),
    ("backup-if-mismatch", IF_MISMATCH, false),
    ("no-backup-if-mismatch", NO_IF_MISMATCH, false),
    ("verbose", refused(0), false),
    ("posix", refused(1), false),
    ("binary", refused(2), false),
    ("quoting-style", refused(3), true),
    ("reject-format", refused(4), true),
    ("read-only", refused(5), true),
    ("follow-symlinks", refused(6), false),
    ("merge", refused(7), false),
    ("help", refused(8), false),
];

/// Runs `patch` with `args` (`args[0]` is the command's name).
pub fn main(args: super::Args) -> i32 {
    let words = getopt::words(args);
    let options = match parse_args(&words) {
        Ok(o) => o,
        Err(Some(message)) => {
            eprintln!("patch: {message}\nTry 'patch --help' for more information.");
            return 2;
        }
        Err(None) => return 2,
    };
    let base = PathBuf::from(options.directory.as_deref().unwrap_or("."));
    let input = match &options.input {
        Some(name) if name != "-" => match std::fs::read(base.join(name)) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("patch: **** Can't open patch file {name} : {}", reason(&e));
                return 2;
            }
        },
        _ => {
            let mut bytes = Vec::new();
            if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes) {
                eprintln!("patch: **** read error : {e}");
                return 2;
            }
            bytes
        }
    };
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    run(&options, &base, &input, &mut stdout, &mut stderr)
}

/// The options; `Err(Some)`: GNU's usage error, `Err(None)`: refused (the reason said).
fn parse_args(words: &[String]) -> Result<Options, Option<String>> {
    let parsed = getopt::parse(words, SHORT, LONG).map_err(Some)?;
    let mut o = Options::default();
    for (c, value) in &parsed.opts {
        let value = value.as_deref().unwrap_or("");
        let number = |what: &str| {
            value
                .parse::<usize>()
                .map_err(|_| Some(format!("{what} '{value}'")))
        };
        match *c {
            'b' => o.backup = true,
            'd' => o.directory = Some(value.to_owned()),
            'E' => o.remove_empty = true,
            'f' => o.force = true,
            'F' => o.fuzz = number("fuzz factor")?,
            'i' => o.input = Some(value.to_owned()),
            'l' => o.ignore_whitespace = true,
            'N' => o.forward = true,
            'o' => o.output = Some(value.to_owned()),
            'p' => o.strip = Some(number("strip count")?),
            'r' => o.reject_file = Some(value.to_owned()),
            'R' => o.reverse = true,
            's' => o.silent = true,
            't' => o.batch = true,
            // The suffix alone makes no backups (GNU's -z does not imply -b).
            'z' => o.suffix = value.to_owned(),
            DRY_RUN => o.dry_run = true,
            IF_MISMATCH => o.backup_if_mismatch = true,
            NO_IF_MISMATCH => o.backup_if_mismatch = false,
            other => {
                refuse(other);
                return Err(None);
            }
        }
    }
    let mut operands = parsed.operands.into_iter();
    o.origfile = operands.next();
    if let Some(patchfile) = operands.next() {
        o.input = Some(patchfile);
    }
    if let Some(extra) = operands.next() {
        return Err(Some(format!("extra operand {extra}")));
    }
    Ok(o)
}

/// Says why option `c` is refused: GNU patch has it, this one does not.
fn refuse(c: char) {
    let name = match c {
        'B' => "-B (--prefix)",
        'c' => "-c (--context)",
        'D' => "-D (--ifdef)",
        'e' => "-e (--ed)",
        'g' => "-g (--get)",
        'n' => "-n (--normal)",
        'T' => "-T (--set-time)",
        'u' => "-u (--unified)",
        'v' => "-v (--version)",
        'V' => "-V (--version-control)",
        'x' => "-x (--debug)",
        'Y' => "-Y (--basename-prefix)",
        'Z' => "-Z (--set-utc)",
        _ => {
            let name = getopt::refused_name(c, REFUSED_LONG, REFUSED_VALUED);
            eprintln!("patch: {name} is not supported here");
            return;
        }
    };
    eprintln!("patch: {name} is not supported here");
}

/// `n hunk` or `n hunks`.
fn hunks(n: usize) -> &'static str {
    if n == 1 { "hunk" } else { "hunks" }
}

/// Applies the patch `input` to the files under `base`; messages on `say` (GNU's standard
/// output, or its standard error when the patched text goes to standard output with `-o -`).
pub fn run(
    options: &Options,
    base: &Path,
    input: &[u8],
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let files = match parse::parse(input) {
        Ok(files) => files,
        Err(parse::Malformed(message)) => {
            let _ = stdout.flush();
            let _ = writeln!(stderr, "patch: **** {message}");
            return 2;
        }
    };
    if files.is_empty() {
        if input.iter().any(|b| !b.is_ascii_whitespace()) {
            let _ = writeln!(
                stderr,
                "patch: **** Only garbage was found in the patch input."
            );
            return 2;
        }
        return 0;
    }
    let to_stdout = options.output.as_deref() == Some("-");
    let mut status = 0;
    for file in &files {
        let mut session = FileRun {
            options,
            base,
            say: Vec::new(),
            text_out: Vec::new(),
            flipped: false,
        };
        let result = session.patch_file(file);
        if to_stdout {
            let _ = stdout.write_all(&session.text_out);
            let _ = stderr.write_all(&session.say);
        } else {
            let _ = stdout.write_all(&session.say);
        }
        match result {
            Ok(s) => status = status.max(s),
            Err(message) => {
                let _ = stdout.flush();
                let _ = writeln!(stderr, "patch: **** {message}");
                return 2;
            }
        }
    }
    status
}

/// The state of patching one file.
struct FileRun<'a> {
    options: &'a Options,
    base: &'a Path,
    /// GNU's messages, in order.
    say: Vec<u8>,
    /// The patched text, when it goes to standard output.
    text_out: Vec<u8>,
    /// The patch is applied the other way round from what the options say (GNU assumed it).
    flipped: bool,
}

/// What GNU decided when the first hunk applies only the other way round.
enum Reversal {
    Apply,
    Flip,
    Skip,
}

impl FileRun<'_> {
    fn line(&mut self, text: &str) {
        self.say.extend_from_slice(text.as_bytes());
        self.say.push(b'\n');
    }

    fn path(&self, name: &str) -> PathBuf {
        self.base.join(name)
    }

    fn exists(&self, name: &str) -> bool {
        self.path(name).is_file()
    }

    /// `name` without its first `-p` components, or its base name without `-p`; `None` when it
    /// has too few slashes.
    fn stripped(&self, name: &str) -> Option<String> {
        match self.options.strip {
            None => Some(name.rsplit('/').next().unwrap_or(name).to_owned()),
            Some(0) => Some(name.to_owned()),
            Some(n) => {
                let mut rest = name;
                for _ in 0..n {
                    let at = rest.find('/')?;
                    rest = rest[at + 1..].trim_start_matches('/');
                }
                (!rest.is_empty()).then(|| rest.to_owned())
            }
        }
    }

    /// GNU's best of `names`: fewest components, then shortest base name, then shortest name.
    fn best(names: &[String]) -> Option<String> {
        let key = |n: &String| {
            let parts = n.split('/').filter(|p| !p.is_empty()).count();
            let base = n.rsplit('/').next().unwrap_or(n).len();
            (parts, base, n.len())
        };
        let mut best: Option<&String> = None;
        for n in names {
            if best.is_none_or(|b| key(n) < key(b)) {
                best = Some(n);
            }
        }
        best.cloned()
    }

    /// The file `file` patches: `Ok(name)`, or `Err(())` when there is none.
    fn target(&mut self, file: &FilePatch) -> Option<String> {
        if let Some(name) = &self.options.origfile {
            return Some(name.clone());
        }
        let mut names = Vec::new();
        if let (Some(old), false) = (&file.old_name, file.old_absent) {
            names.extend(self.stripped(old));
        }
        if let (Some(new), false) = (&file.new_name, file.new_absent) {
            names.extend(self.stripped(new));
        }
        let named = file.old_name.is_some() && !file.old_absent
            || file.new_name.is_some() && !file.new_absent;
        if let (Some(index), false) = (&file.index_name, named) {
            names.extend(self.stripped(index));
        }
        // A name with a `..` component could reach above the directory patched: GNU ignores
        // it, and says so (for the first) when it would make the file.
        let (dangerous, names): (Vec<String>, Vec<String>) =
            (names.into_iter()).partition(|n| n.split('/').any(|part| part == ".."));
        let existing: Vec<String> = names.iter().filter(|n| self.exists(n)).cloned().collect();
        if !existing.is_empty() {
            return Self::best(&existing);
        }
        if self.creates(file) || self.removes(file) {
            if let (Some(first), true) = (dangerous.first(), self.creates(file)) {
                self.line(&format!("Ignoring potentially dangerous file name {first}"));
            }
            return Self::best(&names);
        }
        None
    }

    /// The patch makes a new file (its old side is `/dev/null` or empty at line 0).
    fn creates(&self, file: &FilePatch) -> bool {
        let (absent, hunk) = if self.options.reverse != self.flipped {
            (
                file.new_absent,
                file.hunks
                    .first()
                    .map(|h| h.new_start == 0 && h.new_len() == 0),
            )
        } else {
            (
                file.old_absent,
                file.hunks
                    .first()
                    .map(|h| h.old_start == 0 && h.old_len() == 0),
            )
        };
        // (A normal diff's `0a1,N` does not say the file is new.)
        absent || (file.format != Format::Normal && file.hunks.len() == 1 && hunk == Some(true))
    }

    fn removes(&self, file: &FilePatch) -> bool {
        if self.options.reverse != self.flipped {
            file.old_absent
        } else {
            file.new_absent
        }
    }

    fn patch_file(&mut self, file: &FilePatch) -> Result<i32, String> {
        let o = self.options;
        let total = file.hunks.len();
        let Some(name) = self.target(file) else {
            self.line(&format!(
                "can't find file to patch at input line {}",
                file.first_hunk_line
            ));
            self.line(if o.strip.is_some() {
                "Perhaps you used the wrong -p or --strip option?"
            } else {
                "Perhaps you should have used the -p or --strip option?"
            });
            self.line("The text leading up to this was:");
            self.line("--------------------------");
            for text in &file.leading {
                self.say.push(b'|');
                self.say.extend_from_slice(text);
                self.say.push(b'\n');
            }
            self.line("--------------------------");
            if o.batch || o.force {
                self.line("No file to patch.  Skipping patch.");
            } else {
                self.line("File to patch: ");
                self.line("Skip this patch? [y] ");
                self.line("Skipping patch.");
            }
            self.line(&format!("{total} out of {total} {} ignored", hunks(total)));
            return Ok(1);
        };
        let mut hunks_now: Vec<Hunk> = if o.reverse {
            file.hunks.iter().map(Hunk::reversed).collect()
        } else {
            file.hunks.clone()
        };
        let path = self.path(&name);
        let existed = path.is_file();
        let original = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(_) if !existed => Vec::new(),
            Err(e) => return Err(format!("Can't open file {name} : {}", reason(&e))),
        };
        let lines = parse::file_lines(&original);
        let matcher = apply::Matcher {
            ignore_whitespace: o.ignore_whitespace,
        };
        let verb = if o.dry_run { "checking" } else { "patching" };
        let shown = match &o.output {
            Some(out) => format!("{verb} file {out} (read from {name})"),
            None => format!("{verb} file {name}"),
        };
        // A patch making a file that is there already: GNU asks whether it is reversed.
        let mut decision = Reversal::Apply;
        let when = if o.reverse { ", when reversed," } else { "" };
        let (question, assumed) = if o.reverse {
            ("Ignore -R?", "Ignoring -R.")
        } else {
            ("Assume -R?", "Assuming -R.")
        };
        let wrong_side = if self.creates(file) && existed && !original.is_empty() {
            Some(format!(
                "The next patch{when} would create the file {name},\nwhich already exists!"
            ))
        } else if self.removes(file) && !existed {
            Some(format!(
                "The next patch{when} would delete the file {name},\nwhich does not exist!"
            ))
        } else {
            None
        };
        let wrong_side = wrong_side.filter(|_| !o.force);
        let whole_file = wrong_side.is_some();
        if let Some(ask) = wrong_side {
            decision = self.reversed_question(&ask, question, assumed);
            if matches!(decision, Reversal::Skip) {
                self.line(&format!("{total} out of {total} {} ignored", hunks(total)));
                return Ok(1);
            }
        } else if !o.silent {
            self.line(&shown);
        }
        if matches!(decision, Reversal::Flip) {
            if !o.silent {
                self.line(&shown);
            }
        } else if !o.force && !hunks_now.is_empty() {
            let first = &hunks_now[0];
            let guess = first.old_at() as isize;
            let back = first.reversed();
            // Level by level of fuzz: the first hunk applying the other way round before it
            // applies this way means the patch is reversed.
            let reversed = (0..=o.fuzz)
                .map(|fuzz| {
                    let at = |h: &Hunk, guess| {
                        apply::locate_with(&lines, h, 0, guess, fuzz, fuzz, matcher).is_some()
                    };
                    (at(first, guess), at(&back, back.old_at() as isize))
                })
                .find(|(forward, backward)| *forward || *backward)
                .is_some_and(|(forward, _)| !forward);
            if reversed {
                decision = if o.reverse {
                    self.reversed_question(
                        "Unreversed patch detected!",
                        "Ignore -R?",
                        "Ignoring -R.",
                    )
                } else {
                    self.reversed_question(
                        "Reversed (or previously applied) patch detected!",
                        "Assume -R?",
                        "Assuming -R.",
                    )
                };
            }
        }
        match &decision {
            Reversal::Apply => {}
            Reversal::Flip => {
                hunks_now = hunks_now.iter().map(Hunk::reversed).collect();
                self.flipped = true;
            }
            Reversal::Skip => {
                let rej = self.reject_name(&name);
                let mut tail = format!("{total} out of {total} {} ignored", hunks(total));
                if !o.dry_run {
                    tail.push_str(&format!(" -- saving rejects to file {rej}"));
                    self.write_rejects(file, &hunks_now, o.reverse, &rej)?;
                    // GNU has made the output file already: it stays, empty.
                    if let Some(target) = o.output.as_deref().filter(|t| *t != "-") {
                        let _ = std::fs::write(self.path(target), b"");
                    }
                }
                self.line(&tail);
                return Ok(1);
            }
        }
        // The hunks, in order, each after the previous one.
        let mut out: Vec<Line> = Vec::new();
        let mut cursor = 0;
        let mut offset: isize = 0;
        let mut failed: Vec<Hunk> = Vec::new();
        // GNU backs up a file it found reversed as one that did not match.
        let mut mismatch = matches!(decision, Reversal::Flip) && !whole_file;
        // Lines added less lines removed by the hunks applied so far: a failed hunk is said to
        // be (and its reject put) where it would be in the new file.
        let mut net: isize = 0;
        for (k, hunk) in hunks_now.iter().enumerate() {
            let number = k + 1;
            let guess = hunk.old_at() as isize + offset;
            match apply::locate(&lines, hunk, cursor, guess, o.fuzz, matcher) {
                Some(placed) => {
                    out.extend_from_slice(&lines[cursor..placed.at]);
                    let landed = out.len() + 1;
                    apply::splice(&lines, hunk, placed.at, &mut out);
                    cursor = (placed.at + hunk.old_len()).min(lines.len());
                    net += hunk.new_len() as isize - hunk.old_len() as isize;
                    // An addition past the end of a file too short for it goes at the end,
                    // which GNU does not count as an offset.
                    let past_end = hunk.old_len() == 0 && guess > lines.len() as isize;
                    if !past_end {
                        offset = placed.at as isize - hunk.old_at() as isize;
                    }
                    if (offset != 0 || placed.fuzz > 0) && !o.silent {
                        let mut text = format!("Hunk #{number} succeeded at {landed}");
                        if placed.fuzz > 0 {
                            text.push_str(&format!(" with fuzz {}", placed.fuzz));
                        }
                        if offset != 0 {
                            let s = if offset == 1 { "line" } else { "lines" };
                            text.push_str(&format!(" (offset {offset} {s})"));
                        }
                        text.push('.');
                        self.line(&text);
                    }
                    mismatch |= offset != 0 || placed.fuzz > 0;
                }
                None => {
                    mismatch = true;
                    let shift = |n: usize| (n as isize + net).max(0) as usize;
                    if !o.silent {
                        self.line(&format!(
                            "Hunk #{number} FAILED at {}.",
                            shift(hunk.old_start)
                        ));
                    }
                    let mut rejected = hunk.clone();
                    rejected.old_start = shift(rejected.old_start);
                    rejected.new_start = shift(rejected.new_start);
                    failed.push(rejected);
                }
            }
        }
        out.extend_from_slice(&lines[cursor..]);
        // A line that lost its newline in the patch but is no longer the last gets it back.
        let last = out.len().saturating_sub(1);
        for line in &mut out[..last] {
            line.newline = true;
        }
        if !failed.is_empty() {
            let rej = self.reject_name(&name);
            let n = failed.len();
            let mut tail = format!("{n} out of {total} {} FAILED", hunks(total));
            if !o.dry_run {
                tail.push_str(&format!(" -- saving rejects to file {rej}"));
                let flipped = o.reverse != matches!(decision, Reversal::Flip);
                self.write_rejects(file, &failed, flipped, &rej)?;
            }
            self.line(&tail);
        }
        if !o.dry_run {
            self.write_result(file, &name, existed, &original, &out, mismatch)?;
        }
        Ok(if failed.is_empty() { 0 } else { 1 })
    }

    /// GNU's question when a patch looks reversed, answered as without a terminal: `-N`
    /// skips, `-t` takes `yes`, otherwise the default `no`, twice.
    fn reversed_question(&mut self, what: &str, question: &str, assumed: &str) -> Reversal {
        let o = self.options;
        if o.forward {
            self.line(&format!("{what}  Skipping patch."));
            Reversal::Skip
        } else if o.batch {
            self.line(&format!("{what}  {assumed}"));
            Reversal::Flip
        } else {
            self.line(&format!("{what}  {question} [n] "));
            self.line("Apply anyway? [n] ");
            self.line("Skipping patch.");
            Reversal::Skip
        }
    }

    fn reject_name(&self, name: &str) -> String {
        match (&self.options.reject_file, &self.options.output) {
            (Some(r), _) => r.clone(),
            (None, Some(out)) if out != "-" => format!("{out}.rej"),
            _ => format!("{name}.rej"),
        }
    }

    /// The hunks that did not apply, in the patch's own format (unified stays unified, the
    /// others come out as context diffs), after the patch's header lines.
    /// `flipped`: the hunks were applied the other way round, and the header says so.
    fn write_rejects(
        &self,
        file: &FilePatch,
        failed: &[Hunk],
        flipped: bool,
        rej: &str,
    ) -> Result<(), String> {
        let mut text: Vec<u8> = Vec::new();
        let mut header = |marks: [&[u8]; 2]| {
            let [old, new] = &file.header[..] else { return };
            let (old, new) = if flipped { (new, old) } else { (old, new) };
            // GNU names the file as it found it (the names stripped by -p), dates kept.
            for (mark, line) in marks.iter().zip([old, new]) {
                let rest = &line[4..];
                let cut = rest.iter().position(|b| *b == b'\t').unwrap_or(rest.len());
                let name = String::from_utf8_lossy(&rest[..cut]);
                let stripped = match self.options.strip {
                    Some(_) => self.stripped(&name).unwrap_or_else(|| name.to_string()),
                    None => name.to_string(),
                };
                text.extend_from_slice(mark);
                text.extend_from_slice(stripped.as_bytes());
                text.extend_from_slice(&rest[cut..]);
                text.push(b'\n');
            }
        };
        match file.format {
            Format::Unified => {
                header([b"--- ", b"+++ "]);
                for hunk in failed {
                    unified_reject(hunk, &mut text);
                }
            }
            Format::Context | Format::Normal => {
                header([b"*** ", b"--- "]);
                for hunk in failed {
                    context_reject(hunk, &mut text);
                }
            }
        }
        std::fs::write(self.path(rej), text)
            .map_err(|e| format!("Can't create file {rej} : {}", reason(&e)))
    }

    fn write_result(
        &mut self,
        file: &FilePatch,
        name: &str,
        existed: bool,
        original: &[u8],
        out: &[Line],
        mismatch: bool,
    ) -> Result<(), String> {
        let o = self.options;
        let mut bytes = Vec::new();
        for line in out {
            bytes.extend_from_slice(&line.text);
            if line.newline {
                bytes.push(b'\n');
            }
        }
        if let Some(target) = &o.output {
            if target == "-" {
                self.text_out.extend_from_slice(&bytes);
                return Ok(());
            }
            return std::fs::write(self.path(target), &bytes)
                .map_err(|e| format!("Can't create file {target} : {}", reason(&e)));
        }
        let path = self.path(name);
        if o.backup || (mismatch && o.backup_if_mismatch && existed) {
            let backup = self.path(&format!("{name}{}", o.suffix));
            std::fs::write(&backup, original)
                .map_err(|e| format!("Can't create file {name}{} : {}", o.suffix, reason(&e)))?;
        }
        if bytes.is_empty() && (self.removes(file) || o.remove_empty) {
            if existed {
                std::fs::remove_file(&path)
                    .map_err(|e| format!("Can't remove file {name} : {}", reason(&e)))?;
                // As GNU does, the directories the file leaves empty go too.
                let mut dir = Path::new(name).parent();
                while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                    if std::fs::remove_dir(self.base.join(d)).is_err() {
                        break;
                    }
                    dir = d.parent();
                }
            }
            return Ok(());
        }
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        std::fs::write(&path, &bytes)
            .map_err(|e| format!("Can't create file {name} : {}", reason(&e)))
    }
}

fn push_line(text: &mut Vec<u8>, prefix: &[u8], line: &Line) {
    text.extend_from_slice(prefix);
    text.extend_from_slice(&line.text);
    // GNU writes a line without its newline as it is, with no `\ No newline` marker.
    if line.newline {
        text.push(b'\n');
    }
}

/// `A,B` as GNU writes a range (start and count) in a unified header.
fn unified_range(start: usize, count: usize) -> String {
    if count == 1 {
        format!("{start}")
    } else {
        format!("{start},{count}")
    }
}

fn unified_reject(hunk: &Hunk, text: &mut Vec<u8>) {
    let header = format!(
        "@@ -{} +{} @@\n",
        unified_range(hunk.old_start, hunk.old_len()),
        unified_range(hunk.new_start, hunk.new_len())
    );
    text.extend_from_slice(header.as_bytes());
    for op in &hunk.ops {
        let prefix: &[u8] = match op.kind {
            Kind::Keep => b" ",
            Kind::Remove => b"-",
            Kind::Add => b"+",
        };
        push_line(text, prefix, &op.line);
    }
}

/// `A,B` (first and last line) as a context header writes it.
fn context_range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start}"),
        1 => format!("{start}"),
        _ => format!("{start},{}", start + count - 1),
    }
}

fn context_reject(hunk: &Hunk, text: &mut Vec<u8>) {
    // A removal next to an addition is a change (`!`) on both sides.
    let ops = &hunk.ops;
    let mut marks = vec![b' '; ops.len()];
    let mut i = 0;
    while i < ops.len() {
        if ops[i].kind == Kind::Keep {
            i += 1;
            continue;
        }
        let start = i;
        while i < ops.len() && ops[i].kind != Kind::Keep {
            i += 1;
        }
        let run = start..i;
        let both = ops[run.clone()].iter().any(|o| o.kind == Kind::Remove)
            && ops[run.clone()].iter().any(|o| o.kind == Kind::Add);
        for k in run {
            marks[k] = match (both, ops[k].kind) {
                (true, _) => b'!',
                (false, Kind::Remove) => b'-',
                _ => b'+',
            };
        }
    }
    text.extend_from_slice(b"***************\n");
    // Unlike diff -c, a side with only context lines is written out too.
    let sides = [
        ("***", "****", hunk.old_start, hunk.old_len(), Kind::Add),
        ("---", "----", hunk.new_start, hunk.new_len(), Kind::Remove),
    ];
    for (mark, end, start, len, other_side) in sides {
        let header = format!("{mark} {} {end}\n", context_range(start, len));
        text.extend_from_slice(header.as_bytes());
        for (op, mark) in ops.iter().zip(&marks) {
            if op.kind != other_side {
                push_line(text, &[*mark, b' '], &op.line);
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// An error's words as GNU prints them (without Rust's `(os error N)`).
fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}
