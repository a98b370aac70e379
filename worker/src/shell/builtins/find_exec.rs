//! `find ... -exec CMD {} \;` and `-exec CMD {} +` (and `-execdir`): a WebAssembly tool cannot
//! start a process, so the shell runs them. The toolbox's `find` evaluates the expression with
//! the trailing `-exec` actions replaced by `-print0`, which is true where they would have run
//! and prints nothing else; the shell then runs each command as GNU find would: once per path
//! (`;`, each later `-exec` only where the one before succeeded), or with as many paths as fit
//! per run (`+`, find failing when a run failed). An `-exec` that is not at the end of the
//! expression, or an expression that prints by itself, goes to the toolbox's `find`, which
//! refuses it with the `xargs` way.

use crate::shell::exec::{Abort, Ctx, Input};

/// The bytes of paths one `-exec ... +` run takes at most (GNU builds command lines of up to
/// 128 KiB as well).
const BATCH_BYTES: usize = 128 << 10;

/// One trailing `-exec`/`-execdir` action.
struct Exec {
    /// The command's words, `{}` included.
    words: Vec<String>,
    /// `+`: many paths per run.
    batched: bool,
    /// `-execdir`: run in the path's directory, on `./NAME`.
    in_dir: bool,
}

/// Whether `argv` (`find ...`) has an `-exec`-like action, which a tool cannot run.
pub(super) fn wants_exec(argv: &[String]) -> bool {
    argv.iter()
        .any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
}

/// Runs `find` with trailing `-exec` actions; `None` when the expression is not of that shape
/// (the caller runs the tool, which explains).
pub(super) fn find_exec(ctx: &mut Ctx<'_, '_>, argv: &[String]) -> Option<Result<i32, Abort>> {
    if let Some(ok) = argv.iter().find(|a| matches!(a.as_str(), "-ok" | "-okdir")) {
        ctx.warn(format_args!(
            "{ok} asks for each file on a terminal, which a sandbox command has not; use -exec"
        ));
        return Some(Ok(1));
    }
    let start = argv.iter().position(|a| a == "-exec" || a == "-execdir")?;
    let execs = trailing_execs(&argv[start..])?;
    // An action before them would print into the list of paths.
    let prints = [
        "-print", "-print0", "-printf", "-fprint", "-fprint0", "-fprintf", "-ls",
    ];
    if argv[..start]
        .iter()
        .any(|a| prints.contains(&a.as_str()) || a == "-fls")
    {
        return None;
    }
    let mut search: Vec<String> = argv[..start].to_vec();
    search.push("-print0".into());
    Some(run(ctx, &search, &execs))
}

/// The `-exec ... ;` and `-exec ... {} +` groups that make up all of `rest`.
fn trailing_execs(mut rest: &[String]) -> Option<Vec<Exec>> {
    let mut execs = Vec::new();
    while let Some((action, after)) = rest.split_first() {
        let in_dir = match action.as_str() {
            "-exec" => false,
            "-execdir" => true,
            // `-a` between actions is what juxtaposition means already.
            "-a" | "-and" if !execs.is_empty() => {
                rest = after;
                continue;
            }
            _ => return None,
        };
        let end = after.iter().position(|w| w == ";" || w == "+")?;
        let words = after[..end].to_vec();
        let batched = after[end] == "+";
        // GNU: `+` only ends the action right after a lone `{}`.
        if words.is_empty() || (batched && words.last().is_none_or(|w| w != "{}")) {
            return None;
        }
        execs.push(Exec {
            words,
            batched,
            in_dir,
        });
        rest = &after[end + 1..];
    }
    (!execs.is_empty()).then_some(execs)
}

