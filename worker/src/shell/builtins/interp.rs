//! `python`/`python3`, `node`/`qjs` and `pip`/`pip3`: command lines that need an interpreter are
//! handed to the worker through [`Interpreters`](crate::shell::Interpreters). A program file is a
//! guest path read through the confined filesystem; its contents become the code and its
//! absolute guest path `argv[0]`.

use sandbox_protocol::Language;

use super::{lines, read_input};
use crate::shell::InterpreterRun;
use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::normalize;

/// Python options that take no value and change nothing here.
const PY_IGNORED: [&str; 10] = ["-u", "-B", "-O", "-OO", "-I", "-E", "-s", "-S", "-q", "-b"];

/// Writes a run's output and returns its exit code, checking the deadline it may have passed.
fn finish(ctx: &mut Ctx<'_, '_>, run: &InterpreterRun) -> Result<i32, Abort> {
    ctx.out(&run.stdout);
    ctx.err(&run.stderr);
    ctx.check()?;
    Ok(run.exit_code)
}

/// Runs `code` with `argv` and this command's stdin (unless the code itself came from stdin).
fn run(
    ctx: &mut Ctx<'_, '_>,
    language: Language,
    code: &str,
    argv: &[String],
    code_from_stdin: bool,
) -> Result<i32, Abort> {
    ctx.check()?;
    let stdin = if code_from_stdin {
        Vec::new()
    } else {
        ctx.stdin.all().to_vec()
    };
    let result = ctx.sh.interpreters.run(language, code, argv, &stdin);
    finish(ctx, &result)
}

/// Reads a program file; `None` after printing the interpreter's kind of error.
fn program(ctx: &mut Ctx<'_, '_>, path: &str) -> Option<(String, String)> {
    let guest = normalize(ctx.cwd(), path);
    let data = read_input(ctx, path)?;
    Some((String::from_utf8_lossy(&data).into_owned(), guest))
}

pub(super) fn python(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-c" => {
                let Some(code) = args.get(i + 1) else {
                    ctx.warn("Argument expected for the -c option");
                    return Ok(2);
                };
                let mut argv = vec!["-c".to_string()];
                argv.extend(args[i + 2..].iter().cloned());
                return run(ctx, Language::Python, code, &argv, false);
            }
            "-m" => {
                let Some(module) = args.get(i + 1) else {
                    ctx.warn("Argument expected for the -m option");
                    return Ok(2);
                };
                if module == "pip" {
                    return pip(ctx, &args[i + 2..]);
                }
                let mut argv = vec![module.clone()];
                argv.extend(args[i + 2..].iter().cloned());
                let code = format!(
                    "import runpy as _r, sys as _s\n_s.argv[0] = {module:?}\n_r.run_module({module:?}, run_name='__main__', alter_sys=True)\n"
                );
                return run(ctx, Language::Python, &code, &argv, false);
            }
            "-V" | "--version" => {
                return run(
                    ctx,
                    Language::Python,
                    "import sys\nprint('Python ' + sys.version.split()[0])\n",
                    &["-c".into()],
                    false,
                );
            }
            "-h" | "--help" => {
                ctx.outs("usage: python [-c CODE | -m MODULE | FILE | -] [ARGS]\n(runs in the session's interpreter: state persists between calls)\n");
                return Ok(0);
            }
            "-W" | "-X" => i += 2,
            "-" => {
                let code = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
                let mut argv = vec!["-".to_string()];
                argv.extend(args[i + 1..].iter().cloned());
                return run(ctx, Language::Python, &code, &argv, true);
            }
            s if PY_IGNORED.contains(&s) => i += 1,
            s if s.starts_with('-') => {
                ctx.warn(format_args!(
                    "option {s} is not supported (use -c, -m or a file)"
                ));
                return Ok(2);
            }
            file => {
                let Some((code, guest)) = program(ctx, file) else {
                    return Ok(2);
                };
                let mut argv = vec![guest];
                argv.extend(args[i + 1..].iter().cloned());
                return run(ctx, Language::Python, &code, &argv, false);
            }
        }
    }
    let code = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
    if code.trim().is_empty() {
        ctx.warn(
            "no interactive mode here: use python -c CODE, python FILE, or pipe code into python",
        );
        return Ok(2);
    }
    run(ctx, Language::Python, &code, &[String::new()], true)
}

