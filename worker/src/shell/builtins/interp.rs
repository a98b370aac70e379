//! `python`/`python3`, `node`/`qjs` and `pip`/`pip3`: command lines that need an interpreter are
//! handed to the worker through [`Interpreters`](crate::shell::Interpreters). A program file is a
//! guest path read through the confined filesystem; its contents become the code and its
//! absolute guest path `argv[0]`.

use sandbox_protocol::Language;

use super::io::{lines, read_input};
use crate::shell::InterpreterRun;
use crate::shell::exec::{Abort, Ctx};
use crate::shell::guest_fs::normalize;

/// Python options that take no value and change nothing here.
const PY_IGNORED: [&str; 10] = ["-u", "-B", "-O", "-OO", "-I", "-E", "-s", "-S", "-q", "-b"];

/// Lists installed distributions in the Python session (`pip list`/`pip freeze`): each name
/// once, as the import system finds it (a package both compiled in and vendored is the first
/// on `sys.path`), sorted as pip sorts them.
const PIP_LIST: &str = "import importlib.metadata as _m, re as _re\n\
_found = {}\n\
for _d in _m.distributions():\n    \
_found.setdefault(_re.sub(r'[-_.]+', '-', _d.metadata['Name'] or '').lower(), _d)\n\
_rows = [(_found[_k].metadata['Name'], _found[_k].version) for _k in sorted(_found)]\n\
PRINT\n";

/// `pip list`'s table: a header, dashes, and columns as wide as their widest cell.
const PIP_TABLE: &str = "_w = [max(len(r[i]) for r in [('Package', 'Version')] + _rows) for i in (0, 1)]\n\
for _r in [('Package', 'Version'), ('-' * _w[0], '-' * _w[1])] + _rows:\n    \
print(_r[0].ljust(_w[0]), _r[1])";

/// `pip freeze`'s lines.
const PIP_FREEZE: &str = "for _r in _rows:\n    print(_r[0] + '==' + _r[1])";

/// Shows one distribution (`pip show NAME`); `NAME` is a Python string literal.
const PIP_SHOW: &str = "import importlib.metadata as _m, sys\n\
try:\n    _d = _m.distribution(NAME)\n\
except _m.PackageNotFoundError:\n    \
print('WARNING: Package(s) not found: ' + NAME, file=sys.stderr); sys.exit(1)\n\
print('Name: ' + _d.metadata['Name']); print('Version: ' + _d.version); \
print('Summary: ' + (_d.metadata['Summary'] or ''))\n";

/// pip options that change nothing here.
const PIP_IGNORED: &str = "-q -qq --quiet -U --upgrade --user --no-cache-dir \
    --break-system-packages --no-input --disable-pip-version-check --pre";

/// What an interpreter command line runs.
struct Program {
    language: Language,
    code: String,
    /// `sys.argv` / `scriptArgs`.
    argv: Vec<String>,
    /// The code came from stdin, so the program's own stdin is empty.
    code_from_stdin: bool,
}

impl Program {
    fn new(language: Language, code: impl Into<String>, argv: Vec<String>) -> Self {
        let code = code.into();
        Self {
            language,
            code,
            argv,
            code_from_stdin: false,
        }
    }

    /// The code piped in.
    fn from_stdin(ctx: &mut Ctx<'_, '_>, language: Language, argv: Vec<String>) -> Self {
        let code = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
        Self {
            language,
            code,
            argv,
            code_from_stdin: true,
        }
    }

    /// Nothing to run: no code was piped in (there is no interactive mode here).
    fn is_empty(&self) -> bool {
        self.code.trim().is_empty()
    }

    /// A program file given by a guest path: its absolute path is `argv[0]`. `None` after the
    /// error.
    fn file(
        ctx: &mut Ctx<'_, '_>,
        language: Language,
        path: &str,
        args: &[String],
    ) -> Option<Self> {
        let guest = normalize(ctx.cwd(), path);
        let code = String::from_utf8_lossy(&read_input(ctx, path)?).into_owned();
        Some(Self::new(language, code, argv(&guest, args)))
    }

