//! `jq` as jq 1.6 behaves: its options (bundled short ones too), its inputs (JSON texts from
//! files or stdin, `-R` lines, `-s` slurped, `-n`, `--stream` events), its output (see
//! [`print`]), its exit statuses (the last input's: 5 for an uncaught error, 1 and 4 with `-e`;
//! 2 for usage and unreadable files, 3 for compile errors, 4 for unparsable input) and the
//! wording of its errors (`jq: error (at <stdin>:1): Cannot index number with string "a"`).
//!
//! The filter language is jaq's (jaq-core's parser, compiler and interpreter, jaq-std's
//! definitions): a jq in about 5k lines of safe Rust that builds for wasm32-wasip1 unchanged,
//! rather than one of our own or jq's C. The values are jaq-json's, copied into [`value`] to
//! index `null` and word errors as jq does. Where jaq differs from jq 1.6 in what agents use,
//! `defs.jq`, [`funs`], [`math`] and [`time`] put jq's behaviour back: numbers as jq writes them
//! (`1.0` is `1`, also in `tostring` and interpolation), regexes on the `regex` crate with jq's
//! flags and match objects, `@csv`/`@tsv`/`@sh`/`@html`/`@uri`/`@base64`, `join`, `ltrimstr`,
//! `from_entries`, `limit`, `input`, `setpath`/`delpaths`/`tostream`, `debug`, `stderr`,
//! `halt_error`, `input_filename`, `$__loc__`, dates in UTC.
//!
//! Refused by name (exit 2): `-C` (colour: the output is never a terminal here, and jq would
//! colour it), `--run-tests`, `--debug-*`. `-L` is taken, modules are not (`import` fails).

mod funs;
mod math;
mod print;
mod time;
mod value;

use std::collections::VecDeque;
use std::rc::Rc;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Error, RcIter, ValT};

use crate::own::reason;
use funs::{POSITION, flush, to_string, write_out};
use print::{Style, type_name};
use value::Val;

const USAGE: &str = "Usage:\tjq [OPTIONS...] FILTER [FILES...]\n\
\tjq [OPTIONS...] --args FILTER [STRINGS...]\n\
\tjq [OPTIONS...] --jsonargs FILTER [JSON_TEXTS...]\n\n\
jq is a tool for processing JSON inputs, applying the given filter to\n\
its JSON text inputs and producing the filter's results as JSON on\n\
standard output. (This one is jq 1.6's options and language on jaq.)\n\n\
Some of the options include:\n\
  -c               compact instead of pretty-printed output;\n\
  -n               use `null` as the single input value;\n\
  -e               set the exit status code based on the output;\n\
  -s               read (slurp) all inputs into an array; apply filter to it;\n\
  -r               output raw strings, not JSON texts;\n\
  -j               like -r, without a newline after each output;\n\
  -a               output non-ASCII characters as \\uXXXX escapes;\n\
  -R               read raw lines, not JSON texts;\n\
  -S               sort keys of objects on output;\n\
  -M               monochrome output (the default here);\n\
  -f file          read the filter from a file;\n\
  --tab            use tabs for indentation;\n\
  --indent n       use n spaces for indentation (max 7 spaces);\n\
  --seq            write an RS before each output;\n\
  --arg a v        set variable $a to value <v>;\n\
  --argjson a v    set variable $a to JSON value <v>;\n\
  --slurpfile a f  set variable $a to an array of JSON texts read from <f>;\n\
  --rawfile a f    set variable $a to a string consisting of the contents of <f>;\n\
  --args           remaining arguments are string arguments, not files;\n\
  --jsonargs       remaining arguments are JSON arguments, not files;\n\
  --               terminates argument processing;\n\
Not here: -C (colour), -L and modules, --stream, --run-tests.";

const TRY: &str = "Use jq --help for help with command-line options,\n\
or see the jq manpage, or online docs  at https://stedolan.github.io/jq";

