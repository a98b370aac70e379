//! `awk`, a POSIX awk of our own that behaves like the system's (mawk, one true awk) on the
//! programs agents write: `-F`, `-v`, `-f`, operands that are files or `NAME=VALUE`, BEGIN/END,
//! patterns and ranges, fields, associative arrays, user functions, printf, getline and output
//! redirection to files. What needs another process (`| cmd`, `cmd | getline`, `system`) is
//! refused with the way around it. Errors are awk's: a message on stderr and status 2.
//!
//! The work is split by stage: [`lexer`] (tokens), [`parser`] (the syntax tree and its
//! statements, nesting bounded) and [`expr`] (its expressions), [`interp`] (running it, call
//! depth bounded) and [`builtins`] (the built-in functions and getline), [`value`] and
//! [`format`] (values, their conversions and printf), [`io`] (records in, files out).

mod builtins;
mod expr;
mod format;
mod interp;
mod io;
mod lexer;
mod parser;
mod value;

use std::ffi::OsString;

use interp::{Interp, Jump};
use parser::Pattern;
use value::Value;

const USAGE: &str = "usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]\n       awk [-F value] [-v var=value] [-f program-file] [--] [file ...]";

/// Runs `awk` with `args` (without its name); the exit status.
pub fn main(args: impl Iterator<Item = OsString>) -> i32 {
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let mut fs: Option<String> = None;
    let mut assigns: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let (opt, rest) = a.split_at(2.min(a.len()));
        let value = |i: &mut usize| -> Option<String> {
            if !rest.is_empty() {
                Some(rest.to_owned())
            } else {
                *i += 1;
                args.get(*i).cloned()
            }
        };
        match opt {
            "-F" | "-v" | "-f" => {
                let Some(v) = value(&mut i) else {
                    eprintln!("awk: option requires an argument -- {}\n{USAGE}", &opt[1..]);
                    return 2;
                };
                match opt {
                    "-F" => fs = Some(v),
                    "-v" => assigns.push(v),
                    _ => files.push(v),
                }
            }
            "--" if a == "--version" || a == "--help" => {
                println!("awk (sandbox-mcp toolbox): a POSIX awk\n{USAGE}");
                return 0;
            }
            _ => {
                eprintln!("awk: not an option: {a}\n{USAGE}");
                return 2;
            }
        }
        i += 1;
    }
    let mut rest = args[i..].to_vec();
    let source = if files.is_empty() {
        if rest.is_empty() {
            eprintln!("{USAGE}");
            return 2;
        }
        rest.remove(0)
    } else {
        let mut text = String::new();
        for f in &files {
            match std::fs::read_to_string(f) {
                Ok(t) => {
                    text.push_str(&t);
                    text.push('\n');
                }
                Err(e) => {
                    eprintln!("awk: couldn't open file {f} ({})", interp::describe(&e));
                    return 2;
                }
            }
        }
        text
    };
    let tokens = match lexer::lex(&source) {
        Ok(t) => t,
        Err((msg, line)) => {
            eprintln!("awk: line {line}: {msg}");
            return 2;
        }
    };
    let prog = match parser::parse(tokens) {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("awk: {msg}");
            return 2;
        }
    };
    let mut it = match Interp::new(&prog) {
        Ok(it) => it,
        Err(msg) => {
            eprintln!("awk: {msg}");
            return 2;
        }
    };
    it.set_argv(&rest);
    if let Some(fs) = fs {
        let fs = if fs == "t" {
            "\t".to_string()
        } else {
            lexer::unescape(&fs)
        };
        it.set_global("FS", Value::Str(fs));
    }
    for a in &assigns {
        match interp::assignment(a) {
            Some((name, value)) => it.set_global(&name, Value::input(lexer::unescape(&value))),
            None => {
                eprintln!("awk: improper assignment: -v {a}");
                return 2;
            }
        }
    }
    let status = match run(&mut it, &prog) {
        Ok(()) => it.exit_code,
        Err(msg) => {
            it.flush();
            eprintln!("awk: {msg}");
            2
        }
    };
    it.flush();
    status
}

/// BEGIN, the records, END; an error's message.
fn run(it: &mut Interp, prog: &parser::Program) -> Result<(), String> {
    let mut exited = false;
    for block in &prog.begin {
        match it.run_block(block) {
            Ok(()) => {}
            Err(Jump::Exit) => {
                exited = true;
                break;
            }
            Err(Jump::Error(e)) => return Err(e),
            Err(_) => return Err("next used in BEGIN".into()),
        }
    }
    if !exited && (!prog.rules.is_empty() || !prog.end.is_empty()) {
        exited = records(it, prog)?;
    }
    let _ = exited;
    for block in &prog.end {
        match it.run_block(block) {
            Ok(()) => {}
            Err(Jump::Exit) => break,
            Err(Jump::Error(e)) => return Err(e),
            Err(_) => return Err("next used in END".into()),
        }
    }
    Ok(())
}

/// The main loop over the input; whether `exit` ended it.
fn records(it: &mut Interp, prog: &parser::Program) -> Result<bool, String> {
    let jump = |j: Jump| match j {
        Jump::Error(e) => Err(e),
        other => Ok(other),
    };
    while let Some(rec) = it.next_main().or_else(|j| jump(j).map(|_| None))? {
        it.count_record();
        it.set_record(rec);
        for (i, rule) in prog.rules.iter().enumerate() {
            let matched = match &rule.pattern {
                Pattern::All => Ok(true),
                Pattern::Expr(e) => it.pattern_matches(e),
                Pattern::Range(start, end) => {
                    if it.range_active[i] {
                        it.pattern_matches(end).map(|done| {
                            if done {
                                it.range_active[i] = false;
                            }
                            true
                        })
                    } else {
                        match it.pattern_matches(start) {
                            Ok(true) => it.pattern_matches(end).map(|done| {
                                it.range_active[i] = !done;
                                true
                            }),
                            other => other,
                        }
                    }
                }
            };
            let result = matched.and_then(|m| match (m, &rule.action) {
                (false, _) => Ok(()),
                (true, Some(action)) => it.run_block(action),
                (true, None) => it.print_record(),
            });
            match result {
                Ok(()) => {}
                Err(j) => match jump(j)? {
                    Jump::Next => break,
                    Jump::NextFile => {
                        it.skip_file();
                        break;
                    }
                    _ => return Ok(true),
                },
            }
        }
    }
    Ok(false)
}