fn run(ctx: &mut Ctx<'_, '_>, search: &[String], execs: &[Exec]) -> Result<i32, Abort> {
    let pipe = ctx.sh.io.open_pipe();
    // The commands, not the search, read find's stdin (as GNU's children inherit it).
    let found = ctx.sh.run_argv(search, pipe, ctx.err, Input::default());
    let listed = ctx.sh.io.close_pipe();
    let mut status = found?;
    let paths: Vec<String> = (listed.all().split(|&b| b == 0))
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    // Per path, each `;` action in turn, as long as the ones before it succeeded.
    let each: Vec<&Exec> = execs.iter().filter(|e| !e.batched).collect();
    for path in &paths {
        for exec in &each {
            ctx.check()?;
            if run_one(ctx, exec, std::slice::from_ref(path))? != 0 {
                break;
            }
        }
    }
    for exec in execs.iter().filter(|e| e.batched) {
        for batch in batches(&paths) {
            ctx.check()?;
            if run_one(ctx, exec, batch)? != 0 {
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `paths` in runs of at most [`BATCH_BYTES`] (and at least one path each).
fn batches(paths: &[String]) -> Vec<&[String]> {
    let mut out = Vec::new();
    let (mut from, mut bytes) = (0, 0);
    for (i, path) in paths.iter().enumerate() {
        if i > from && bytes + path.len() + 1 > BATCH_BYTES {
            out.push(&paths[from..i]);
            (from, bytes) = (i, 0);
        }
        bytes += path.len() + 1;
    }
    if from < paths.len() {
        out.push(&paths[from..]);
    }
    out
}

/// Runs `exec` on `paths` (one, or a batch for `+`): `{}` inside a word becomes the path (GNU
/// replaces it anywhere in `;`'s words); `-execdir` runs in the path's directory.
fn run_one(ctx: &mut Ctx<'_, '_>, exec: &Exec, paths: &[String]) -> Result<i32, Abort> {
    let shown: Vec<String> = if exec.in_dir {
        paths
            .iter()
            .map(|p| format!("./{}", base_name(p)))
            .collect()
    } else {
        paths.to_vec()
    };
    let argv: Vec<String> = if exec.batched {
        let fixed = &exec.words[..exec.words.len() - 1];
        fixed.iter().cloned().chain(shown).collect()
    } else {
        (exec.words.iter())
            .map(|w| w.replace("{}", &shown[0]))
            .collect()
    };
    let cwd = ctx.sh.state.cwd.clone();
    if exec.in_dir {
        ctx.sh.state.cwd = directory_of(&cwd, &paths[0]);
    }
    let status = ctx.sh.run_argv(&argv, ctx.out, ctx.err, ctx.stdin.clone());
    ctx.sh.state.cwd = cwd;
    status
}

/// The last component of a path as find prints it (`./a/b` → `b`; `.` stays `.`).
fn base_name(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    trimmed
        .rsplit('/')
        .next()
        .filter(|b| !b.is_empty())
        .unwrap_or(path)
}

/// The guest directory holding `path` (relative to `cwd` unless absolute), for `-execdir`.
fn directory_of(cwd: &str, path: &str) -> String {
    let full = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{}/{path}", cwd.trim_end_matches('/'))
    };
    match full.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) | None => "/".to_owned(),
        Some((dir, _)) => dir.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    #[test]
    fn find_exec_runs_each_command_as_gnu_find() {
        let mut s = Sandbox::new();
        s.ok("mkdir -p d/e; echo 'x TODO' > d/a.py; echo y > d/e/b.py; echo 'z TODO' > c.txt");
        assert_eq!(
            s.ok("find . -name '*.py' -exec grep -l TODO {} \\;"),
            "./d/a.py\n"
        );
        assert_eq!(
            s.ok("find . -name '*.py' -exec echo '<{}>' \\; | sort"),
            "<./d/a.py>\n<./d/e/b.py>\n"
        );
        assert_eq!(
            s.ok("find d -type f -exec wc -l {} + | sort"),
            "1 d/a.py\n1 d/e/b.py\n2 total\n"
        );
        // A later `-exec` runs where the one before succeeded; `+` fails find when a run
        // fails, `;` does not.
        assert_eq!(
            s.ok("find . -type f -exec grep -q TODO {} \\; -exec echo hit {} \\; | sort"),
            "hit ./c.txt\nhit ./d/a.py\n"
        );
        assert_eq!(s.sh("find d -type f -exec grep -q nothing {} \\;").2, 0);
        assert_eq!(s.sh("find d -type f -exec grep -q nothing {} +").2, 1);
        assert_eq!(s.ok("find d -name b.py -execdir pwd \\;"), "/app/d/e\n");
        assert_eq!(s.ok("find d -name b.py -execdir ls {} \\;"), "./b.py\n");
        assert_eq!(
            s.ok("find . -path ./d -prune -o -type f -exec cat {} \\;"),
            "z TODO\n"
        );
        assert_eq!(
            s.ok("find . -name c.txt -exec sh -c 'echo \"[$1]\"' _ {} \\;"),
            "[./c.txt]\n"
        );
        // The commands share find's stdin, each reading on where the one before stopped.
        assert_eq!(
            s.ok("printf 'x\\ny\\n' | find d -name '*.py' -exec sh -c 'read l; echo \"$l\"' \\;"),
            "x\ny\n"
        );
        // What it cannot run is refused, never ignored.
        let (_, err, status) = s.sh("find . -ok rm {} \\;");
        assert!(status == 1 && err.contains("-ok asks"), "{err}");
        let (_, err, status) = s.sh("find . -exec echo {} \\; -print");
        assert!(status != 0 && err.contains("-exec"), "{err}");
    }
}
