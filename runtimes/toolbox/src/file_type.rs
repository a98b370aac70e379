//! `file` as libmagic 5.44's `file` prints it, for what a sandbox holds: empty files,
//! directories and symbolic links; text in ASCII, UTF-8 (with or without BOM), UTF-16 with a
//! BOM, ISO-8859 and non-ISO extended ASCII, with libmagic's notes on line terminators, long
//! lines and escapes; JSON, CSV, HTML, XML, SVG, PEM certificates, `#!` scripts, and its
//! guesses at Python and C, C++, Java and Objective-C sources; PNG, JPEG (JFIF), GIF, PDF, Zip
//! (and Office 2007+ documents), gzip, tar, SQLite 3 and WebAssembly files; "data" for the
//! rest. `-i`/`--mime`, `--mime-type` and `--mime-encoding` say the same as MIME types.
//! libmagic's thousands of other formats (ELF, Exif JPEG, Perl modules, makefiles...) are not
//! here: such a file is called by its encoding (or "data"). The options that change the search
//! itself (`-z`, `-s`, `-k`, `-m`, `-F`...) are refused by name.

use crate::getopt::{Long, parse_or_say, words};
use crate::own::{emit, reason};
use std::io::Read;

const LONG: &[Long] = &[
    ("brief", 'b', false),
    ("mime", 'i', false),
    ("mime-type", 'T', false),
    ("mime-encoding", 'M', false),
    ("dereference", 'L', false),
    ("no-dereference", 'h', false),
    ("no-pad", 'N', false),
    ("help", 'H', false),
    ("version", 'v', false),
    // libmagic's, refused below.
    ("apple", 'A', false),
    ("extension", 'X', false),
    ("exclude", 'e', true),
    ("exclude-quiet", 'Q', true),
    ("files-from", 'f', true),
    ("separator", 'F', true),
    ("keep-going", 'k', false),
    ("list", 'l', false),
    ("magic-file", 'm', true),
    ("no-buffer", 'n', false),
    ("no-sandbox", 'S', false),
    ("parameter", 'P', true),
    ("preserve-date", 'p', false),
    ("raw", 'r', false),
    ("special-files", 's', false),
    ("uncompress", 'z', false),
    ("uncompress-noreport", 'Z', false),
    ("print0", '0', false),
    ("compile", 'C', false),
    ("checking-printout", 'c', false),
    ("debug", 'd', false),
    ("extended-errors", 'E', false),
];

const USAGE: &str = "Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]
            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]
            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]
            <file> ...
       file -C [-m <magicfiles>]
       file [--help]
";

/// How much of a file libmagic reads, and how much of that it checks for text.
const BYTES_MAX: u64 = 7 * 1024 * 1024;
const ENCODING_MAX: usize = 64 * 1024;

/// What is printed for each file.
#[derive(Clone, Copy, PartialEq)]
enum Show {
    Description,
    Mime,
    MimeType,
    MimeEncoding,
}

/// What `file` finds: its description, MIME type and charset (none: no `; charset=`).
struct Found {
    desc: String,
    mime: &'static str,
    charset: Option<&'static str>,
}

impl Found {
    fn new(desc: impl Into<String>, mime: &'static str, charset: Option<&'static str>) -> Found {
        Found {
            desc: desc.into(),
            mime,
            charset,
        }
    }
}

pub fn main(args: super::Args) -> i32 {
    let args = words(args);
    let Some(o) = parse_or_say("file", &args, "biTMLhNHvAXe:Q:f:F:klm:nSP:prszZ0CcdE", LONG) else {
        return 1;
    };
    let refused = [
        ('A', "--apple"),
        ('X', "--extension"),
        ('e', "-e (--exclude)"),
        ('Q', "--exclude-quiet"),
        ('f', "-f (--files-from)"),
        ('F', "-F (--separator)"),
        ('k', "-k (--keep-going)"),
        ('l', "-l (--list)"),
        ('m', "-m (--magic-file)"),
        ('n', "-n (--no-buffer)"),
        ('S', "-S (--no-sandbox)"),
        ('P', "-P (--parameter)"),
        ('p', "-p (--preserve-date)"),
        ('r', "-r (--raw)"),
        ('s', "-s (--special-files)"),
        ('z', "-z (--uncompress)"),
        ('Z', "-Z (--uncompress-noreport)"),
        ('0', "-0 (--print0)"),
        ('C', "-C (--compile)"),
        ('c', "-c (--checking-printout)"),
        ('d', "-d (--debug)"),
        ('E', "-E (--extended-errors)"),
    ];
    if let Some((_, name)) = refused.iter().find(|(c, _)| o.has(*c)) {
        eprintln!(
            "file: option {name} is not supported here (this file knows libmagic's common formats only)"
        );
        return 1;
    }
    if o.has('H') {
        print!(
            "Usage: file [OPTION...] [FILE...]\nDetermine type of FILEs.\n\n  -b, --brief                do not prepend filenames to output lines\n  -i, --mime                 output MIME type strings\n      --mime-type            output the MIME type\n      --mime-encoding        output the MIME encoding\n  -L, --dereference          follow symlinks\n  -h, --no-dereference       don't follow symlinks (default)\n  -N, --no-pad               do not pad output\n  -v, --version              output version information and exit\n"
        );
        return 0;
    }
    if o.has('v') {
        print!("file-5.44\nmagic file from /etc/magic:/usr/share/misc/magic\n");
        return 0;
    }
    if o.operands.is_empty() {
        eprint!("{USAGE}");
        return 1;
    }
    // The last of -i, --mime-type, --mime-encoding wins; -L and -h likewise.
    let mut show = Show::Description;
    let mut follow = false;
    for (c, _) in &o.opts {
        match c {
            'i' => show = Show::Mime,
            'T' => show = Show::MimeType,
            'M' => show = Show::MimeEncoding,
            'L' => follow = true,
            'h' => follow = false,
            _ => {}
        }
    }
    let names: Vec<String> = (o.operands.iter())
        .map(|f| {
            if f == "-" {
                "/dev/stdin".into()
            } else {
                f.clone()
            }
        })
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (file, name) in o.operands.iter().zip(&names) {
        if !o.has('b') {
            out.push_str(name);
            out.push(':');
            if !o.has('N') {
                out.extend(std::iter::repeat_n(' ', width - name.chars().count()));
            }
            out.push(' ');
        }
        let line = match examine(file, follow) {
            Err(e) => format!("cannot open `{file}' ({})", reason(&e)),
            Ok(found) => match show {
                Show::Description => found.desc,
                Show::MimeType => found.mime.to_owned(),
                // (What libmagic prints for a broken link.)
                Show::MimeEncoding => found.charset.unwrap_or("ERROR: (null)").to_owned(),
                Show::Mime => match found.charset {
                    Some(c) => format!("{}; charset={c}", found.mime),
                    None => found.mime.to_owned(),
                },
            },
        };
        out.push_str(&line);
        out.push('\n');
    }
    if emit(out.as_bytes()) { 0 } else { 1 }
}