/// What the command line asked.
#[derive(Default)]
struct Options {
    program: Option<String>,
    from_file: bool,
    files: Vec<String>,
    raw_out: bool,
    join: bool,
    null_input: bool,
    slurp: bool,
    raw_in: bool,
    exit_status: bool,
    seq: bool,
    stream: bool,
    style: Style,
    /// `$name`s and their values, in order (`$ARGS.named` too).
    named: Vec<(String, Val)>,
    positional: Vec<Val>,
}

/// How an invocation stops early: its message and status.
struct Stop(String, i32);

fn usage_error(msg: impl std::fmt::Display) -> Stop {
    Stop(format!("jq: {msg}\n{TRY}"), 2)
}

fn parse_json(text: &str) -> Result<Val, String> {
    use hifijson::token::Lex;
    let mut lexer = hifijson::SliceLexer::new(text.as_bytes());
    lexer.exactly_one(Val::parse).map_err(|e| e.to_string())
}

/// All the JSON texts of `text`.
fn parse_all(text: &str) -> Result<Vec<Val>, String> {
    let (values, error) = parse_stream(text);
    match error {
        Some(e) => Err(e),
        None => Ok(values.into_iter().map(|(v, _)| v).collect()),
    }
}

fn read_file(path: &str) -> Result<String, String> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => Err(format!("Could not open {path}: {}", reason(&e))),
    }
}

fn parse_options(args: &[String]) -> Result<Options, Stop> {
    let mut o = Options {
        style: Style {
            indent: 2,
            ..Style::default()
        },
        ..Options::default()
    };
    // 0: files; 1: --args; 2: --jsonargs.
    let mut further = 0;
    let mut done = false;
    let mut i = 0;
    let need = |i: usize, n: usize, what: &str| -> Result<(), Stop> {
        if i + n >= args.len() {
            Err(usage_error(what))
        } else {
            Ok(())
        }
    };
    while i < args.len() {
        let text = &args[i];
        // jq reads `-1 | length` as a filter: a dash not before a letter starts no option.
        let not_option = !text.starts_with('-')
            || text == "-"
            || !text[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '-');
        if done || not_option {
            if text == "-" && !done {
                i += 1;
                continue;
            }
            if o.program.is_none() {
                o.program = Some(text.clone());
            } else if further == 1 {
                o.positional.push(Val::from(text.clone()));
            } else if further == 2 {
                match parse_json(text) {
                    Ok(v) => o.positional.push(v),
                    Err(_) => {
                        return Err(usage_error(format!(
                            "Invalid JSON text passed to --jsonargs"
                        )));
                    }
                }
            } else {
                o.files.push(text.clone());
            }
            i += 1;
            continue;
        }
        if text == "--" {
            done = true;
            i += 1;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            match long {
                "raw-output" => o.raw_out = true,
                "join-output" => {
                    o.raw_out = true;
                    o.join = true;
                }
                "compact-output" => o.style.indent = 0,
                "null-input" => o.null_input = true,
                "slurp" => o.slurp = true,
                "raw-input" => o.raw_in = true,
                "exit-status" => o.exit_status = true,
                "sort-keys" => o.style.sort_keys = true,
                "ascii-output" => o.style.ascii = true,
                "monochrome-output" | "unbuffered" => {}
                "tab" => {
                    o.style.tab = true;
                    o.style.indent = 1;
                }
                "seq" => o.seq = true,
                "from-file" => o.from_file = true,
                "args" => further = 1,
                "jsonargs" => further = 2,
                "indent" => {
                    need(i, 1, "--indent takes one parameter")?;
                    match args[i + 1].parse::<i32>() {
                        Ok(n) if (-1..=7).contains(&n) => {
                            o.style.tab = n == -1;
                            o.style.indent = n.max(0) as usize;
                        }
                        Ok(_) => {
                            return Err(usage_error("--indent takes a number between -1 and 7"));
                        }
                        Err(_) => return Err(usage_error("--indent takes a number")),
                    }
                    i += 1;
                }
                "arg" | "argjson" | "slurpfile" | "rawfile" | "argfile" => {
                    let example = match long {
                        "arg" => "--arg varname value",
                        "argjson" => "--argjson varname text",
                        _ => "--slurpfile varname filename",
                    };
                    if i + 2 >= args.len() {
                        return Err(usage_error(format!(
                            "--{long} takes two parameters (e.g. {example})"
                        )));
                    }
                    let (name, value) = (args[i + 1].clone(), &args[i + 2]);
                    let value = match long {
                        "arg" => Val::from(value.clone()),
                        "argjson" => parse_json(value)
                            .map_err(|_| usage_error("invalid JSON text passed to --argjson"))?,
                        "rawfile" => Val::from(read_file(value).map_err(|e| {
                            Stop(format!("jq: Bad JSON in --rawfile {name} {value}: {e}"), 2)
                        })?),
                        _ => {
                            let all = read_file(value).and_then(|text| parse_all(&text)).map_err(
                                |e| {
                                    Stop(format!("jq: Bad JSON in --{long} {name} {value}: {e}"), 2)
                                },
                            )?;
                            if long == "argfile" && all.len() == 1 {
                                all.into_iter().next().unwrap_or_default()
                            } else {
                                all.into_iter().collect()
                            }
                        }
                    };
                    o.named.push((name, value));
                    i += 2;
                }
                "help" => return Err(Stop(USAGE.into(), 0)),
                "version" => return Err(Stop("jq-1.6".into(), 0)),
                "color-output" => return Err(refused("-C/--color-output", COLOUR)),
                "stream" => o.stream = true,
                "run-tests" | "debug-dump-disasm" | "debug-trace" | "debug-trace=all" => {
                    return Err(refused(text, "not supported"));
                }
                _ => return Err(usage_error(format!("Unknown option {text}"))),
            }
            i += 1;
            continue;
        }
        // A bundle of short options, as jq reads one: every letter must be known.
        for c in text[1..].chars() {
            match c {
                'r' => o.raw_out = true,
                'j' => {
                    o.raw_out = true;
                    o.join = true;
                }
                'c' => o.style.indent = 0,
                'n' => o.null_input = true,
                's' => o.slurp = true,
                'R' => o.raw_in = true,
                'e' => o.exit_status = true,
                'S' => o.style.sort_keys = true,
                'a' => o.style.ascii = true,
                'M' => {}
                'f' => o.from_file = true,
                'h' => return Err(Stop(USAGE.into(), 0)),
                'C' => return Err(refused("-C", COLOUR)),
                // A module search path: taken, as modules are not (`import` fails).
                'L' => {
                    if text.len() == 2 {
                        need(
                            i,
                            1,
                            "-L takes a parameter: (e.g. -L /search/path or -L/search/path)",
                        )?;
                        i += 1;
                    }
                    break;
                }
                _ => return Err(usage_error(format!("Unknown option {text}"))),
            }
        }
        i += 1;
    }
    Ok(o)
}

