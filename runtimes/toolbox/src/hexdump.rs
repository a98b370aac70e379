//! `hexdump` and `hd` (`hexdump -C`) as util-linux 2.38 prints them: the default 16-bit
//! words, `-C` canonical hex and text, the one-format options `-b -c -d -o -x`, `-n`, `-s`
//! (with util-linux's size suffixes), `-v`, and `*` for a run of repeated lines. Files are one
//! stream, as util-linux reads them. `-e`/`-f` format strings, and several formats at once,
//! are refused by name.

use std::fs;
use std::io::{self, Read, Write};

use crate::getopt::{Long, words};

/// One display format of the one-format options: bytes per unit, units per line, and how a
/// unit shows (every cell has the same width, so a missing one is that many spaces).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// No option: `%04x` words, one space before each.
    Words,
    /// `-x`: `%04x` words in 8 columns.
    Hex,
    /// `-d`: `%05u` words in 8 columns.
    Decimal,
    /// `-o`: `%06o` words in 8 columns.
    Octal,
    /// `-b`: `%03o` bytes, one space before each.
    Bytes,
    /// `-c`: characters (C escapes, octal for the rest) in 4 columns.
    Chars,
    /// `-C`: canonical: hex bytes and `|text|`.
    Canonical,
}

impl Format {
    fn unit(self) -> usize {
        match self {
            Format::Bytes | Format::Chars | Format::Canonical => 1,
            _ => 2,
        }
    }

    fn cell(self, v: u16) -> String {
        match self {
            Format::Words => format!(" {v:04x}"),
            Format::Hex => format!("    {v:04x}"),
            Format::Decimal => format!("   {v:05}"),
            Format::Octal => format!("  {v:06o}"),
            Format::Bytes => format!(" {v:03o}"),
            Format::Chars => {
                let b = v as u8;
                let shown = match b {
                    0 => "\\0".to_owned(),
                    7 => "\\a".to_owned(),
                    8 => "\\b".to_owned(),
                    9 => "\\t".to_owned(),
                    10 => "\\n".to_owned(),
                    11 => "\\v".to_owned(),
                    12 => "\\f".to_owned(),
                    13 => "\\r".to_owned(),
                    32..=126 => (b as char).to_string(),
                    _ => format!("{b:03o}"),
                };
                format!("{shown:>4}")
            }
            Format::Canonical => format!("{v:02x}"),
        }
    }

    fn width(self) -> usize {
        self.cell(0).len()
    }
}

