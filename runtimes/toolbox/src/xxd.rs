//! `xxd` as vim's xxd (2022-01-14) prints and reverses a hex dump, ported from its `xxd.c`:
//! the same line layout (hex at `addrlen + 1 + grplen * x / octspergrp`, the text at a fixed
//! column), `-a`'s `*` for runs of zero lines, `-e`'s little-endian groups, `-i`'s C array,
//! `-p`'s plain lines and `-r`'s lenient parser. Its option words are xxd's own: one dash,
//! matched by their first letter (`-ps`, `-cols 8`, `-c8`), as xxd matches them. `-E`
//! (EBCDIC) is refused by name.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// The most bytes a line of the hex, bits or little-endian dump may show (xxd's `COLS`).
const COLS: i64 = 256;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Normal,
    Bits,
    Little,
    Plain,
    Include,
}

/// What the options asked.
struct Options {
    kind: Kind,
    autoskip: bool,
    capitalize: bool,
    decimal: bool,
    upper: bool,
    revert: bool,
    cols: Option<i64>,
    group: Option<i64>,
    length: Option<i64>,
    /// `-s`: (relative `+`, negative `-`, amount).
    seek: Option<(bool, bool, i64)>,
    display_offset: i64,
    name: Option<String>,
    files: Vec<String>,
}

const USAGE: &str = "Usage:\n       xxd [options] [infile [outfile]]\n    or\n       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]\nOptions:\n    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.\n    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.\n    -C          capitalize variable names in C include file style (-i).\n    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).\n    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).\n    -h          print this summary.\n    -i          output in C include file style.\n    -l len      stop after <len> octets.\n    -n name     set the variable name used in C include output (-i).\n    -o off      add <off> to the displayed file position.\n    -ps         output in postscript plain hexdump style.\n    -r          reverse operation: convert (or patch) hexdump into binary.\n    -r -s off   revert with <off> added to file positions found in hexdump.\n    -d          show offset in decimal instead of hex.\n    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.\n    -u          use upper case hex letters.\n    -v          show version: \"xxd 2022-01-14 by Juergen Weigert et al.\".\n    (-e little-endian dump is supported; -E EBCDIC is not.)\n";

/// C's `strtol(s, NULL, 0)`: leading blanks, a sign, `0x` hex or `0` octal, digits while they
/// last (nothing read is 0).
fn strtol(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if (s.starts_with("0x") || s.starts_with("0X"))
        && s[2..].starts_with(|c: char| c.is_ascii_hexdigit())
    {
        (16, &s[2..])
    } else if s.starts_with('0') {
        (8, s)
    } else {
        (10, s)
    };
    let mut n: i64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        n = n
            .saturating_mul(i64::from(radix))
            .saturating_add(i64::from(d));
    }
    if neg { -n } else { n }
}

/// Parses xxd's command line; `Err` is the message and the status.
fn parse(args: &[String]) -> Result<Options, (String, i32)> {
    let mut o = Options {
        kind: Kind::Normal,
        autoskip: false,
        capitalize: false,
        decimal: false,
        upper: false,
        revert: false,
        cols: None,
        group: None,
        length: None,
        seek: None,
        display_offset: 0,
        name: None,
        files: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if !arg.starts_with('-') || arg == "-" {
            o.files.push(arg.clone());
            continue;
        }
        if arg == "--" {
            o.files.extend(args[i..].iter().cloned());
            break;
        }
        // xxd reads `--cols` as `-cols`.
        let word = if arg.starts_with("--") && arg.len() > 2 {
            &arg[1..]
        } else {
            &arg[..]
        };
        let letter = word[1..].chars().next().unwrap_or('-');
        let rest = &word[1 + letter.len_utf8()..];
        // A value attached (`-c8`) unless the rest spells the long word (`-cols 8`).
        let mut value = |long: &str| -> Result<String, (String, i32)> {
            if !rest.is_empty() && !long.starts_with(rest) {
                return Ok(rest.to_owned());
            }
            match args.get(i) {
                Some(v) => {
                    i += 1;
                    Ok(v.clone())
                }
                None => Err((
                    format!("xxd: option '{word}' requires an argument\n{USAGE}"),
                    1,
                )),
            }
        };
        match letter {
            'a' => o.autoskip = !o.autoskip,
            'b' => o.kind = Kind::Bits,
            'e' => o.kind = Kind::Little,
            'u' => o.upper = true,
            'p' => o.kind = Kind::Plain,
            'i' => o.kind = Kind::Include,
            'd' => o.decimal = true,
            'r' => o.revert = true,
            'C' => o.capitalize = true,
            'c' => o.cols = Some(strtol(&value("ols")?)),
            'g' => o.group = Some(strtol(&value("roupsize")?)),
            'l' => o.length = Some(strtol(&value("en")?)),
            'o' => o.display_offset = strtol(&value("ffset")?),
            'n' => o.name = Some(value("ame")?),
            's' => {
                let v = value("eek")?;
                let v = v.trim_start();
                let (relative, v) = match v.strip_prefix('+') {
                    Some(r) => (true, r),
                    None => (false, v),
                };
                let (negative, v) = match v.strip_prefix('-') {
                    Some(r) => (true, r),
                    None => (false, v),
                };
                o.seek = Some((relative, negative, strtol(v)));
            }
            'v' => {
                return Err(("xxd 2022-01-14 by Juergen Weigert et al.\n".into(), 0));
            }
            'h' => return Err((USAGE.into(), 1)),
            'E' => {
                return Err((
                    "xxd: -E (EBCDIC characters) is not supported in the sandbox\n".into(),
                    1,
                ));
            }
            _ => {
                return Err((format!("xxd: unknown option '{arg}'\n{USAGE}"), 1));
            }
        }
    }
    if o.files.len() > 2 {
        return Err((format!("xxd: too many arguments\n{USAGE}"), 1));
    }
    Ok(o)
}