const COLOUR: &str = "colour output is not supported (the output here is never a terminal; \
                      use -M or leave it out)";

fn refused(option: &str, why: &str) -> Stop {
    Stop(format!("jq: {option}: {why}\n{TRY}"), 2)
}

/// `jq [OPTIONS...] FILTER [FILES...]`: its exit status.
pub fn main(args: crate::Args) -> i32 {
    let args = crate::getopt::words(args);
    let o = match parse_options(&args) {
        Ok(o) => o,
        Err(Stop(msg, code)) => {
            if code == 0 {
                println!("{msg}");
            } else {
                eprintln!("{msg}");
            }
            return code;
        }
    };
    // With no filter, jq 1.6 runs `.` when its output is no terminal, as it never is here.
    let mut program = o.program.clone().unwrap_or_else(|| ".".into());
    if o.from_file {
        // `-f file`: the first operand is the filter's file, the rest are inputs.
        let Some(path) = &o.program else {
            eprintln!("jq: -f takes the file of the filter\n{TRY}");
            return 2;
        };
        match read_file(path) {
            Ok(text) => program = text,
            Err(e) => {
                eprintln!("jq: {e}");
                return 2;
            }
        }
    }
    let files = o.files.clone();
    let filter = match compile(&program, &o.named) {
        Ok(f) => f,
        Err(msg) => {
            eprintln!("{msg}");
            return 3;
        }
    };
    run(&o, &filter, files)
}