/// util-linux's sizes: a number (`0x` hex, `0` octal) with an optional `K`, `M`, `G`, `T`
/// (powers of 1024, also `KiB`...) or `KB`, `MB`... (powers of 1000).
fn size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits_end = if t.starts_with("0x") || t.starts_with("0X") {
        2 + t[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(t.len() - 2)
    } else {
        t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len())
    };
    let (number, suffix) = t.split_at(digits_end);
    let n = if let Some(hex) = number
        .strip_prefix("0x")
        .or_else(|| number.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if number.len() > 1 && number.starts_with('0') {
        u64::from_str_radix(number, 8).ok()?
    } else {
        number.parse().ok()?
    };
    let power = |letter: char| {
        "KMGTPE"
            .find(letter.to_ascii_uppercase())
            .map(|i| i as u32 + 1)
    };
    let mult: u64 = match suffix.chars().collect::<Vec<_>>().as_slice() {
        [] => 1,
        [l] | [l, 'i', 'B'] => 1024u64.checked_pow(power(*l)?)?,
        [l, 'B'] => 1000u64.checked_pow(power(*l)?)?,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The dump of `data`, which starts `start` bytes into the input.
fn dump(format: Format, data: &[u8], start: u64, all: bool) -> String {
    let mut out = String::new();
    let mut previous: Option<&[u8]> = None;
    let mut starred = false;
    for (i, block) in data.chunks(16).enumerate() {
        let at = start + 16 * i as u64;
        if !all && block.len() == 16 && previous == Some(block) {
            if !starred {
                out.push_str("*\n");
                starred = true;
            }
            continue;
        }
        starred = false;
        previous = Some(block);
        if format == Format::Canonical {
            out.push_str(&format!("{at:08x}  "));
            for j in 0..16 {
                if j > 0 {
                    out.push_str(if j == 8 { "  " } else { " " });
                }
                match block.get(j) {
                    Some(&b) => out.push_str(&format!("{b:02x}")),
                    None => out.push_str("  "),
                }
            }
            out.push_str("  |");
            out.extend(block.iter().map(|&b| {
                if (32..127).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            }));
            out.push_str("|\n");
            continue;
        }
        out.push_str(&format!("{at:07x}"));
        let unit = format.unit();
        for j in 0..16 / unit {
            let bytes = block.get(j * unit..).unwrap_or_default();
            if bytes.is_empty() {
                out.push_str(&" ".repeat(format.width()));
            } else if unit == 2 {
                let high = bytes.get(1).copied().unwrap_or(0);
                out.push_str(&format.cell(u16::from_le_bytes([bytes[0], high])));
            } else {
                out.push_str(&format.cell(u16::from(bytes[0])));
            }
        }
        out.push('\n');
    }
    out
}

/// `hexdump [-bcCdovx] [-n LENGTH] [-s OFFSET] [FILE]...`; `hd` is `hexdump -C`.
pub fn main(name: &str, args: super::Args) -> i32 {
    let args = words(args);
    let long: &[Long] = &[
        ("one-byte-octal", 'b', false),
        ("one-byte-char", 'c', false),
        ("canonical", 'C', false),
        ("two-bytes-decimal", 'd', false),
        ("two-bytes-octal", 'o', false),
        ("two-bytes-hex", 'x', false),
        ("length", 'n', true),
        ("skip", 's', true),
        ("no-squeezing", 'v', false),
        ("format", 'e', true),
        ("format-file", 'f', true),
        ("color", 'L', false),
        ("help", 'h', false),
        ("version", 'V', false),
    ];
    let o = match crate::getopt::parse(&args, "bcCdoxn:s:ve:f:LhV", long) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{name}: {e}\nTry '{name} --help' for more information.");
            return 1;
        }
    };
    if o.has('h') {
        println!(
            "Usage:\n {name} [options] <file>...\n\nDisplay file contents in hexadecimal, \
             decimal, octal, or ascii.\n\nOptions:\n -b, --one-byte-octal      one-byte octal \
             display\n -c, --one-byte-char       one-byte character display\n -C, --canonical    \
                    canonical hex+ASCII display\n -d, --two-bytes-decimal   two-byte decimal \
             display\n -o, --two-bytes-octal     two-byte octal display\n -x, --two-bytes-hex    \
               two-byte hexadecimal display\n -n, --length <length>     interpret only length \
             bytes of input\n -s, --skip <offset>       skip offset bytes from the beginning\n \
             -v, --no-squeezing        output identical lines\n(-e and -f format strings are not \
             supported in the sandbox.)"
        );
        return 0;
    }
    if o.has('V') {
        println!("{name} from util-linux 2.38.1");
        return 0;
    }
    for (letter, what) in [('e', "-e (format strings)"), ('f', "-f (format files)")] {
        if o.has(letter) {
            eprintln!("{name}: {what} is not supported in the sandbox");
            return 1;
        }
    }
    if o.has('L') {
        eprintln!("{name}: -L (colour) is not supported: the output is never a terminal here");
        return 1;
    }
    let mut formats: Vec<Format> = Vec::new();
    if name == "hd" {
        formats.push(Format::Canonical);
    }
    for (letter, _) in &o.opts {
        let f = match letter {
            'b' => Format::Bytes,
            'c' => Format::Chars,
            'C' => Format::Canonical,
            'd' => Format::Decimal,
            'o' => Format::Octal,
            'x' => Format::Hex,
            _ => continue,
        };
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    let format = match formats.as_slice() {
        [] => Format::Words,
        [f] => *f,
        _ => {
            eprintln!("{name}: several display formats at once are not supported in the sandbox");
            return 1;
        }
    };
    let number = |letter: char, what: &str| -> Result<Option<u64>, ()> {
        match o.value(letter) {
            None => Ok(None),
            Some(v) => size(v).map(Some).ok_or_else(|| {
                eprintln!("{name}: failed to parse {what}: '{v}': Invalid argument");
            }),
        }
    };
    let Ok(length) = number('n', "length") else {
        return 1;
    };
    let Ok(skip) = number('s', "offset") else {
        return 1;
    };
    let mut input = Vec::new();
    let mut failed = false;
    if o.operands.is_empty() {
        if skip.is_some_and(|s| s > 0) {
            // util-linux seeks standard input, which a pipe cannot.
            eprintln!("{name}: stdin: Illegal seek");
            return 1;
        }
        if let Err(e) = io::stdin().read_to_end(&mut input) {
            eprintln!("{name}: stdin: {}", crate::own::reason(&e));
            return 1;
        }
    }
    for path in &o.operands {
        // Files are opened as the stream reaches them: one past the length is never opened.
        if let Some(n) = length
            && input.len() as u64 >= skip.unwrap_or(0).saturating_add(n)
        {
            break;
        }
        match fs::read(path) {
            Ok(bytes) => input.extend_from_slice(&bytes),
            Err(e) => {
                eprintln!("{name}: {path}: {}", crate::own::reason(&e));
                failed = true;
            }
        }
    }
    let skip = skip.unwrap_or(0).min(input.len() as u64);
    let mut data = &input[skip as usize..];
    if let Some(n) = length
        && (n as usize) < data.len()
    {
        data = &data[..n as usize];
    }
    let mut out = dump(format, data, skip, o.has('v'));
    if !input.is_empty() && length != Some(0) {
        let end = skip + data.len() as u64;
        out.push_str(&if format == Format::Canonical {
            format!("{end:08x}\n")
        } else {
            format!("{end:07x}\n")
        });
    }
    let mut stdout = io::stdout().lock();
    if stdout.write_all(out.as_bytes()).is_err() {
        return 1;
    }
    i32::from(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: &[u8] = b"1\n2\nhello world, this is a longer line!\x00\xff";

    /// The expected texts are what util-linux 2.38.1's hexdump printed.
    #[test]
    fn dumps_as_util_linux() {
        assert_eq!(
            dump(Format::Canonical, DATA, 0, false),
            "00000000  31 0a 32 0a 68 65 6c 6c  6f 20 77 6f 72 6c 64 2c  |1.2.hello world,|\n\
             00000010  20 74 68 69 73 20 69 73  20 61 20 6c 6f 6e 67 65  | this is a longe|\n\
             00000020  72 20 6c 69 6e 65 21 00  ff                       |r line!..|\n"
        );
        assert_eq!(
            dump(Format::Words, &DATA[32..], 32, false),
            "0000020 2072 696c 656e 0021 00ff               \n"
        );
        assert_eq!(
            dump(Format::Chars, b"\x01\x80\x7f\t\r", 0, false),
            "0000000 001 200 177  \\t  \\r                                            \n"
        );
        assert_eq!(
            dump(Format::Decimal, &DATA[32..], 0, false),
            "0000000   08306   26988   25966   00033   00255                        \n"
        );
        assert_eq!(
            dump(Format::Canonical, &[0; 40], 0, false),
            "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n\
             00000020  00 00 00 00 00 00 00 00                           |........|\n"
        );
        assert_eq!(dump(Format::Words, &[0; 32], 0, true).lines().count(), 2);
    }

    #[test]
    fn sizes_as_util_linux_reads_them() {
        assert_eq!(size("0x10"), Some(16));
        assert_eq!(size("1K"), Some(1024));
        assert_eq!(size("1KiB"), Some(1024));
        assert_eq!(size("1KB"), Some(1000));
        assert_eq!(size("010"), Some(8));
        assert_eq!(size("abc"), None);
    }
}