pub fn main(args: super::Args) -> i32 {
    let args: Vec<String> = crate::getopt::words(args);
    let o = match parse(&args) {
        Ok(o) => o,
        Err((message, 0)) => {
            // `-v` prints its line on stderr, as xxd does.
            eprint!("{message}");
            return 0;
        }
        Err((message, code)) => {
            eprint!("{message}");
            return code;
        }
    };
    let infile = o.files.first().filter(|f| *f != "-");
    let input = match infile {
        Some(path) => fs::read(path),
        None => {
            let mut all = Vec::new();
            io::stdin().read_to_end(&mut all).map(|_| all)
        }
    };
    let input = match input {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!(
                "xxd: {}: {}",
                infile.map_or("stdin", |f| f.as_str()),
                crate::own::reason(&e)
            );
            return 2;
        }
    };
    let outfile = o.files.get(1).filter(|f| *f != "-");
    if o.revert {
        if !matches!(o.kind, Kind::Normal | Kind::Plain) {
            eprintln!("xxd: Sorry, cannot revert this type of hexdump");
            // xxd exits with -1 (255), which a WASI program cannot: statuses stop below 126.
            return 1;
        }
        let cols = match o.cols {
            Some(c) if c > 0 => c,
            _ if o.kind == Kind::Plain => 30,
            _ => 16,
        };
        let base = match o.seek {
            Some((_, true, n)) => -n,
            Some((_, false, n)) => n,
            None => 0,
        };
        // What came before a backward seek is written, as xxd writes as it goes.
        let (writes, failure) = revert(&input, cols, o.kind == Kind::Plain, base);
        let code = match outfile {
            Some(path) => patch(path, &writes),
            None => {
                let mut out = Vec::new();
                for (at, bytes) in writes {
                    // Standard output cannot seek: a gap is zeros, as xxd writes them.
                    if out.len() < at as usize {
                        out.resize(at as usize, 0);
                    }
                    out.extend_from_slice(&bytes);
                }
                emit(&out)
            }
        };
        if let Some(message) = failure {
            eprintln!("xxd: {message}");
            return 5;
        }
        return code;
    }
    let (skipped, data) = match seek(&input, o.seek, infile.is_some()) {
        Some(cut) => cut,
        None => {
            eprintln!("xxd: Sorry, cannot seek.");
            return 4;
        }
    };
    let data = match o.length {
        Some(n) if n >= 0 && (n as usize) < data.len() => &data[..n as usize],
        _ => data,
    };
    let varname = o.name.clone().or_else(|| infile.cloned());
    let out = match dump(&o, data, skipped, varname.as_deref()) {
        Ok(out) => out,
        Err((message, code)) => {
            eprintln!("xxd: {message}");
            return code;
        }
    };
    match outfile {
        Some(path) => match fs::write(path, &out) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("xxd: {path}: {}", crate::own::reason(&e));
                3
            }
        },
        None => emit(&out),
    }
}

fn emit(out: &[u8]) -> i32 {
    let mut stdout = io::stdout().lock();
    if stdout.write_all(out).and_then(|()| stdout.flush()).is_err() {
        return 3;
    }
    0
}

