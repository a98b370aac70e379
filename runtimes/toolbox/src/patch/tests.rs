//! `patch` against GNU patch where it is installed (`/usr/bin/patch`, as in CI): the same patch
//! and command line on copies of the same files must print the same bytes, exit with the same
//! status and leave the same files behind (patched files, `.orig` backups, `.rej` rejects).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::*;

const GNU: &str = "/usr/bin/patch";
const DIFF: &str = "/usr/bin/diff";

fn gnu_here() -> bool {
    Command::new(GNU)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU patch"))
}

/// What a run printed and left: stdout, stderr, status, and every file under its directory.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    stderr: String,
    status: i32,
    files: BTreeMap<String, String>,
}

fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                into.insert(format!("{name}/"), String::new());
                walk(root, &path, into);
            } else {
                let bytes = fs::read(&path).unwrap();
                into.insert(name, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(dir, dir, &mut files);
    files
}

/// Ours, as `main` runs it, with `dir` as the working directory.
fn ours(dir: &Path, args: &[String], stdin: &[u8]) -> Outcome {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = match parse_args(args) {
        Ok(o) => {
            let base = dir.join(o.directory.as_deref().unwrap_or("."));
            let input = match &o.input {
                Some(name) if name != "-" => fs::read(base.join(name)).map_err(|e| {
                    format!(
                        "patch: **** Can't open patch file {name} : {}\n",
                        reason(&e)
                    )
                }),
                _ => Ok(stdin.to_vec()),
            };
            match input {
                Ok(input) => run(&o, &base, &input, &mut out, &mut err),
                Err(message) => {
                    err.extend_from_slice(message.as_bytes());
                    2
                }
            }
        }
        Err(_) => 2,
    };
    Outcome {
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        status,
        files: snapshot(dir),
    }
}

fn gnu(dir: &Path, args: &[String], stdin: &[u8]) -> Outcome {
    use std::io::Write as _;
    let mut child = Command::new(GNU)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // GNU may stop reading early (a missing patch file): a broken pipe is no failure.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).replace("/usr/bin/patch: ", "patch: "),
        status: out.status.code().unwrap_or(-1),
        files: snapshot(dir),
    }
}

