//! `bc` as GNU bc 1.07.1 runs it: arbitrary-precision decimal arithmetic with `scale`,
//! `ibase` and `obase`, variables, arrays and functions, the `-l` math library, programs read
//! from the files named and then from stdin, each line run as soon as it is read. Its messages
//! (syntax errors with their line, runtime errors with GNU's `func=` and `adr=`) go to stderr
//! and, as GNU's, leave the exit status 0; only an unreadable file or a bad option fail.
//!
//! What differs: `read()` is refused (stdin is usually the program here), and a result past
//! ten million digits is a runtime error instead of a long wait for the sandbox's deadline.

mod math;
mod num;
mod parse;
mod run;

use crate::getopt::{Long, parse, words};
use parse::{Item, Mode, Parser};
use run::{Interp, Stop};
use std::collections::HashSet;

const LONG: &[Long] = &[
    ("help", 'h', false),
    ("interactive", 'i', false),
    ("mathlib", 'l', false),
    ("quiet", 'q', false),
    ("standard", 's', false),
    ("warn", 'w', false),
    ("version", 'v', false),
];

const USAGE: &str = "usage: bc [options] [file ...]
  -h  --help         print this usage and exit
  -i  --interactive  force interactive mode
  -l  --mathlib      use the predefined math routines
  -q  --quiet        don't print initial banner
  -s  --standard     non-standard bc constructs are errors
  -w  --warn         warn about non-standard bc constructs
  -v  --version      print version information and exit
";

const VERSION: &str = "bc 1.07.1
Copyright 1991-1994, 1997, 1998, 2000, 2004, 2006, 2008, 2012-2017 Free Software Foundation, Inc.
";

/// What `warranty` prints.
pub const WARRANTY: &str = "
bc 1.07.1
Copyright 1991-1994, 1997, 1998, 2000, 2004, 2006, 2008, 2012-2017 Free Software Foundation, Inc.

    This program is free software; you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation; either version 3 of the License , or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program. If not, write to

       The Free Software Foundation, Inc.
       51 Franklin Street, Fifth Floor
       Boston, MA 02110-1301  USA

";

pub fn main(args: crate::Args) -> i32 {
    let args = words(args);
    let o = match parse(&args, "hilqswv", LONG) {
        Ok(o) => o,
        Err(e) => {
            // GNU's getopt message, then its usage (on stdout).
            eprintln!("bc: {e}");
            print!("{USAGE}");
            return 1;
        }
    };
    if o.has('h') {
        print!("{USAGE}");
        return 0;
    }
    if o.has('v') {
        print!("{VERSION}");
        return 0;
    }
    let mode = Mode {
        standard: o.has('s'),
        warn: o.has('w'),
    };
    let mut bc = Interp::new(o.has('l'), line_length());
    if o.has('i') && !o.has('q') {
        print!(
            "{VERSION}This is free software with ABSOLUTELY NO WARRANTY.\nFor details type `warranty'. \n"
        );
    }
    let mut voids = HashSet::new();
    let mut parser = Parser::new(&o.operands, mode, o.has('i'), &mut voids);
    loop {
        let item = parser.item();
        bc.out.raw(&parser.take_echo());
        let errors = parser.take_errors();
        if !errors.is_empty() {
            bc.out.flush();
            eprint!("{errors}");
        }
        bc.out.raw(&std::mem::take(&mut parser.said));
        match item {
            Item::Eof => break,
            Item::Quit => return finish(&mut bc),
            Item::Skip => {}
            Item::Define(f) => bc.define(f),
            Item::Run(stmts) => match bc.run(&stmts) {
                Ok(()) | Err(Stop::Error) => {}
                Err(Stop::Halt) => return finish(&mut bc),
            },
        }
    }
    if let Some(file) = parser.unavailable() {
        bc.out.flush();
        eprintln!("File {file} is unavailable.");
        return 1;
    }
    finish(&mut bc)
}

fn finish(bc: &mut Interp) -> i32 {
    if bc.out.flush() { 0 } else { 1 }
}

/// BC_LINE_LENGTH as GNU reads it (`atoi`): 0 never wraps, 1 and 2 (and negatives) mean 70.
fn line_length() -> usize {
    let Ok(text) = std::env::var("BC_LINE_LENGTH") else {
        return 70;
    };
    let t = text.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1i64, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let n: i64 = digits
        .chars()
        .take_while(char::is_ascii_digit)
        .take(18)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
        * sign;
    if n != 0 && n < 3 { 70 } else { n as usize }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What bc prints for `program` (with `-l` when `mathlib`).
    fn bc(program: &str, mathlib: bool) -> String {
        let mut voids = HashSet::new();
        let mut parser = Parser::of_text(program, &mut voids);
        let mut bc = Interp::new(mathlib, 70);
        loop {
            match parser.item() {
                Item::Eof | Item::Quit => break,
                Item::Skip => {}
                Item::Define(f) => bc.define(f),
                Item::Run(stmts) => match bc.run(&stmts) {
                    Ok(()) | Err(Stop::Error) => {}
                    Err(Stop::Halt) => break,
                },
            }
            bc.out.raw(&std::mem::take(&mut parser.said));
        }
        bc.out.take()
    }

    #[test]
    fn what_agents_type() {
        assert_eq!(bc("scale=2; 10/3\n", false), "3.33\n");
        assert_eq!(bc("7 * 1.5\n", false), "10.5\n");
        assert_eq!(bc("s(1)\n", true), ".84147098480789650665\n");
        assert_eq!(bc("obase=16; 255\n", false), "FF\n");
        assert_eq!(bc("3 > 5; 5 > 3\n", false), "0\n1\n");
        assert_eq!(bc("1/3\n", true), ".33333333333333333333\n");
        assert_eq!(bc("2^100\n", false), "1267650600228229401496703205376\n");
    }

    #[test]
    fn gnu_grammar() {
        // Assignment binds tighter than a comparison; unary minus tighter than `^`.
        assert_eq!(bc("a = 3 < 4; a; -2^2; 2^3^2\n", false), "1\n3\n4\n512\n");
        // Functions see their callers' autos (dynamic scope); arrays by value and reference.
        let program = "define g() { return y * 2 }\ndefine f(x) { auto y; y = x; return g() }\n\
                       f(4)\ndefine h(a[]) { a[0] = 9 }\ndefine k(*a[]) { a[0] = 9 }\n\
                       b[0] = 1; z = h(b[]); b[0]; z = k(b[]); b[0]\n";
        assert_eq!(bc(program, false), "8\n1\n9\n");
        // `quit` acts when read, even where it would never run; the line before it ran.
        assert_eq!(bc("5\nif (0) quit\n6\n", false), "5\n");
        // A syntax error drops its line only.
        assert_eq!(bc("1 + + 2\n3\n", false), "3\n");
        // A runtime error drops the rest of its line only.
        assert_eq!(bc("1/0; 4\n5\n", false), "5\n");
    }

    #[test]
    fn long_numbers_wrap_as_gnu() {
        let out = bc("2^300\n", false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 69);
        assert!(lines[0].ends_with('\\'));
    }
}