fn examine(file: &str, follow: bool) -> std::io::Result<Found> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin().take(BYTES_MAX).read_to_end(&mut bytes)?;
        return Ok(content(&bytes));
    }
    let meta = if follow {
        std::fs::metadata(file)?
    } else {
        std::fs::symlink_metadata(file)?
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(file)?;
        let target = target.to_string_lossy();
        return Ok(if std::fs::metadata(file).is_ok() {
            Found::new(
                format!("symbolic link to {target}"),
                "inode/symlink",
                Some("binary"),
            )
        } else {
            Found::new(
                format!("broken symbolic link to {target}"),
                "inode/symlink",
                None,
            )
        });
    }
    if meta.is_dir() {
        return Ok(Found::new("directory", "inode/directory", Some("binary")));
    }
    std::fs::File::open(file)?
        .take(BYTES_MAX)
        .read_to_end(&mut bytes)?;
    Ok(content(&bytes))
}

/// What the bytes are, in libmagic's order: empty, tar, JSON, CSV, the binary formats, the
/// text formats, text, data.
fn content(b: &[u8]) -> Found {
    if b.is_empty() {
        return Found::new("empty", "inode/x-empty", Some("binary"));
    }
    let enc = encoding(&b[..b.len().min(ENCODING_MAX)]);
    let charset = enc.as_ref().map_or("binary", |e| e.mime);
    if let Some(kind) = tar(b) {
        return Found::new(kind, "application/x-tar", Some(charset));
    }
    match json(b) {
        1 => return Found::new("JSON text data", "application/json", Some(charset)),
        2 => {
            return Found::new(
                "New Line Delimited JSON text data",
                "application/x-ndjason",
                Some(charset),
            );
        }
        _ => {}
    }
    if enc.is_some() && csv(b) {
        return Found::new("CSV text", "text/csv", Some(charset));
    }
    if let Some((desc, mime)) = binary_magic(b) {
        return Found::new(desc, mime, Some(charset));
    }
    let Some(enc) = enc else {
        return Found::new("data", "application/octet-stream", Some("binary"));
    };
    let notes = text_notes(&enc.text);
    // The text formats are looked for after a UTF-8 byte-order mark.
    let body = b.strip_prefix(b"\xef\xbb\xbf").unwrap_or(b);
    match text_magic(body) {
        Some(Magic::Whole(desc, mime)) => Found::new(desc, mime, Some(charset)),
        Some(Magic::Text(desc, mime)) => {
            // libmagic puts the encoding where the description says "text" (after it when
            // it does not), and its notes on the lines last.
            let desc = match desc.find(" text") {
                Some(at) => format!("{}, {} text{}", &desc[..at], enc.code, &desc[at + 5..]),
                None => format!("{desc}, {} text", enc.code),
            };
            Found::new(desc + &notes, mime, Some(charset))
        }
        None => Found::new(
            format!("{} text{notes}", enc.code),
            "text/plain",
            Some(charset),
        ),
    }
}

/// libmagic's classes of bytes: never in text, ASCII text, ISO-8859 text, other 8-bit text.
#[derive(PartialEq, Clone, Copy)]
enum Class {
    F,
    T,
    I,
    X,
}

fn class(b: u8) -> Class {
    match b {
        7..=13 | 0x1b | 0x20..=0x7e => Class::T,
        // NEL counts as text (a line terminator, in the notes).
        0x85 => Class::T,
        0x80..=0x9f => Class::X,
        0xa0..=0xff => Class::I,
        _ => Class::F,
    }
}

struct Encoding {
    code: &'static str,
    mime: &'static str,
    /// The characters, for the notes on lines.
    text: Vec<u32>,
}