type Filter = jaq_core::Filter<jaq_core::Native<Val>>;

/// The program with each `$__loc__` as its `{file, line}`.
fn rewrite(code: &str) -> String {
    use jaq_core::load::lex::{Lexer, StrPart, Tok, Token};
    fn walk<'a>(code: &'a str, tokens: &[Token<&'a str>], edits: &mut Vec<(usize, usize, String)>) {
        for Token(s, tok) in tokens {
            let at = jaq_core::load::span(code, s);
            match tok {
                Tok::Str(parts) => {
                    for part in parts {
                        if let StrPart::Term(Token(_, Tok::Block(inner))) = part {
                            walk(code, inner, edits);
                        }
                    }
                }
                Tok::Block(inner) => walk(code, inner, edits),
                Tok::Var if *s == "$__loc__" => {
                    let line = code[..at.start].matches('\n').count() + 1;
                    let loc = format!("{{\"file\":\"<top-level>\",\"line\":{line}}}");
                    edits.push((at.start, at.end, loc));
                }
                _ => {}
            }
        }
    }
    let Ok(tokens) = Lexer::new(code).lex() else {
        return code.to_owned();
    };
    let mut edits = Vec::new();
    walk(code, &tokens, &mut edits);
    edits.sort_by_key(|e| e.0);
    let mut out = String::new();
    let mut at = 0;
    for (start, end, text) in edits {
        out.push_str(&code[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&code[at..]);
    out
}

/// The line of `code` that `part` (a slice of it, or of our definitions) starts on.
fn line_of(code: &str, part: &str) -> usize {
    let (base, at) = (code.as_ptr() as usize, part.as_ptr() as usize);
    if at < base || at > base + code.len() {
        return 1;
    }
    code[..at - base].matches('\n').count() + 1
}

/// jq's report of compile errors: each, then their count.
fn compile_error(errors: &[String]) -> String {
    let n = errors.len();
    let plural = if n == 1 { "" } else { "s" };
    format!("{}\njq: {n} compile error{plural}", errors.join("\n"))
}

/// The filter of `program`, or jq's compile error message.
fn compile(program: &str, named: &[(String, Val)]) -> Result<Filter, String> {
    let code = rewrite(program);
    let defs =
        jaq_core::load::parse(include_str!("defs.jq"), |p| p.defs()).expect("defs.jq parses");
    let value_defs = jaq_core::load::parse(include_str!("value_defs.jq"), |p| p.defs())
        .expect("value_defs.jq parses");
    let loader = Loader::new(jaq_std::defs().chain(value_defs).chain(defs));
    let arena = Arena::default();
    let modules = loader
        .load(
            &arena,
            File {
                code: &code,
                path: (),
            },
        )
        .map_err(|errs| {
            let mut list = Vec::new();
            for (_, e) in errs {
                use jaq_core::load::Error as E;
                match e {
                E::Io(es) => {
                    list.extend(es.into_iter().map(|(p, e)| format!("jq: error: {p}: {e}")))
                }
                E::Lex(es) => list.extend(es.into_iter().map(|(expect, found)| {
                    format!(
                        "jq: error: syntax error, expected {} at <top-level>, line {}:\n{program}",
                        expect.as_str(),
                        line_of(&code, found)
                    )
                })),
                E::Parse(es) => list.extend(es.into_iter().map(|(expect, found)| {
                    let found = if found.is_empty() {
                        "$end".to_owned()
                    } else {
                        format!("'{found}'")
                    };
                    format!(
                        "jq: error: syntax error, unexpected {found}, expecting {} \
                         (Unix shell quoting issues?) at <top-level>, line 1:\n{program}",
                        expect.as_str()
                    )
                })),
            }
            }
            compile_error(&list)
        })?;
    let mut vars = vec!["$ENV".to_owned(), "$ARGS".to_owned()];
    vars.extend(named.iter().map(|(n, _)| format!("${n}")));
    let vars: Vec<&str> = vars.iter().map(String::as_str).collect();
    // Ours first: the first native of a name wins.
    let natives = (funs::natives().into_iter())
        .chain(math::natives())
        .chain(time::natives())
        .chain(jaq_std::base_funs())
        .chain(value::funs());
    let compiled = Compiler::default()
        .with_funs(natives)
        .with_global_vars(vars.iter().copied())
        .compile(modules);
    compiled.map_err(|errs| {
        let mut list = Vec::new();
        for (_, es) in errs {
            for (name, undefined) in es {
                use jaq_core::compile::Undefined as U;
                let what = match undefined {
                    U::Filter(arity) => format!("{name}/{arity}"),
                    _ => name.to_string(),
                };
                list.push(format!(
                    "jq: error: {what} is not defined at <top-level>, line {}:\n{program}",
                    line_of(&code, name)
                ));
            }
        }
        compile_error(&list)
    })
}

/// Where inputs come from, one source after another.
struct Inputs {
    sources: VecDeque<Option<String>>,
    raw: bool,
    /// `--stream`: each value as its `[path, leaf]` and closing `[path]` events.
    stream: bool,
    /// Values (and the line each ends on) of the source being read, and its parse error.
    pending: VecDeque<(Val, usize)>,
    error: Option<String>,
    /// A file could not be read: jq goes on and exits 2.
    unreadable: Rc<std::cell::Cell<bool>>,
}

/// The JSON texts of `text`, each with the line jq 1.6 reports it at (the lines read when it
/// ends: through the end of its last line), and the parse error that stopped them.
fn parse_stream(text: &str) -> (Vec<(Val, usize)>, Option<String>) {
    use hifijson::token::Lex;
    let bytes = text.as_bytes();
    let mut lexer = hifijson::SliceLexer::new(bytes);
    let mut out = Vec::new();
    let (mut counted, mut lines) = (0, 0);
    let mut line_at = |end: usize| {
        let stop = bytes[end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| end + p + 1);
        if stop > counted {
            lines += bytes[counted..stop].iter().filter(|&&b| b == b'\n').count();
            counted = stop;
        }
        lines
    };
    loop {
        let Some(token) = lexer.ws_token() else {
            return (out, None);
        };
        match Val::parse(token, &mut lexer) {
            Ok(v) => {
                let end = bytes.len() - lexer.as_slice().len();
                out.push((v, line_at(end)));
            }
            Err(e) => {
                let at = bytes.len() - lexer.as_slice().len();
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                let column = at
                    - bytes[..at]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |p| p + 1);
                return (out, Some(format!("{e} at line {line}, column {column}")));
            }
        }
    }
}

impl Inputs {
    fn read(&self, source: &Option<String>) -> Option<String> {
        let bytes = match source {
            None => crate::own::read_input("-"),
            Some(path) => std::fs::read(path),
        };
        match bytes {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) => {
                let name = source.as_deref().unwrap_or("<stdin>");
                eprintln!("jq: error: Could not open file {name}: {}", reason(&e));
                self.unreadable.set(true);
                None
            }
        }
    }

    /// Every input as one: `-s`.
    fn slurp(&mut self) -> Result<Val, String> {
        let mut text = String::new();
        let mut values = Vec::new();
        while let Some(source) = self.sources.pop_front() {
            let Some(t) = self.read(&source) else {
                continue;
            };
            if self.raw {
                text.push_str(&t);
            } else {
                let (vals, error) = parse_stream(&t);
                values.extend(vals.into_iter().map(|(v, _)| v));
                if let Some(e) = error {
                    return Err(e);
                }
            }
            let lines = t.matches('\n').count();
            POSITION.with(|p| *p.borrow_mut() = (source.clone(), lines, true));
        }
        Ok(if self.raw {
            Val::from(text)
        } else {
            values.into_iter().collect()
        })
    }
}