/// `-s`: the bytes skipped and what is left. A file seeks (past its end is fine, before its
/// start is not); standard input only reads forward.
fn seek(input: &[u8], seek: Option<(bool, bool, i64)>, file: bool) -> Option<(i64, &[u8])> {
    let Some((_relative, negative, n)) = seek else {
        return Some((0, input));
    };
    let len = input.len() as i64;
    if negative {
        if !file || n > len {
            return None;
        }
        let at = len - n;
        return Some((at, &input[at as usize..]));
    }
    if n > len {
        if !file {
            return None;
        }
        return Some((n, &[]));
    }
    Some((n, &input[n as usize..]))
}

/// The dump of `data` (which starts `skipped` bytes into the input).
fn dump(
    o: &Options,
    data: &[u8],
    skipped: i64,
    varname: Option<&str>,
) -> Result<Vec<u8>, (String, i32)> {
    let digits: &[u8; 16] = if o.upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut cols = match (o.cols, o.kind) {
        (Some(c), Kind::Plain) => c,
        (Some(c), _) if c != 0 => c,
        (_, Kind::Plain) => 30,
        (_, Kind::Include) => 12,
        (_, Kind::Bits) => 6,
        _ => 16,
    };
    let mut group = o.group.unwrap_or(match o.kind {
        Kind::Bits => 1,
        Kind::Normal => 2,
        Kind::Little => 4,
        _ => 0,
    });
    if (o.kind == Kind::Plain && cols < 0)
        || (o.kind != Kind::Plain && cols < 1)
        || (matches!(o.kind, Kind::Normal | Kind::Bits | Kind::Little) && cols > COLS)
    {
        return Err((format!("invalid number of columns (max. {COLS})."), 1));
    }
    if group < 1 || group > cols {
        group = cols;
    } else if o.kind == Kind::Little && group & (group - 1) != 0 {
        return Err((
            "number of octets per group must be a power of 2 with -e.".into(),
            1,
        ));
    }
    let mut out = Vec::new();
    match o.kind {
        Kind::Plain => {
            let mut p = cols;
            for &e in data {
                out.push(digits[usize::from(e >> 4)]);
                out.push(digits[usize::from(e & 15)]);
                p -= 1;
                if p == 0 {
                    out.push(b'\n');
                    p = cols;
                }
            }
            // With `-c 0` everything is one line, ended even when empty.
            if p < cols || cols == 0 {
                out.push(b'\n');
            }
        }
        Kind::Include => {
            let name = varname.map(|n| {
                let mut s = String::new();
                if n.starts_with(|c: char| c.is_ascii_digit()) {
                    s.push_str("__");
                }
                for c in n.bytes() {
                    let c = if c.is_ascii_alphanumeric() {
                        c as char
                    } else {
                        '_'
                    };
                    s.push(if o.capitalize {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
                s
            });
            if let Some(name) = &name {
                out.extend_from_slice(format!("unsigned char {name}[] = {{\n").as_bytes());
            }
            for (p, &c) in data.iter().enumerate() {
                let lead = if p as i64 % cols != 0 {
                    ", "
                } else if p == 0 {
                    "  "
                } else {
                    ",\n  "
                };
                let byte = if o.upper {
                    format!("{lead}0X{c:02X}")
                } else {
                    format!("{lead}0x{c:02x}")
                };
                out.extend_from_slice(byte.as_bytes());
            }
            if !data.is_empty() {
                out.push(b'\n');
            }
            if let Some(name) = &name {
                out.extend_from_slice(
                    format!(
                        "}};\nunsigned int {name}_{} = {};\n",
                        if o.capitalize { "LEN" } else { "len" },
                        data.len()
                    )
                    .as_bytes(),
                );
            }
        }
        Kind::Normal | Kind::Bits | Kind::Little => {
            cols = cols.max(1);
            let grplen = if o.kind == Kind::Bits {
                8 * group + 1
            } else {
                2 * group + 1
            };
            let mut lines = Lines::default();
            let mut line: Vec<u8> = Vec::new();
            let mut addrlen = 0i64;
            let mut p = 0i64;
            let mut c = 0i64;
            let mut nonzero = 0;
            for (n, &e) in data.iter().enumerate() {
                if p == 0 {
                    let at = n as i64 + skipped + o.display_offset;
                    let address = if o.decimal {
                        format!("{at:08}:")
                    } else {
                        format!("{at:08x}:")
                    };
                    addrlen = address.len() as i64;
                    line.clear();
                    line.extend_from_slice(address.as_bytes());
                }
                let x = if o.kind == Kind::Little {
                    p ^ (group - 1)
                } else {
                    p
                };
                c = addrlen + 1 + (grplen * x) / group;
                let put = |line: &mut Vec<u8>, at: i64, b: u8| {
                    let at = at as usize;
                    if line.len() <= at {
                        line.resize(at + 1, b' ');
                    }
                    line[at] = b;
                };
                if o.kind == Kind::Bits {
                    for i in (0..8).rev() {
                        put(&mut line, c, if e & (1 << i) != 0 { b'1' } else { b'0' });
                        c += 1;
                    }
                } else {
                    put(&mut line, c, digits[usize::from(e >> 4)]);
                    put(&mut line, c + 1, digits[usize::from(e & 15)]);
                }
                if e != 0 {
                    nonzero += 1;
                }
                c = addrlen + 3 + (grplen * cols - 1) / group + p;
                put(&mut line, c, if (32..127).contains(&e) { e } else { b'.' });
                c += 1;
                p += 1;
                if p == cols {
                    line.truncate(c as usize);
                    line.push(b'\n');
                    lines.line(&mut out, &line, if o.autoskip { nonzero } else { 1 });
                    nonzero = 0;
                    p = 0;
                }
            }
            if p != 0 {
                line.truncate(c as usize);
                line.push(b'\n');
                lines.line(&mut out, &line, 1);
            } else if o.autoskip {
                lines.line(&mut out, &line, -1);
            }
        }
    }
    Ok(out)
}

/// xxd's `xxdline`: with `-a`, a run of lines of zeros shows as its first line, a `*` and
/// its last line.
#[derive(Default)]
struct Lines {
    held: Vec<u8>,
    zero_seen: i32,
}

impl Lines {
    fn line(&mut self, out: &mut Vec<u8>, l: &[u8], nz: i32) {
        if nz == 0 && self.zero_seen == 1 {
            self.held = l.to_vec();
        }
        let seen = self.zero_seen;
        if nz == 0 {
            self.zero_seen += 1;
        }
        if nz != 0 || seen == 0 {
            if nz != 0 {
                if nz < 0 {
                    self.zero_seen -= 1;
                }
                if self.zero_seen == 2 {
                    out.extend_from_slice(&self.held);
                }
                if self.zero_seen > 2 {
                    out.extend_from_slice(b"*\n");
                }
            }
            if nz >= 0 || self.zero_seen > 0 {
                out.extend_from_slice(l);
            }
            if nz != 0 {
                self.zero_seen = 0;
            }
        }
    }
}

fn hex_digit(c: u8) -> i32 {
    match c {
        b'0'..=b'9' => i32::from(c - b'0'),
        b'a'..=b'f' => i32::from(c - b'a' + 10),
        b'A'..=b'F' => i32::from(c - b'A' + 10),
        _ => -1,
    }
}

/// xxd's `huntype`: the bytes a hex dump stands for, as runs written at their offsets.
fn revert(
    input: &[u8],
    cols: i64,
    plain: bool,
    base: i64,
) -> (Vec<(i64, Vec<u8>)>, Option<&'static str>) {
    let mut writes: Vec<(i64, Vec<u8>)> = Vec::new();
    let (mut n1, mut n2): (i32, i32) = (-1, 0);
    let mut n3: i32;
    let mut ignore = true;
    let mut p = cols;
    let (mut have, mut want): (i64, i64) = (0, 0);
    let mut i = 0;
    while i < input.len() {
        let mut c = input[i];
        i += 1;
        if c == b'\r' {
            continue;
        }
        if plain && matches!(c, b' ' | b'\n' | b'\t') {
            continue;
        }
        n3 = n2;
        n2 = n1;
        n1 = hex_digit(c);
        if n1 == -1 && ignore {
            continue;
        }
        ignore = false;
        if !plain && p >= cols {
            if n1 < 0 {
                p = 0;
                continue;
            }
            want = (want << 4) | i64::from(n1);
            continue;
        }
        if base + want != have {
            if base + want < have {
                return (writes, Some("Sorry, cannot seek backwards."));
            }
            have = base + want;
        }
        if n2 >= 0 && n1 >= 0 {
            let byte = ((n2 << 4) | n1) as u8;
            match writes.last_mut() {
                Some((at, run)) if *at + run.len() as i64 == have => run.push(byte),
                _ => writes.push((have, vec![byte])),
            }
            have += 1;
            want += 1;
            n1 = -1;
            if !plain {
                p += 1;
                if p >= cols {
                    // The rest of the line is the text column.
                    while i < input.len() && input[i] != b'\n' {
                        i += 1;
                    }
                    if i < input.len() {
                        i += 1;
                        c = b'\n';
                    }
                }
            }
        } else if n1 < 0 && n2 < 0 && n3 < 0 {
            // Garbage: skip the line.
            if !plain {
                want = 0;
            }
            while i < input.len() && input[i] != b'\n' {
                i += 1;
            }
            if i < input.len() {
                c = b'\n';
                i += 1;
            }
            ignore = true;
        }
        if c == b'\n' {
            if !plain {
                want = 0;
            }
            p = cols;
            ignore = true;
        }
    }
    (writes, None)
}

/// `xxd -r DUMP FILE` patches FILE in place: bytes the dump does not name stay.
fn patch(path: &str, writes: &[(i64, Vec<u8>)]) -> i32 {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    let result = file.and_then(|mut f| {
        for (at, bytes) in writes {
            f.seek(SeekFrom::Start(*at as u64))?;
            f.write_all(bytes)?;
        }
        Ok(())
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("xxd: {path}: {}", crate::own::reason(&e));
            3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], data: &[u8]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = parse(&args).unwrap_or_else(|(m, _)| panic!("{m}"));
        let (skipped, data) = seek(data, o.seek, true).unwrap();
        let data = match o.length {
            Some(n) if (n as usize) < data.len() => &data[..n as usize],
            _ => data,
        };
        let name = o.name.clone().or_else(|| o.files.first().cloned());
        String::from_utf8(dump(&o, data, skipped, name.as_deref()).unwrap()).unwrap()
    }

    const DATA: &[u8] = b"1\n2\nhello world, this is a longer line!\x00\xff";

    /// Each expected text is what /usr/bin/xxd (2022-01-14) printed for DATA.
    #[test]
    fn dumps_as_vims_xxd() {
        assert_eq!(
            run(&[], DATA),
            "00000000: 310a 320a 6865 6c6c 6f20 776f 726c 642c  1.2.hello world,\n\
             00000010: 2074 6869 7320 6973 2061 206c 6f6e 6765   this is a longe\n\
             00000020: 7220 6c69 6e65 2100 ff                   r line!..\n"
        );
        assert_eq!(
            run(&["-c", "8", "-g", "1"], DATA).lines().last().unwrap(),
            "00000028: ff                       ."
        );
        assert_eq!(
            run(&["-u", "-g", "4"], DATA).lines().last().unwrap(),
            "00000020: 72206C69 6E652100 FF                 r line!.."
        );
        assert_eq!(
            run(&["-e"], DATA).lines().last().unwrap(),
            "00000020: 696c2072 0021656e       ff           r line!.."
        );
        assert_eq!(
            run(&["-b", "-l", "10"], DATA),
            "00000000: 00110001 00001010 00110010 00001010 01101000 01100101  1.2.he\n\
             00000006: 01101100 01101100 01101111 00100000                    llo \n"
        );
        assert_eq!(
            run(&["-s", "5", "-l", "10"], DATA),
            "00000005: 656c 6c6f 2077 6f72 6c64                 ello world\n"
        );
        assert_eq!(
            run(&["-p"], DATA),
            "310a320a68656c6c6f20776f726c642c20746869732069732061206c6f6e\n676572206c696e652100ff\n"
        );
        assert_eq!(
            run(&["-i", "x.bin"], b"abc"),
            "unsigned char x_bin[] = {\n  0x61, 0x62, 0x63\n};\nunsigned int x_bin_len = 3;\n"
        );
        assert_eq!(
            run(&["-i", "-u", "-C", "-n", "9v"], b"a")
                .lines()
                .next()
                .unwrap(),
            "unsigned char __9V[] = {"
        );
        assert_eq!(
            run(&["-a"], &[0; 64]),
            "00000000: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n*\n\
             00000030: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n"
        );
    }

    #[test]
    fn reverts_its_own_dumps() {
        let normal = run(&[], DATA);
        let back = revert(normal.as_bytes(), 16, false, 0).0;
        assert_eq!(back, vec![(0, DATA.to_vec())]);
        let plain = run(&["-p"], DATA);
        assert_eq!(
            revert(plain.as_bytes(), 30, true, 0).0,
            vec![(0, DATA.to_vec())]
        );
        // A gap in the addresses is a seek (zeros on a pipe).
        let gappy = revert(b"00000010: 4142  AB\n", 16, false, 0).0;
        assert_eq!(gappy, vec![(16, b"AB".to_vec())]);
    }

    #[test]
    fn refuses_what_xxd_refuses() {
        let o = parse(&["-c".into(), "300".into()]).ok().unwrap();
        assert!(dump(&o, b"x", 0, None).is_err());
        assert!(parse(&["-E".into()]).is_err());
        assert!(parse(&["-Q".into()]).is_err());
        assert_eq!(strtol("0x10"), 16);
        assert_eq!(strtol("010"), 8);
    }
}