/// The text encoding of the bytes, as libmagic's checks find it in turn; none for binary.
fn encoding(b: &[u8]) -> Option<Encoding> {
    let enc = |code, mime, text| Some(Encoding { code, mime, text });
    if b.iter().all(|&c| class(c) == Class::T) {
        return enc(
            "ASCII",
            "us-ascii",
            b.iter().map(|&c| u32::from(c)).collect(),
        );
    }
    if let Some(rest) = b.strip_prefix(b"\xef\xbb\xbf")
        && let Some((text, _)) = utf8(rest)
    {
        return enc("Unicode text, UTF-8 (with BOM)", "utf-8", text);
    }
    if let Some((text, true)) = utf8(b) {
        return enc("Unicode text, UTF-8", "utf-8", text);
    }
    if let Some((text, big)) = utf16(b) {
        return if big {
            enc("Unicode text, UTF-16, big-endian", "utf-16be", text)
        } else {
            enc("Unicode text, UTF-16, little-endian", "utf-16le", text)
        };
    }
    let bytes = || b.iter().map(|&c| u32::from(c)).collect();
    if b.iter().all(|&c| matches!(class(c), Class::T | Class::I)) {
        return enc("ISO-8859", "iso-8859-1", bytes());
    }
    if b.iter().all(|&c| class(c) != Class::F) {
        return enc("Non-ISO extended-ASCII", "unknown-8bit", bytes());
    }
    None
}

/// UTF-8 as libmagic accepts it (any 2- to 6-byte sequence, a cut one at the end allowed; no
/// control characters): the characters, and whether any was not ASCII.
fn utf8(b: &[u8]) -> Option<(Vec<u32>, bool)> {
    let mut text = Vec::new();
    let mut wide = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if class(c) != Class::T {
                return None;
            }
            text.push(u32::from(c));
            i += 1;
            continue;
        }
        let (mut v, follow) = match c {
            _ if c & 0x40 == 0 => return None,
            _ if c & 0x20 == 0 => (u32::from(c & 0x1f), 1),
            _ if c & 0x10 == 0 => (u32::from(c & 0x0f), 2),
            _ if c & 0x08 == 0 => (u32::from(c & 0x07), 3),
            _ if c & 0x04 == 0 => (u32::from(c & 0x03), 4),
            _ if c & 0x02 == 0 => (u32::from(c & 0x01), 5),
            _ => return None,
        };
        for _ in 0..follow {
            i += 1;
            let Some(&n) = b.get(i) else {
                return Some((text, true));
            };
            if n & 0xc0 != 0x80 {
                return None;
            }
            v = (v << 6) | u32::from(n & 0x3f);
        }
        text.push(v);
        wide = true;
        i += 1;
    }
    Some((text, wide))
}

/// UTF-16 after a byte-order mark: the characters, and whether big-endian.
fn utf16(b: &[u8]) -> Option<(Vec<u32>, bool)> {
    let big = match b.get(..2)? {
        [0xfe, 0xff] => true,
        [0xff, 0xfe] => false,
        _ => return None,
    };
    let mut text = Vec::new();
    for pair in b[2..].chunks_exact(2) {
        let u = if big {
            u16::from_be_bytes([pair[0], pair[1]])
        } else {
            u16::from_le_bytes([pair[0], pair[1]])
        };
        if u < 128 && class(u as u8) != Class::T {
            return None;
        }
        text.push(u32::from(u));
    }
    Some((text, big))
}

/// libmagic's notes on text: lines over 300 characters, the line terminators unless only LF,
/// escapes and backspaces.
fn text_notes(text: &[u32]) -> String {
    let (mut crlf, mut cr, mut lf, mut nel) = (0, 0, 0, 0);
    let mut seen_cr = false;
    let mut line_start = 0usize;
    let mut longest = 0;
    let (mut escapes, mut backspaces) = (false, false);
    for (i, &c) in text.iter().enumerate() {
        if c == u32::from(b'\n') {
            if seen_cr {
                crlf += 1;
            } else {
                lf += 1;
            }
            line_start = i + 1;
        } else if seen_cr {
            cr += 1;
        }
        seen_cr = c == u32::from(b'\r');
        if seen_cr {
            line_start = i + 1;
        }
        if c == 0x85 {
            nel += 1;
            line_start = i + 1;
        }
        // libmagic's count: from the last terminator (itself included) to here.
        if i + 1 > line_start + 300 {
            longest = longest.max(i + 1 - line_start);
        }
        escapes |= c == 0x1b;
        backspaces |= c == 8;
    }
    let mut notes = String::new();
    if longest > 0 {
        notes.push_str(&format!(", with very long lines ({longest})"));
    }
    if crlf + cr + lf + nel == 0 {
        notes.push_str(", with no line terminators");
    } else if crlf + cr + nel > 0 {
        let kinds: Vec<&str> = [(crlf, "CRLF"), (cr, "CR"), (lf, "LF"), (nel, "NEL")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(_, k)| *k)
            .collect();
        notes.push_str(&format!(", with {} line terminators", kinds.join(", ")));
    }
    if escapes {
        notes.push_str(", with escape sequences");
    }
    if backspaces {
        notes.push_str(", with overstriking");
    }
    notes
}

/// A tar header's kind: its checksum must hold; then GNU's magic, POSIX's, or none (v7).
fn tar(b: &[u8]) -> Option<&'static str> {
    let h = b.get(..512)?;
    let field = &h[148..156];
    let text: Vec<u8> = field.iter().copied().skip_while(|&c| c == b' ').collect();
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    if digits.is_empty() || digits.iter().any(|&d| d > b'7') {
        return None;
    }
    if !matches!(text.get(digits.len()), Some(b' ' | 0) | None) {
        return None;
    }
    let stored = digits
        .iter()
        .fold(0u64, |n, &d| n * 8 + u64::from(d - b'0'));
    let sum: u64 = (h.iter().enumerate())
        .map(|(i, &c)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(c)
            }
        })
        .sum();
    if sum != stored {
        return None;
    }
    Some(if &h[257..265] == b"ustar  \0" {
        "POSIX tar archive (GNU)"
    } else if &h[257..263] == b"ustar\0" {
        "POSIX tar archive"
    } else {
        "tar archive"
    })
}