impl Iterator for Inputs {
    type Item = Result<Val, String>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((v, line)) = self.pending.pop_front() {
                POSITION.with(|p| {
                    let mut p = p.borrow_mut();
                    p.1 = line;
                    p.2 = true;
                });
                return Some(Ok(v));
            }
            if let Some(e) = self.error.take() {
                return Some(Err(e));
            }
            let source = self.sources.pop_front()?;
            let Some(text) = self.read(&source) else {
                continue;
            };
            POSITION.with(|p| *p.borrow_mut() = (source.clone(), 0, true));
            if self.raw {
                for (n, line) in text.split_inclusive('\n').enumerate() {
                    let line = line.strip_suffix('\n').unwrap_or(line);
                    self.pending.push_back((Val::from(line.to_owned()), n + 1));
                }
            } else {
                let (values, error) = parse_stream(&text);
                for (v, line) in values {
                    if self.stream {
                        let mut events = Vec::new();
                        funs::stream(&v, &mut Vec::new(), &mut events);
                        self.pending.extend(events.into_iter().map(|e| (e, line)));
                    } else {
                        self.pending.push_back((v, line));
                    }
                }
                self.error = error;
            }
        }
    }
}

/// Where jq 1.6 says an error happened: `<stdin>:3`, `data.json:1` or `<unknown>`.
fn position() -> String {
    POSITION.with(|p| {
        let p = p.borrow();
        if !p.2 {
            return "<unknown>".to_owned();
        }
        format!("{}:{}", p.0.as_deref().unwrap_or("<stdin>"), p.1)
    })
}