    /// Runs it with this command's stdin (unless the code itself came from stdin).
    fn run(self, ctx: &mut Ctx<'_, '_>) -> Result<i32, Abort> {
        ctx.check()?;
        let stdin = if self.code_from_stdin {
            Vec::new()
        } else {
            ctx.stdin.all().to_vec()
        };
        let result = ctx
            .sh
            .interpreters
            .run(self.language, &self.code, &self.argv, &stdin);
        finish(ctx, &result)
    }
}

/// `argv`: `first`, then `rest`.
fn argv(first: &str, rest: &[String]) -> Vec<String> {
    std::iter::once(first.to_string())
        .chain(rest.iter().cloned())
        .collect()
}

/// Writes a run's output and returns its exit code, checking the deadline it may have passed.
fn finish(ctx: &mut Ctx<'_, '_>, run: &InterpreterRun) -> Result<i32, Abort> {
    ctx.out(&run.stdout);
    ctx.err(&run.stderr);
    ctx.check()?;
    Ok(run.exit_code)
}

pub(super) fn python(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    const PY: Language = Language::Python;
    // Options that change nothing here may come before the program.
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-W" | "-X" => i += 2,
            a if PY_IGNORED.contains(&a) => i += 1,
            _ => break,
        }
    }
    let (first, rest) = match args.get(i..).and_then(<[String]>::split_first) {
        Some((first, rest)) => (Some(first.as_str()), rest),
        None => (None, &[][..]),
    };
    let program = match (first, rest.split_first()) {
        (Some("-c"), Some((code, after))) => Program::new(PY, code, argv("-c", after)),
        (Some("-m"), Some((module, after))) if module == "pip" => return pip(ctx, after),
        (Some("-m"), Some((module, after))) => {
            let code = format!(
                "import runpy as _r, sys as _s\n_s.argv[0] = {module:?}\n\
                 _r.run_module({module:?}, run_name='__main__', alter_sys=True)\n"
            );
            Program::new(PY, code, argv(module, after))
        }
        (Some(o @ ("-c" | "-m")), None) => {
            ctx.warn(format_args!("Argument expected for the {o} option"));
            return Ok(2);
        }
        (Some("-V" | "--version"), _) => {
            let code = "import sys\nprint('Python ' + sys.version.split()[0])\n";
            Program::new(PY, code, vec!["-c".into()])
        }
        (Some("-h" | "--help"), _) => {
            ctx.outs(
                "usage: python [-c CODE | -m MODULE | FILE | -] [ARGS]\n\
                 (a fresh interpreter each run: the session's files, not its variables)\n",
            );
            return Ok(0);
        }
        (Some("-"), _) => Program::from_stdin(ctx, PY, argv("-", rest)),
        (Some(s), _) if s.starts_with('-') => {
            ctx.warn(format_args!(
                "option {s} is not supported (use -c, -m or a file)"
            ));
            return Ok(2);
        }
        (Some(file), _) => match Program::file(ctx, PY, file, rest) {
            Some(p) => p,
            None => return Ok(2),
        },
        (None, _) => {
            let program = Program::from_stdin(ctx, PY, vec![String::new()]);
            if program.is_empty() {
                ctx.warn(
                    "no interactive mode here: use python -c CODE, python FILE, or pipe code \
                     into python",
                );
                return Ok(2);
            }
            program
        }
    };
    program.run(ctx)
}