/// libmagic's JSON check: 1 for one JSON text holding an object or array, 2 for one followed
/// by another of the same kind (newline-delimited JSON), 0 otherwise.
fn json(b: &[u8]) -> u8 {
    let mut j = Json {
        b,
        at: 0,
        containers: 0,
    };
    j.space();
    let first = j.at;
    if !j.value(0) {
        return 0;
    }
    if j.at == b.len() {
        return u8::from(j.containers > 0);
    }
    if b.get(first) == b.get(j.at) && j.value(1) && j.containers > 0 {
        2
    } else {
        0
    }
}

struct Json<'a> {
    b: &'a [u8],
    at: usize,
    /// Objects and closed arrays seen.
    containers: usize,
}

impl Json<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    /// A value and the spaces after it.
    fn value(&mut self, depth: usize) -> bool {
        self.space();
        let Some(c) = self.peek() else {
            return false;
        };
        if depth > 500 {
            return false;
        }
        self.at += 1;
        let ok = match c {
            b'"' => self.string(),
            b'[' => self.array(depth),
            b'{' => self.object(depth),
            b't' => self.constant(b"rue"),
            b'f' => self.constant(b"alse"),
            b'n' => self.constant(b"ull"),
            _ => {
                self.at -= 1;
                self.number()
            }
        };
        if ok && c == b'{' {
            self.containers += 1;
        }
        self.space();
        ok
    }

    fn string(&mut self) -> bool {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                0 => return false,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return false;
                    };
                    self.at += 1;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            if self.b.len() - self.at < 4 {
                                self.at = self.b.len();
                                return false;
                            }
                            for _ in 0..4 {
                                let h = self.b[self.at];
                                self.at += 1;
                                if !h.is_ascii_hexdigit() {
                                    return false;
                                }
                            }
                        }
                        _ => return false,
                    }
                }
                b'"' => return true,
                _ => {}
            }
        }
        false
    }

    fn array(&mut self, depth: usize) -> bool {
        loop {
            self.space();
            match self.peek() {
                None => return false,
                Some(b']') => break,
                _ => {}
            }
            if !self.value(depth + 1) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => break,
                _ => return false,
            }
        }
        self.at += 1;
        self.containers += 1;
        true
    }

    fn object(&mut self, depth: usize) -> bool {
        loop {
            self.space();
            match self.peek() {
                None => return false,
                Some(b'}') => {
                    self.at += 1;
                    return true;
                }
                Some(b'"') => self.at += 1,
                _ => return false,
            }
            if !self.string() {
                return false;
            }
            self.space();
            if self.peek() != Some(b':') {
                return false;
            }
            self.at += 1;
            if !self.value(depth + 1) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// `true`, `false`, `null` after their first letter; a cut one at the end is accepted.
    fn constant(&mut self, rest: &[u8]) -> bool {
        for &want in rest {
            match self.peek() {
                None => return true,
                Some(c) if c == want => self.at += 1,
                Some(_) => return false,
            }
        }
        true
    }

    fn number(&mut self) -> bool {
        let digits = |j: &mut Self| {
            let start = j.at;
            while j.peek().is_some_and(|c| c.is_ascii_digit()) {
                j.at += 1;
            }
            j.at > start
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let mut got = digits(self);
        if self.peek().is_none() {
            return got;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
        }
        got |= digits(self);
        if self.peek().is_none() {
            return got;
        }
        if got && matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if self.peek().is_none() {
                return false;
            }
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            got = digits(self);
        }
        got
    }
}

/// libmagic 5.44's CSV check: the first ten lines (at least three) with the same number of
/// commas outside quotes, one at least.
fn csv(b: &[u8]) -> bool {
    let (mut fields, mut first, mut lines) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            b'"' => {
                // To the closing quote; a doubled quote is one inside.
                let mut quote = false;
                while i < b.len() {
                    let q = b[i];
                    i += 1;
                    if q != b'"' {
                        if quote {
                            i -= 1;
                            break;
                        }
                        continue;
                    }
                    quote = !quote;
                }
            }
            b',' => fields += 1,
            b'\n' => {
                lines += 1;
                if lines == 10 {
                    return first != 0 && first == fields;
                }
                if first == 0 {
                    if fields == 0 {
                        return false;
                    }
                    first = fields;
                } else if first != fields {
                    return false;
                }
                fields = 0;
            }
            _ => {}
        }
    }
    first != 0 && lines > 2
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The binary formats: a description and a MIME type.
fn binary_magic(b: &[u8]) -> Option<(String, &'static str)> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR") && b.len() >= 29 {
        let colour = match b[25] {
            0 => " grayscale,",
            2 => "/color RGB,",
            3 => " colormap,",
            4 => " gray+alpha,",
            6 => "/color RGBA,",
            _ => "",
        };
        let interlace = match b[28] {
            0 => " non-interlaced",
            1 => " interlaced",
            _ => "",
        };
        let desc = format!(
            "PNG image data, {} x {}, {}-bit{colour}{interlace}",
            be32(b, 16)? as i32,
            be32(b, 20)? as i32,
            b[24]
        );
        return Some((desc, "image/png"));
    }
    if (b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")) && b.len() >= 10 {
        let desc = format!(
            "GIF image data, version {}, {} x {}",
            String::from_utf8_lossy(&b[3..6]),
            le16(b, 6)?,
            le16(b, 8)?
        );
        return Some((desc, "image/gif"));
    }
    if b.starts_with(b"\xff\xd8") {
        return Some((jpeg(b), "image/jpeg"));
    }
    if b.starts_with(b"%PDF-") && b.len() >= 8 {
        let desc = format!("PDF document, version {}.{}", b[5] as char, b[7] as char);
        return Some((desc, "application/pdf"));
    }
    if b.starts_with(b"\x1f\x8b") && b.len() >= 12 {
        return Some((gzip(b)?, "application/gzip"));
    }
    if b.starts_with(b"PK\x05\x06") {
        return Some(("Zip archive data (empty)".into(), "application/zip"));
    }
    if b.starts_with(b"PK\x03\x04") && b.len() >= 30 {
        return zip(b);
    }
    if b.starts_with(b"SQLite format 3\0") && b.len() >= 100 {
        return Some((sqlite(b)?, "application/vnd.sqlite3"));
    }
    if b.starts_with(b"\0asm") && b.len() >= 8 {
        let version = le32(b, 4)?;
        // libmagic gives the MIME type with the MVP version only.
        let (mvp, mime) = if version == 1 {
            (" (MVP)", "application/wasm")
        } else {
            ("", "application/octet-stream")
        };
        let desc = format!("WebAssembly (wasm) binary module version {version:#x}{mvp}");
        return Some((desc, mime));
    }
    None
}