/// An uncaught error's message, and whether jq calls it a string: `error(v)`'s value (and the
/// errors of [`value`] and [`funs`], in jq's words already) as it is, jaq's own messages in
/// jq 1.6's words.
fn describe(e: &Error<Val>) -> (String, bool) {
    let v = e.clone().into_val();
    if *e == Error::new(v.clone()) {
        return match &v {
            Val::Str(s) => (s.to_string(), true),
            v => (print::value(v, Style::COMPACT), false),
        };
    }
    let text = to_string(&v);
    (translate(&text).unwrap_or(text), true)
}

/// A JSON text at the start of `s`, and what follows it.
fn value_prefix(s: &str) -> Option<(Val, &str)> {
    use hifijson::token::Lex;
    let mut lexer = hifijson::SliceLexer::new(s.as_bytes());
    let token = lexer.ws_token()?;
    let v = Val::parse(token, &mut lexer).ok()?;
    let rest = &s[s.len() - lexer.as_slice().len()..];
    Some((v, rest))
}

fn described(v: &Val) -> String {
    format!("{} ({})", type_name(v), print::truncated(v))
}

/// jaq-core's and jaq-std's messages (`cannot index 1 with "a"`, `cannot use 1 as array`,
/// `cannot calculate ...`) as jq 1.6 words them.
fn translate(text: &str) -> Option<String> {
    if let Some(rest) = text.strip_prefix("cannot index ") {
        let (l, rest) = value_prefix(rest)?;
        let (r, _) = value_prefix(rest.strip_prefix(" with ")?)?;
        return Some(match &r {
            Val::Str(k) => format!("Cannot index {} with string \"{k}\"", type_name(&l)),
            r => format!("Cannot index {} with {}", type_name(&l), type_name(r)),
        });
    }
    if let Some(rest) = text.strip_prefix("cannot use ") {
        let (v, rest) = value_prefix(rest)?;
        let typ = rest.strip_prefix(" as ")?;
        return Some(if typ.starts_with("iterable") {
            format!("Cannot iterate over {}", described(&v))
        } else {
            format!("{} cannot be used as {}", described(&v), typ)
        });
    }
    if let Some(rest) = text.strip_prefix("cannot calculate ") {
        let (l, rest) = value_prefix(rest)?;
        let rest = rest.strip_prefix(' ')?;
        let (op, rest) = rest.split_once(' ')?;
        let (r, _) = value_prefix(rest)?;
        let verb = match op {
            "+" => "added",
            "-" => "subtracted",
            "*" => "multiplied",
            "/" => "divided",
            _ => "divided because the divisor is zero",
        };
        return Some(format!(
            "{} and {} cannot be {verb}",
            described(&l),
            described(&r)
        ));
    }
    if let Some(v) = text.strip_suffix(" has no length") {
        let (v, _) = value_prefix(v)?;
        return Some(format!("{} has no length", described(&v)));
    }
    None
}