pub(super) fn node(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    const JS: Language = Language::JavaScript;
    let name = ctx.name.clone();
    let program = match args.split_first() {
        Some((a, rest)) if matches!(a.as_str(), "-e" | "--eval" | "-p" | "--print") => {
            let Some((code, after)) = rest.split_first() else {
                ctx.warn(format_args!("{a} requires an argument"));
                return Ok(9);
            };
            let code = if a.starts_with("-p") || a == "--print" {
                // Print the value, like node -p.
                let quoted = serde_json::to_string(code).unwrap_or_default();
                format!("console.log((0, eval)({quoted}));\n")
            } else {
                code.clone()
            };
            Program::new(JS, code, argv(&name, after))
        }
        Some((a, _)) if a == "-h" || a == "--help" => {
            ctx.outs(
                "usage: node [-e CODE | -p EXPR | FILE | -] [ARGS]\n\
                 (QuickJS-NG, a fresh interpreter each run: the session's files, not its variables)\n",
            );
            return Ok(0);
        }
        Some((a, _)) if a == "-v" || a == "--version" => {
            // Not Node's `vNN.N.N`: a version check must see that this is another engine.
            let version = crate::javascript::QUICKJS_VERSION;
            ctx.outs(&format!(
                "QuickJS-NG {version} (JavaScript without Node.js: no npm, no Node modules)\n"
            ));
            return Ok(0);
        }
        Some((a, _)) if a == "-" => Program::from_stdin(ctx, JS, vec![name]),
        Some((a, _)) if a.starts_with('-') => {
            ctx.warn(format_args!("bad option: {a} (use -e, -p or a file)"));
            return Ok(9);
        }
        Some((file, rest)) => match Program::file(ctx, JS, file, rest) {
            Some(p) => p,
            None => return Ok(1),
        },
        None => {
            let program = Program::from_stdin(ctx, JS, vec![name]);
            if program.is_empty() {
                ctx.warn(
                    "no interactive mode here: use node -e CODE, node FILE, or pipe code into node",
                );
                return Ok(9);
            }
            program
        }
    };
    program.run(ctx)
}

pub(super) fn pip(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let list = |print: &str| PIP_LIST.replace("PRINT", print);
    let code = match args.first().map(String::as_str) {
        Some("install") => return pip_install(ctx, &args[1..]),
        Some("list") => list(PIP_TABLE),
        Some("freeze") => list(PIP_FREEZE),
        Some("show") => match args.get(1) {
            Some(name) => PIP_SHOW.replace("NAME", &format!("{name:?}")),
            None => {
                ctx.warn("ERROR: Please provide a package name or names.");
                return Ok(1);
            }
        },
        Some("--version" | "-V") => {
            ctx.outs("pip (sandbox: `pip install` installs into the session through the worker)\n");
            return Ok(0);
        }
        Some(other) => {
            ctx.warn(format_args!(
                "ERROR: unknown command \"{other}\" (supported: install, list, freeze, show)"
            ));
            return Ok(1);
        }
        None => {
            ctx.warn(
                "usage: pip install [-r FILE] NAME[==VERSION]... | pip list | pip freeze | \
                 pip show NAME",
            );
            return Ok(1);
        }
    };
    Program::new(Language::Python, code, vec!["pip".into()]).run(ctx)
}

/// `pip install`: names and `-r` files of requirements, installed through the worker.
fn pip_install(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut reqs = Vec::new();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "-r" | "--requirement" => {
                let Some(file) = rest.next() else {
                    ctx.warn("ERROR: -r option requires 1 argument");
                    return Ok(1);
                };
                let Some(data) = read_input(ctx, file) else {
                    return Ok(1);
                };
                for line in lines(&data) {
                    let line = String::from_utf8_lossy(line);
                    let line = line.split('#').next().unwrap_or("").trim();
                    if !line.is_empty() && !line.starts_with('-') {
                        reqs.push(line.to_string());
                    }
                }
            }
            s if PIP_IGNORED.split_whitespace().any(|o| o == s) => {}
            s if s.starts_with('-') => ctx.warn(format_args!("ignoring option {s}")),
            name => reqs.push(name.to_string()),
        }
    }
    if reqs.is_empty() {
        ctx.warn("ERROR: You must give at least one requirement to install");
        return Ok(1);
    }
    ctx.check()?;
    let result = ctx.sh.interpreters.pip_install(&reqs);
    finish(ctx, &result)
}