/// JPEG: the JFIF header's fields, then the segments up to the frame's (its comments on the
/// way).
fn jpeg(b: &[u8]) -> String {
    let mut d = String::from("JPEG image data");
    let mut at = 2;
    if b.get(6..10) == Some(b"JFIF") && b.len() >= 20 {
        d.push_str(&format!(", JFIF standard {}.{:02}", b[11], b[12]));
        d.push_str(match b[13] {
            0 => ", aspect ratio",
            1 => ", resolution (DPI)",
            2 => ", resolution (DPCM)",
            _ => "",
        });
        let length = be16(b, 4).unwrap_or(0);
        d.push_str(&format!(
            ", density {}x{}, segment length {length}",
            be16(b, 14).unwrap_or(0),
            be16(b, 16).unwrap_or(0)
        ));
        if b[18] != 0 {
            d.push_str(&format!(", thumbnail {}x{}", b[18], b[19]));
        }
        at = 4 + length as usize;
    }
    while let (Some(marker), Some(length)) = (be16(b, at), be16(b, at + 2)) {
        match marker {
            0xfffe => {
                let text = b.get(at + 4..at + 2 + length as usize).unwrap_or_default();
                d.push_str(&format!(", comment: \"{}\"", String::from_utf8_lossy(text)));
            }
            0xffc0..=0xffc2 => {
                let kind =
                    ["baseline", "extended sequential", "progressive"][(marker - 0xffc0) as usize];
                if let (Some(&p), Some(h), Some(w), Some(&n)) = (
                    b.get(at + 4),
                    be16(b, at + 5),
                    be16(b, at + 7),
                    b.get(at + 9),
                ) {
                    d.push_str(&format!(", {kind}, precision {p}, {w}x{h}, components {n}"));
                }
                break;
            }
            0xffc4 | 0xffdb | 0xffdd | 0xffe0..=0xffef => {}
            _ => break,
        }
        at += 2 + length as usize;
    }
    d
}

/// gzip's header: name, time (UTC, as ctime writes it), compression level, system, and the
/// size its trailer records.
fn gzip(b: &[u8]) -> Option<String> {
    let mut d = String::from("gzip compressed data");
    let flags = b[3];
    match b[2] {
        0..=7 => d.push_str(", reserved method"),
        8 => {}
        _ => d.push_str(", unknown method"),
    }
    for (bit, what) in [(1, ", ASCII"), (2, ", has CRC"), (4, ", extra field")] {
        if flags & bit != 0 {
            d.push_str(what);
        }
    }
    if flags & 0x0c == 0x08 {
        let name = &b[10..];
        let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
        d.push_str(&format!(
            ", was \"{}\"",
            String::from_utf8_lossy(&name[..end])
        ));
    }
    for (bit, what) in [(0x10, ", has comment"), (0x20, ", encrypted")] {
        if flags & bit != 0 {
            d.push_str(what);
        }
    }
    let mtime = le32(b, 4)?;
    if mtime > 0 {
        d.push_str(&format!(", last modified: {}", ctime(i64::from(mtime))));
    }
    match b[8] {
        2 => d.push_str(", max compression"),
        4 => d.push_str(", max speed"),
        _ => {}
    }
    const SYSTEMS: [&str; 14] = [
        "FAT filesystem (MS-DOS, OS/2, NT)",
        "Amiga",
        "VMS",
        "Unix",
        "VM/CMS",
        "Atari",
        "HPFS filesystem (OS/2, NT)",
        "MacOS",
        "Z-System",
        "CP/M",
        "TOPS/20",
        "NTFS filesystem (NT)",
        "QDOS",
        "Acorn RISCOS",
    ];
    if let Some(system) = SYSTEMS.get(b[9] as usize) {
        d.push_str(&format!(", from {system}"));
    }
    d.push_str(&format!(
        ", original size modulo 2^32 {}",
        le32(b, b.len() - 4)?
    ));
    Some(d)
}