/// What one input's run ended with: jq 1.6's status is the last input's.
enum Outcome {
    /// No output (4 with `-e`).
    Nothing,
    /// The last output was neither `null` nor `false` (1 with `-e` if not).
    Last(bool),
    /// An uncaught error (5).
    Failed,
}

fn run(o: &Options, filter: &Filter, files: Vec<String>) -> i32 {
    let unreadable = Rc::new(std::cell::Cell::new(false));
    let mut inputs = Inputs {
        sources: if files.is_empty() {
            VecDeque::from([None])
        } else {
            files.into_iter().map(Some).collect()
        },
        raw: o.raw_in,
        stream: o.stream,
        pending: VecDeque::new(),
        error: None,
        unreadable: unreadable.clone(),
    };
    let env = Val::from_map(std::env::vars().map(|(k, v)| (Val::from(k), Val::from(v))))
        .unwrap_or_default();
    let named = Val::from_map((o.named.iter()).map(|(k, v)| (Val::from(k.clone()), v.clone())))
        .unwrap_or_default();
    let args = Val::from_map([
        (
            Val::from("positional".to_owned()),
            o.positional.iter().cloned().collect(),
        ),
        (Val::from("named".to_owned()), named),
    ])
    .unwrap_or_default();
    let mut vars = vec![env, args];
    vars.extend(o.named.iter().map(|(_, v)| v.clone()));

    // `-n` runs once on null, `-s` once on everything; otherwise once per input. Either way
    // `input`/`inputs` read what is left.
    let once: Option<Result<Val, String>> = if o.null_input {
        Some(Ok(Val::Null))
    } else if o.slurp {
        Some(inputs.slurp())
    } else {
        None
    };
    let shared = RcIter::new(inputs);
    let shared: &RcIter<dyn Iterator<Item = Result<Val, String>>> = &shared;
    let mut once = once;
    let mut outcome = None;
    let mut parse_failed = None;
    loop {
        let item = match once.take() {
            Some(item) => item,
            None if o.null_input || o.slurp => break,
            None => match { shared }.next() {
                Some(item) => item,
                None => break,
            },
        };
        let input = match item {
            Ok(v) => v,
            Err(e) => {
                parse_failed = Some(e);
                break;
            }
        };
        let mut this = Outcome::Nothing;
        let ctx = Ctx::new(vars.iter().cloned(), shared);
        for out in filter.run((ctx, input)) {
            match out {
                Ok(v) => {
                    this = Outcome::Last(!matches!(v, Val::Null | Val::Bool(false)));
                    if !write_out(output(o, &v).as_bytes()) {
                        return 2;
                    }
                }
                Err(e) => {
                    let (msg, is_string) = describe(&e);
                    flush();
                    // jq 1.6 stops the input quietly on `error(null)`.
                    if msg != "null" || is_string {
                        this = Outcome::Failed;
                        if is_string {
                            eprintln!("jq: error (at {}): {msg}", position());
                        } else {
                            eprintln!("jq: error (at {}) (not a string): {msg}", position());
                        }
                    }
                    break;
                }
            }
        }
        outcome = Some(this);
    }
    if !flush() {
        return 2;
    }
    if let Some(e) = parse_failed {
        eprintln!("parse error: {e}");
        return 4;
    }
    if unreadable.get() {
        return 2;
    }
    match (outcome, o.exit_status) {
        (Some(Outcome::Failed), _) => 5,
        (None | Some(Outcome::Nothing), true) => 4,
        (Some(Outcome::Last(false)), true) => 1,
        _ => 0,
    }
}

/// One output as the options write it.
fn output(o: &Options, v: &Val) -> String {
    let mut text = String::new();
    if o.seq {
        text.push('\u{1e}');
    }
    match (v, o.raw_out && !o.style.ascii) {
        (Val::Str(s), true) => text.push_str(s),
        _ => text.push_str(&print::value(v, o.style)),
    }
    if !o.join {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests;