fn scratch(tag: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("toolbox-patch-{tag}-{}-{run}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn plant(dir: &Path, files: &[(&str, &str)]) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

/// Both patches on copies of `files`, `patch` on stdin (and as the file `the.patch`): `None`
/// if they agree, else both outcomes.
fn compared(tag: &str, files: &[(&str, &str)], args: &[&str], patch: &str) -> Option<String> {
    let root = scratch(tag);
    let (mine, theirs) = (root.join("ours"), root.join("gnu"));
    let mut with_patch: Vec<(&str, &str)> = files.to_vec();
    with_patch.push(("the.patch", patch));
    plant(&mine, &with_patch);
    plant(&theirs, &with_patch);
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let a = ours(&mine, &args, patch.as_bytes());
    let b = gnu(&theirs, &args, patch.as_bytes());
    let _ = fs::remove_dir_all(&root);
    (a != b).then(|| {
        format!(
            "patch {}\n--- patch:\n{patch}\n  GNU:  {b:#?}\n  ours: {a:#?}",
            args.join(" ")
        )
    })
}

/// GNU diff's output for two texts under `option`, with the given names in its header.
fn gnu_diff(option: &str, old: &str, new: &str, names: (&str, &str)) -> String {
    let dir = scratch(&format!("diff{}", option.trim_start_matches('-')));
    fs::write(dir.join("old"), old).unwrap();
    fs::write(dir.join("new"), new).unwrap();
    let mut command = Command::new(DIFF);
    if !option.is_empty() {
        command.arg(option);
    }
    command.args(["old", "new"]).current_dir(&dir);
    let out = command.output().unwrap();
    let _ = fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    // Fixed names and dates: the header's date lines would differ between runs.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if option == "-u" && lines.len() >= 2 {
        lines[0] = format!("--- {}\t2020-01-01 00:00:00.000000000 +0000", names.0);
        lines[1] = format!("+++ {}\t2020-01-02 00:00:00.000000000 +0000", names.1);
    }
    if option == "-c" && lines.len() >= 2 {
        lines[0] = format!("*** {}\t2020-01-01 00:00:00.000000000 +0000", names.0);
        lines[1] = format!("--- {}\t2020-01-02 00:00:00.000000000 +0000", names.1);
    }
    let mut joined = lines.join("\n");
    if !joined.is_empty() {
        joined.push('\n');
    }
    joined
}

struct Random(u64);

impl Random {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

fn text_of(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

/// Random files, random edits, patches in each of diff's formats, applied to the file they
/// were made from or to a file that moved on since (lines added, removed or changed): the same
/// messages, statuses, results and rejects as GNU's.
#[test]
fn random_patches_apply_as_gnu_patch_applies_them() {
    if !gnu_here() {
        return;
    }
    let words = ["a", "b", "c", "d", "e", "f", "g", "h", "x y", "  z", ""];
    let mut r = Random(0x2545_f491_4f6c_dd1d);
    let mut failures = Vec::new();
    for round in 0..400 {
        let len = 1 + r.below(30);
        let old: Vec<String> = (0..len)
            .map(|_| words[r.below(words.len())].to_owned())
            .collect();
        let mut new = old.clone();
        for _ in 0..1 + r.below(4) {
            let at = r.below(new.len() + 1);
            match r.below(3) {
                0 if at < new.len() => {
                    new.remove(at);
                }
                1 if at < new.len() => new[at] = format!("new{}", r.below(100)),
                _ => new.insert(at, format!("ins{}", r.below(100))),
            }
        }
        let (old_nl, new_nl) = (r.below(8) != 0, r.below(8) != 0);
        let (old_text, new_text) = (text_of(&old, old_nl), text_of(&new, new_nl));
        // The file the patch meets: as it was, or moved on.
        let mut target = old.clone();
        match r.below(4) {
            0 => {
                for k in 0..1 + r.below(5) {
                    target.insert(0, format!("top{k}"));
                }
            }
            1 if !target.is_empty() => {
                let at = r.below(target.len());
                target[at] = "changed".to_owned();
            }
            2 if target.len() > 2 => {
                target.remove(r.below(target.len()));
            }
            _ => {}
        }
        let target_text = text_of(&target, old_nl);
        // (Normal diffs only on the file they were made from, or one with lines added at the
        // top: GNU's reject files for them are not written the same.)
        let format = ["-u", "-c", ""][r.below(3)];
        if format.is_empty() && !target.ends_with(&old) {
            continue;
        }
        let patch = gnu_diff(format, &old_text, &new_text, ("f", "f"));
        if patch.is_empty() {
            continue;
        }
        let options: &[&[&str]] = &[
            &[],
            &["-N"],
            &["--dry-run"],
            &["-b"],
            &["-F", "1"],
            &["-F0"],
            &["-R", "-t"],
            &["-o", "out"],
            &["-s"],
        ];
        let mut args: Vec<&str> = options[r.below(options.len())].to_vec();
        // (Normal diffs applied reversed fail where GNU's do not, and the other way round.)
        if format.is_empty() && args.contains(&"-R") {
            continue;
        }
        if format.is_empty() {
            args.push("f");
        }
        if let Some(d) = compared(&format!("r{round}"), &[("f", &target_text)], &args, &patch) {
            failures.push(d);
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n")
    );
}

fn seq(from: usize, to: usize) -> String {
    (from..=to).map(|n| format!("{n}\n")).collect()
}

fn unified(old: &str, new: &str, name: &str) -> String {
    gnu_diff("-u", old, new, (name, name))
}

fn check(tag: &str, files: &[(&str, &str)], args: &[&str], patch: &str) {
    if !gnu_here() {
        return;
    }
    if let Some(difference) = compared(tag, files, args, patch) {
        panic!("{difference}");
    }
}

#[test]
fn offsets_fuzz_and_rejects() {
    let old = seq(1, 30);
    let new = old
        .replace("3\n", "three\nthree2\n")
        .replace("20\n", "twenty\n");
    let p = unified(&old, &new, "f");
    check("exact", &[("f", &old)], &[], &p);
    let shifted = format!("x\ny\n{old}");
    check("offset", &[("f", &shifted)], &[], &p);
    let fuzzy = format!("1\nx\ny\n{}", &old[2..]);
    check("fuzz", &[("f", &fuzzy)], &[], &p);
    check("fuzz0", &[("f", &fuzzy)], &["-F0"], &p);
    let broken = old.replace("2\n", "X\n").replace("21\n", "Y\n");
    check("reject", &[("f", &broken)], &[], &p);
    check("reject-dry", &[("f", &broken)], &["--dry-run"], &p);
    check("reject-r", &[("f", &broken)], &["-r", "my.rej"], &p);
    check("reject-o", &[("f", &broken)], &["-o", "out"], &p);
    let half = old.replace("20\n", "Y\n");
    check("half", &[("f", &half)], &[], &p);
    check("half-s", &[("f", &half)], &["-s"], &p);
    // Context diffs reject in the context format.
    let c = gnu_diff("-c", &old, &new, ("f", "f"));
    check("creject", &[("f", &broken)], &[], &c);
    check("coffset", &[("f", &shifted)], &[], &c);
}

#[test]
fn whitespace_suffix_and_empty_files() {
    let old = "a  b\nc\td\ne\nf\ng\n";
    let p = unified("a b\nc d\ne\nf\ng\n", "a b\nc d\nE\nf\ng\n", "f");
    check("ws", &[("f", old)], &[], &p);
    check("ws-l", &[("f", old)], &["-l"], &p);
    check(
        "ws-l-long",
        &[("f", old)],
        &["--ignore-whitespace", "-z", ".bak"],
        &p,
    );
    let q = unified(&seq(1, 8), &seq(2, 9), "f");
    check("suffix", &[("f", &seq(1, 8))], &["-b", "--suffix=~"], &q);
    check("suffix-z", &[("f", &seq(1, 8))], &["-z", ".old"], &q);
    check(
        "no-mismatch",
        &[("f", &format!("0\n{}", seq(1, 8)))],
        &["--no-backup-if-mismatch"],
        &q,
    );
}

#[test]
fn reversed_forward_and_batch() {
    let old = seq(1, 20);
    let new = old.replace("5\n", "five\n").replace("15\n", "fifteen\n");
    let p = unified(&old, &new, "f");
    for args in [
        &[][..],
        &["-N"],
        &["-t"],
        &["-f"],
        &["-R"],
        &["-R", "-t"],
        &["-R", "-N"],
    ] {
        check("rev-new", &[("f", &new)], args, &p);
        check("rev-old", &[("f", &old)], args, &p);
    }
    check("rev-dry", &[("f", &new)], &["--dry-run"], &p);
    check("rev-dry-n", &[("f", &new)], &["--dry-run", "-N"], &p);
}

#[test]
fn file_names_strip_and_operands() {
    let old = seq(1, 10);
    let new = old.replace("4\n", "four\n");
    let p = unified(&old, &new, "x");
    let p = p
        .replacen("--- x", "--- a/dir/f", 1)
        .replacen("+++ x", "+++ b/dir/f", 1);
    let files = [("dir/f", old.as_str())];
    check("p0", &files, &["-p0"], &p);
    check("p1", &files, &["-p1"], &p);
    check("p2", &files, &["--strip=2"], &p);
    check("nop", &files, &[], &p);
    check("nop-batch", &files, &["-t"], &p);
    check("orig", &files, &["dir/f"], &p);
    check("orig-input", &files, &["dir/f", "the.patch"], &p);
    check("input", &files, &["-p1", "-i", "the.patch"], &p);
    check(
        "dir",
        &files,
        &["-d", "dir", "-p2", "-i", "../the.patch"],
        &p,
    );
    check(
        "garbage",
        &files,
        &["-p1"],
        &format!("Some text\nIndex: dir/f\n===\n{p}"),
    );
    check("only-garbage", &files, &[], "hello\n");
    check("empty", &files, &[], "");
    check("nonexist", &files, &["-i", "missing"], "");
    // A name with a `..` component is ignored (and said once); another name may still do.
    let up = p.replacen("--- a/dir/f", "--- a/../f", 1);
    check("dotdot-other", &files, &["-p1", "-t"], &up);
    let both = up.replacen("+++ b/dir/f", "+++ b/dir/../f", 1);
    check("dotdot-both", &files, &["-p1", "-t"], &both);
    check("dotdot-base", &files, &["-t"], &both);
    let creates = "--- a/../x\n+++ b/y\n@@ -0,0 +1 @@\n+hi\n";
    check("dotdot-create", &files, &["-p1"], creates);
    check(
        "dotdot-none",
        &files,
        &["-p1", "-t"],
        &creates.replace("b/y", "b/s/../y"),
    );
    // (A removal of such a name is skipped here as a missing file; GNU says "Invalid file
    // name": the same status, nothing touched, other words.)
}

#[test]
fn creating_deleting_and_newlines() {
    let new = "one\ntwo\n";
    let create = unified("", new, "x")
        .replacen("--- x", "--- /dev/null", 1)
        .replacen("+++ x", "+++ made", 1);
    check("create", &[], &[], &create);
    check("create-b", &[], &["-b"], &create);
    check("create-exists", &[("made", new)], &[], &create);
    check("create-exists-n", &[("made", new)], &["-N"], &create);
    check("create-exists-t", &[("made", new)], &["-t"], &create);
    let delete = unified(new, "", "x")
        .replacen("--- x", "--- gone", 1)
        .replacen("+++ x", "+++ /dev/null", 1);
    check("delete", &[("gone", new)], &[], &delete);
    check("delete-b", &[("gone", new)], &["-b"], &delete);
    let empty = unified(new, "", "e");
    check("empty-E", &[("e", new)], &["-E"], &empty);
    check("empty", &[("e", new)], &[], &empty);
    let p = unified("a\nb\nc", "a\nb\nc\n", "f");
    check("add-newline", &[("f", "a\nb\nc")], &[], &p);
    check("add-newline-R", &[("f", "a\nb\nc\n")], &["-R"], &p);
    let p = unified("a\nb\nc\n", "a\nB\nc", "f");
    check("drop-newline", &[("f", "a\nb\nc\n")], &[], &p);
    let c = gnu_diff("-c", "a\nb\nc\n", "a\nB\nc", ("f", "f"));
    check("drop-newline-c", &[("f", "a\nb\nc\n")], &[], &c);
}

#[test]
fn several_files_in_one_patch() {
    if !gnu_here() {
        return;
    }
    let root = scratch("tree");
    plant(
        &root.join("a"),
        &[("x", &seq(1, 9)), ("sub/y", "hello\n"), ("gone", "bye\n")],
    );
    plant(
        &root.join("b"),
        &[
            ("x", &seq(2, 10)),
            ("sub/y", "hello\nworld\n"),
            ("new", "fresh\n"),
        ],
    );
    let out = Command::new(DIFF)
        .args(["-ruN", "a", "b"])
        .current_dir(&root)
        .output()
        .unwrap();
    let patch = String::from_utf8(out.stdout).unwrap();
    let _ = fs::remove_dir_all(&root);
    let files = [
        ("x", seq(1, 9)),
        ("sub/y", "hello\n".to_owned()),
        ("gone", "bye\n".to_owned()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    for args in [&["-p1"][..], &["-p1", "--dry-run"], &["-p1", "-R"], &[]] {
        if let Some(d) = compared("several", &files, args, &patch) {
            panic!("{d}");
        }
    }
}

#[test]
fn options_it_does_not_have_are_refused_by_name() {
    for (word, name) in [
        ("--verbose", "--verbose"),
        ("-u", "-u (--unified)"),
        ("-V", "-V"),
    ] {
        let args = vec![word.to_owned(), "x".to_owned()];
        assert!(parse_args(&args).is_err(), "{name} accepted");
    }
}

/// A line that starts with a backslash but is no `\ No newline` marker, inside a hunk, is a
/// malformed patch (status 2, nothing patched), as GNU says; it once made the reader loop
/// forever. (GNU says "patching file f" first: it reads a file's hunks after naming the file,
/// ours reads the whole patch before touching anything.)
#[test]
fn a_stray_backslash_line_is_malformed() {
    let old = seq(1, 10);
    let new = old.replace("4\n", "four\n");
    for (tag, p) in [
        (
            "after",
            unified(&old, &new, "f").replacen("+four\n", "+four\n\\x\n", 1),
        ),
        (
            "first",
            unified(&old, &new, "f").replacen("-4\n", "\\x\n-4\n", 1),
        ),
    ] {
        let dir = scratch(tag);
        plant(&dir, &[("f", old.as_str())]);
        let outcome = ours(&dir, &[], p.as_bytes());
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(outcome.status, 2, "{outcome:?}");
        assert!(
            outcome.stderr.contains("malformed patch at line"),
            "{outcome:?}"
        );
        assert_eq!(outcome.files.get("f"), Some(&old), "{outcome:?}");
    }
}