/// A time as `ctime` writes it, in UTC: `Tue Nov 14 22:13:20 2023`.
fn ctime(t: i64) -> String {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    // The civil date of a day count (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {day:2} {:02}:{:02}:{:02} {year}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Zip: Office 2007+ documents by their first entries, else the first entry's version and
/// method.
fn zip(b: &[u8]) -> Option<(String, &'static str)> {
    let name_of = |at: usize| -> Option<&[u8]> {
        let len = le16(b, at + 26)? as usize;
        b.get(at + 30..at + 30 + len)
    };
    let first = name_of(0)?;
    if first == b"[Content_Types].xml" || first == b"_rels/.rels" {
        // The next entries (their sizes in their headers) name the application.
        let mut at = 0;
        for _ in 0..4 {
            let size = le32(b, at + 18)? as usize;
            let extra = le16(b, at + 28)? as usize;
            at += 30 + name_of(at)?.len() + extra + size;
            if b.get(at..at + 4) != Some(b"PK\x03\x04") {
                break;
            }
            let name = name_of(at)?;
            for (prefix, desc, mime) in [
                (
                    &b"word/"[..],
                    "Microsoft Word 2007+",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                ),
                (
                    b"ppt/",
                    "Microsoft PowerPoint 2007+",
                    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                ),
                (
                    b"xl/",
                    "Microsoft Excel 2007+",
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                ),
            ] {
                if name.starts_with(prefix) {
                    return Some((desc.into(), mime));
                }
            }
        }
    }
    let method = match le16(b, 8)? {
        0 => "store",
        8 => "deflate",
        _ => return None,
    };
    let version = b[4];
    Some((
        format!(
            "Zip archive data, at least v{}.{} to extract, compression method={method}",
            version / 10,
            version % 10
        ),
        "application/zip",
    ))
}

/// SQLite 3's header fields.
fn sqlite(b: &[u8]) -> Option<String> {
    let mut d = String::from("SQLite 3.x database");
    let app = be32(b, 68)?;
    if app != 0 {
        d.push_str(&format!(", application id {}", app as i32));
    }
    let user = be32(b, 60)?;
    if user != 0 {
        d.push_str(&format!(", user version {}", user as i32));
    }
    d.push_str(&format!(
        ", last written using SQLite version {}, file counter {}, database pages {}, cookie {:#x}, schema {}",
        be32(b, 96)? as i32,
        be32(b, 24)?,
        be32(b, 28)?,
        be32(b, 40)?,
        be32(b, 44)?
    ));
    d.push_str(match be32(b, 56)? {
        1 => ", UTF-8",
        2 => ", UTF-16 little endian",
        3 => ", UTF-16 big endian",
        _ => "",
    });
    d.push_str(&format!(", version-valid-for {}", be32(b, 92)?));
    Some(d)
}

/// What a text format says: a description used as it is, or one with "text" where the
/// encoding goes.
enum Magic {
    Whole(String, &'static str),
    Text(String, &'static str),
}

/// The text formats: `#!` scripts, SVG, XML, HTML.
fn text_magic(b: &[u8]) -> Option<Magic> {
    if let Some(m) = script(b) {
        return Some(m);
    }
    let head = &b[..b.len().min(4096 + 64)];
    let lower = head.to_ascii_lowercase();
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    if b.starts_with(b"<svg") {
        return Some(Magic::Whole(
            "SVG Scalable Vector Graphics image".into(),
            "image/svg+xml",
        ));
    }
    if b.starts_with(b"<?xml version=") {
        let version_like = b.get(14..).is_some_and(|rest| {
            let rest: Vec<u8> = rest
                .iter()
                .copied()
                .skip_while(|c| b"'\" \t".contains(c))
                .collect();
            rest.first()
                .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
        });
        if version_like && b.len() > 19 && find(&head[19..], b"<svg").is_some() {
            return Some(Magic::Whole(
                "SVG Scalable Vector Graphics image".into(),
                "image/svg+xml",
            ));
        }
    }
    if b.starts_with(b"<?xml version=\"") || b.starts_with(b"<?xml version='") {
        let version = b.get(15..18).map(String::from_utf8_lossy)?;
        return Some(Magic::Text(
            format!("XML {version} document text"),
            "text/xml",
        ));
    }
    if b.starts_with(b"-----BEGIN CERTIFICATE-----") {
        return Some(Magic::Whole("PEM certificate".into(), "text/plain"));
    }
    if python(b) {
        return Some(Magic::Text(
            "Python script text executable".into(),
            "text/x-script.python",
        ));
    }
    const HTML: &[&[u8]] = &[
        b"<!doctype html",
        b"<head>",
        b"<head ",
        b"<title>",
        b"<title ",
        b"<html>",
        b"<html ",
        b"<script>",
        b"<script ",
        b"<style>",
        b"<style ",
        b"<table>",
        b"<table ",
        b"<a href=",
    ];
    let window = &lower[..lower.len().min(4096 + 16)];
    if HTML.iter().any(|tag| find(window, tag).is_some()) {
        return Some(Magic::Text("HTML document text".into(), "text/html"));
    }
    match c_family(b) {
        Some((desc, mime)) => Some(Magic::Text(desc.into(), mime)),
        None => other_script(b),
    }
}

/// libmagic's signs of Python without `#!`: a leading docstring, `from X import`,
/// `import X as Y`, `def __init__(self`, `if __name__ == "__main__"`, `try:` with `except`
/// or `finally:`, `class X:` and `def f(args):` lines.
fn python(b: &[u8]) -> bool {
    use regex::bytes::Regex;
    use std::sync::OnceLock;
    static RULES: OnceLock<[Regex; 6]> = OnceLock::new();
    let [from, import_as, except, class, def, def_args] = RULES.get_or_init(|| {
        [
            r"(?m)^from[ \t]+([A-Za-z0-9_]|\.)+[ \t]+import.*$",
            r"(?m)^import [_[:alpha:]]+ as [[:alpha:]][[:space:]]*$",
            r"(?m)^[[:space:]]*except.*:$",
            r"(?m)^class [_[:alpha:]]+(\(.*\))?( )*:([ \t]+pass)?$",
            r"(?m)^[[:space:]]{0,50}def {1,50}[_a-zA-Z]{1,100}",
            r"^\(([[:alpha:]*_, ]){0,255}\):$",
        ]
        .map(|r| Regex::new(r).unwrap_or_else(|_| Regex::new("$^").expect("an empty rule")))
    });
    let within = |n: usize| &b[..b.len().min(n)];
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    // `needle` within `range` bytes, then `then` within `after` bytes of its end.
    let then = |range: usize, needle: &[u8], after: usize, then: &[u8]| {
        find(within(range), needle).is_some_and(|at| {
            let rest = &b[at + needle.len()..];
            find(&rest[..rest.len().min(after + then.len())], then).is_some()
        })
    };
    if b.starts_with(b"\"\"\"") {
        return true;
    }
    let head = within(8192);
    if find(head, b"import").is_some() && (from.is_match(head) || import_as.is_match(head)) {
        return true;
    }
    if then(4096, b"def __init__", 64, b"self")
        || then(4096, b"if __name__", 64, b"'__main__'")
        || then(4096, b"if __name__", 64, b"\"__main__\"")
    {
        return true;
    }
    if let Some(at) = find(within(4096), b"try:") {
        let rest = &b[at + 4..];
        if except.is_match(&rest[..rest.len().min(8192)])
            || find(&rest[..rest.len().min(4096)], b"finally:").is_some()
        {
            return true;
        }
    }
    if find(head, b"class").is_some() && class.is_match(head) {
        return true;
    }
    if find(head, b"def ").is_some() {
        for m in def.find_iter(head) {
            let rest = &head[m.end()..];
            let line_end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            if def_args.is_match(&rest[..line_end]) {
                return true;
            }
        }
    }
    false
}

/// libmagic's signs of C and its kin: Objective-C's `#import`, C++'s namespaces, templates,
/// classes and access labels, Java's `main(String`, C's `#include`, `#pragma`,
/// `#ifdef`..`#endif`, pointer declarations, `extern`, `struct`, `union` and `main(...) {`.
fn c_family(b: &[u8]) -> Option<(&'static str, &'static str)> {
    use regex::bytes::Regex;
    use std::sync::OnceLock;
    const OBJC: &str = "Objective-C source text";
    const CPP: &str = "C++ source text";
    const C: &str = "C source text";
    // (word that must occur, rule, description); the first that holds wins.
    static RULES: OnceLock<Vec<(&'static [u8], Regex, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (&b"#import"[..], r#"(?m)^#import[[:space:]]+["<]"#, OBJC),
            (b"namespace", r"(?m)^namespace[[:space:]]+[_[:alpha:]]{1,20}[[:space:]]*\{", CPP),
            (b"using", r"(?m)^using[[:space:]]+(namespace )?std(::)?[[:alpha:]]*[[:space:]]*;", CPP),
            (b"template", r"(?m)^[[:space:]]*template[[:space:]]*<.*>[[:space:]]*$", CPP),
            (b"virtual", r"(?m)^[[:space:]]*virtual[[:space:]]+.*[};][[:space:]]*$", CPP),
            (
                b"class",
                r"(?ms)^[[:space:]]*class[[:space:]]+[[:digit:][:alpha:]:_]+[[:space:]]*\{.*\}(;)?$",
                CPP,
            ),
            (b"public", r"(?m)^[[:space:]]*public:", CPP),
            (b"private", r"(?m)^[[:space:]]*private:", CPP),
            (b"protected", r"(?m)^[[:space:]]*protected:", CPP),
            (b"#include", r"(?m)^#include", C),
            (b"pragma", r"(?m)^#[[:space:]]*pragma", C),
            (
                b"endif",
                r"(?ms)^#[[:space:]]*(if|ifn)def.*^#[[:space:]]*endif$",
                C,
            ),
            (b"char", r"(?m)^[[:space:]]*char( \*|\*)(.+)(=.*)?;[[:space:]]*$", C),
            (b"double", r"(?m)^[[:space:]]*double( \*|\*)(.+)(=.*)?;[[:space:]]*$", C),
            (b"extern", r"(?m)^[[:space:]]*extern[[:space:]]+", C),
            (b"float", r"(?m)^[[:space:]]*float( \*|\*)(.+)(=.*)?;[[:space:]]*$", C),
            (b"struct", r"(?m)^struct[[:space:]]+", C),
            (b"union", r"(?m)^union[[:space:]]+", C),
        ]
        .into_iter()
        .filter_map(|(word, rule, desc)| Some((word, Regex::new(rule).ok()?, desc)))
        .collect()
    });
    let head = &b[..b.len().min(8192)];
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    for (word, rule, desc) in rules {
        if find(head, word).is_some() && rule.is_match(head) {
            let mime = match *desc {
                OBJC => "text/x-objective-c",
                CPP => "text/x-c++",
                _ => "text/x-c",
            };
            return Some((desc, mime));
        }
    }
    // `main(`: Java's if `String` follows, else C's when a body follows the parameters.
    let at = find(head, b"main(")? + 5;
    let rest = &b[at..];
    if find(&rest[..rest.len().min(64 + 6)], b"String").is_some() {
        return Some(("Java source text", "text/x-java"));
    }
    static BODY: OnceLock<Option<Regex>> = OnceLock::new();
    let body = BODY.get_or_init(|| Regex::new(r"\)[[:space:]]*\{").ok());
    let window = &rest[..rest.len().min(8192)];
    body.as_ref()?.is_match(window).then_some((C, "text/x-c"))
}

/// `#!` lines naming the interpreters libmagic knows.
fn script(b: &[u8]) -> Option<Magic> {
    let rest = b.strip_prefix(b"#!")?;
    let line_end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let line = line.trim_start_matches([' ', '\t']);
    let text = |d: &str, mime| Some(Magic::Text(d.into(), mime));
    const SHELL: &str = "text/x-shellscript";
    let starts = |p: &str| line.starts_with(p);
    if starts("/usr/bin/python") || starts("/usr/local/bin/python") || starts("/usr/bin/env python")
    {
        return text("Python script text executable", "text/x-script.python");
    }
    for (paths, desc, mime) in [
        (
            &[
                "/bin/bash",
                "/usr/bin/bash",
                "/usr/local/bash",
                "/usr/local/bin/bash",
                "/usr/bin/env bash",
            ][..],
            "Bourne-Again shell script text executable",
            SHELL,
        ),
        (&["/bin/sh"], "POSIX shell script text executable", SHELL),
        (
            &["/bin/zsh", "/usr/bin/zsh", "/usr/local/bin/zsh"],
            "Paul Falstad's zsh script text executable",
            SHELL,
        ),
        (&["/bin/ksh"], "Korn shell script text executable", SHELL),
        (
            &["/bin/awk", "/usr/bin/awk"],
            "awk script text executable",
            "text/x-awk",
        ),
        (
            &["/usr/bin/env ruby"],
            "Ruby script text executable",
            "text/x-ruby",
        ),
    ] {
        if paths.iter().any(|p| starts(p)) {
            return text(desc, mime);
        }
    }
    if starts("/usr/bin/env node") {
        return text("Node.js script executable", "application/javascript");
    }
    if starts("/usr/bin/perl") || starts("/usr/bin/env perl") {
        return Some(Magic::Whole(
            "Perl script text executable".into(),
            "text/x-perl",
        ));
    }
    None
}

/// Any other `#!` line, when nothing else matched (even Rust's `#![...]`, as libmagic says):
/// "a INTERPRETER script".
fn other_script(b: &[u8]) -> Option<Magic> {
    let rest = b.strip_prefix(b"#!")?;
    let line_end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let line = line.trim_start_matches([' ', '\t']);
    let interpreter = line.strip_prefix("/usr/bin/env ").unwrap_or(line);
    Some(Magic::Text(
        format!("a {interpreter} script text executable"),
        "text/plain",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(b: &[u8]) -> String {
        content(b).desc
    }

    #[test]
    fn text_as_libmagic_says() {
        assert_eq!(desc(b"hello\n"), "ASCII text");
        assert_eq!(
            desc(b"a\r\nb\r\n"),
            "ASCII text, with CRLF line terminators"
        );
        assert_eq!(
            desc(b"a\r\nb\n"),
            "ASCII text, with CRLF, LF line terminators"
        );
        assert_eq!(desc(b"abc"), "ASCII text, with no line terminators");
        assert_eq!(desc("h\u{e9}llo\n".as_bytes()), "Unicode text, UTF-8 text");
        assert_eq!(desc(b"h\xe9llo\n"), "ISO-8859 text");
        let long = "x".repeat(400) + "\n";
        assert_eq!(
            desc(long.as_bytes()),
            "ASCII text, with very long lines (400)"
        );
        assert_eq!(desc(b"\x00\x01\x02"), "data");
    }

    #[test]
    fn formats() {
        assert_eq!(desc(b"{\"a\": [1, 2]}\n"), "JSON text data");
        assert_eq!(desc(b"\"str\"\n"), "ASCII text");
        assert_eq!(desc(b"a,b\n1,2\n3,4\n"), "CSV text");
        assert_eq!(desc(b"a,b\n1,2\n"), "ASCII text");
        assert_eq!(
            desc(b"#!/usr/bin/env python3\nprint(1)\n"),
            "Python script, ASCII text executable"
        );
        assert_eq!(
            desc(b"#!/usr/bin/env node\nx\n"),
            "Node.js script executable, ASCII text"
        );
        assert_eq!(desc(b"<!DOCTYPE html>\n<p>\n"), "HTML document, ASCII text");
        assert_eq!(
            desc(b"\0asm\x01\0\0\0"),
            "WebAssembly (wasm) binary module version 0x1 (MVP)"
        );
        assert_eq!(ctime(1_700_000_000), "Tue Nov 14 22:13:20 2023");
        assert_eq!(
            desc(b"#include <stdio.h>\nint main() { return 0; }\n"),
            "C source, ASCII text"
        );
        assert_eq!(
            desc(b"def f(a, b):\n    pass\n"),
            "Python script, ASCII text executable"
        );
        // Rust's `#![...]` is a "script" to libmagic unless a C-like rule holds.
        assert_eq!(
            desc(b"#![allow(x)]\nmod a;\n"),
            "a [allow(x)] script, ASCII text executable"
        );
        assert_eq!(
            desc(b"#![allow(x)]\nfn main() {}\n"),
            "C source, ASCII text"
        );
    }
}