pub(super) fn node(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let i = 0;
    if let Some(a) = args.get(i) {
        match a.as_str() {
            "-e" | "--eval" | "-p" | "--print" => {
                let Some(code) = args.get(i + 1) else {
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
                let mut argv = vec![ctx.name.clone()];
                argv.extend(args[i + 2..].iter().cloned());
                return run(ctx, Language::JavaScript, &code, &argv, false);
            }
            "-h" | "--help" => {
                ctx.outs("usage: node [-e CODE | -p EXPR | FILE | -] [ARGS]\n(QuickJS-NG in the session's interpreter: state persists between calls)\n");
                return Ok(0);
            }
            "-" => {
                let code = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
                return run(ctx, Language::JavaScript, &code, &[ctx.name.clone()], true);
            }
            s if s.starts_with('-') => {
                ctx.warn(format_args!("bad option: {s} (use -e, -p or a file)"));
                return Ok(9);
            }
            file => {
                let Some((code, guest)) = program(ctx, file) else {
                    return Ok(1);
                };
                let mut argv = vec![guest];
                argv.extend(args[i + 1..].iter().cloned());
                return run(ctx, Language::JavaScript, &code, &argv, false);
            }
        }
    }
    let code = String::from_utf8_lossy(ctx.stdin.all()).into_owned();
    if code.trim().is_empty() {
        ctx.warn("no interactive mode here: use node -e CODE, node FILE, or pipe code into node");
        return Ok(9);
    }
    run(ctx, Language::JavaScript, &code, &[ctx.name.clone()], true)
}

/// Lists installed distributions in the Python session (`pip list`/`pip freeze`).
const PIP_LIST: &str = "import importlib.metadata as _m\n\
for _d in sorted(_m.distributions(), key=lambda d: (d.metadata['Name'] or '').lower()):\n    \
print(FORMAT)\n";

pub(super) fn pip(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(sub) = args.first() else {
        ctx.warn("usage: pip install [-r FILE] NAME[==VERSION]... | pip list | pip freeze | pip show NAME");
        return Ok(1);
    };
    match sub.as_str() {
        "install" => {}
        "list" => {
            let code = PIP_LIST.replace("FORMAT", "f\"{_d.metadata['Name']:<30} {_d.version}\"");
            return run(ctx, Language::Python, &code, &["pip".into()], false);
        }
        "freeze" => {
            let code = PIP_LIST.replace("FORMAT", "f\"{_d.metadata['Name']}=={_d.version}\"");
            return run(ctx, Language::Python, &code, &["pip".into()], false);
        }
        "show" => {
            let Some(name) = args.get(1) else {
                ctx.warn("ERROR: Please provide a package name or names.");
                return Ok(1);
            };
            let code = format!(
                "import importlib.metadata as _m, sys\ntry:\n    _d = _m.distribution({name:?})\nexcept _m.PackageNotFoundError:\n    print('WARNING: Package(s) not found: ' + {name:?}, file=sys.stderr); sys.exit(1)\nprint('Name: ' + _d.metadata['Name']); print('Version: ' + _d.version); print('Summary: ' + (_d.metadata['Summary'] or ''))\n"
            );
            return run(ctx, Language::Python, &code, &["pip".into()], false);
        }
        "--version" | "-V" => {
            ctx.outs("pip (sandbox: `pip install` installs into the session through the worker)\n");
            return Ok(0);
        }
        other => {
            ctx.warn(format_args!(
                "ERROR: unknown command \"{other}\" (supported: install, list, freeze, show)"
            ));
            return Ok(1);
        }
    }
    let mut reqs = Vec::new();
    let mut i = 1;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-r" | "--requirement" => {
                let Some(file) = args.get(i).cloned() else {
                    ctx.warn("ERROR: -r option requires 1 argument");
                    return Ok(1);
                };
                i += 1;
                let Some(data) = read_input(ctx, &file) else {
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
            "-q"
            | "--quiet"
            | "-U"
            | "--upgrade"
            | "--user"
            | "--no-cache-dir"
            | "--break-system-packages"
            | "--no-input"
            | "--disable-pip-version-check"
            | "-qq"
            | "--pre" => {}
            s if s.starts_with('-') => {
                ctx.warn(format_args!("ignoring option {s}"));
            }
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
