//! Where awk's records come from and its output goes: a reader cutting records by RS (one
//! character, `""` for paragraphs, or a regex), and the table of files opened by `print >`,
//! `print >>` and `getline <` until `close()`.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use regex::Regex;

/// One input: a file or stdin, cut into records.
pub struct Reader {
    r: Box<dyn BufRead>,
    /// For a regex RS: the rest of the input, read at once.
    rest: Option<String>,
}

impl Reader {
    pub fn open(name: &str) -> io::Result<Reader> {
        let r: Box<dyn BufRead> = if name == "-" || name == "/dev/stdin" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            Box::new(BufReader::new(File::open(name)?))
        };
        Ok(Reader { r, rest: None })
    }

    /// The next record, without its terminator; `rs_regex` is RS compiled when it is longer
    /// than one character.
    pub fn record(&mut self, rs: &str, rs_regex: Option<&Regex>) -> io::Result<Option<String>> {
        if rs.is_empty() {
            return self.paragraph();
        }
        if let (Some(re), true) = (rs_regex, rs.len() > 1) {
            if self.rest.is_none() {
                let mut all = Vec::new();
                self.r.read_to_end(&mut all)?;
                self.rest = Some(String::from_utf8_lossy(&all).into_owned());
            }
            let rest = self.rest.as_mut().map(std::mem::take).unwrap_or_default();
            if rest.is_empty() {
                return Ok(None);
            }
            return Ok(Some(match re.find(&rest) {
                Some(m) if m.end() > m.start() => {
                    self.rest = Some(rest[m.end()..].to_string());
                    rest[..m.start()].to_string()
                }
                _ => rest.strip_suffix('\n').unwrap_or(&rest).to_string(),
            }));
        }
        let sep = rs.as_bytes()[0];
        let mut buf = Vec::new();
        if self.r.read_until(sep, &mut buf)? == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&sep) {
            buf.pop();
        }
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }

    /// RS = "": records are separated by blank lines.
    fn paragraph(&mut self) -> io::Result<Option<String>> {
        let mut lines: Vec<String> = Vec::new();
        loop {
            let mut buf = Vec::new();
            if self.r.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if buf.is_empty() {
                if lines.is_empty() {
                    continue;
                }
                break;
            }
            lines.push(String::from_utf8_lossy(&buf).into_owned());
        }
        Ok((!lines.is_empty()).then(|| lines.join("\n")))
    }
}

/// The streams `print` writes to, by name.
#[derive(Default)]
pub struct Outputs {
    files: HashMap<String, Box<dyn Write>>,
}

impl Outputs {
    /// The stream for `name`, opened (truncating unless `append`) on first use.
    pub fn get(&mut self, name: &str, append: bool) -> io::Result<&mut Box<dyn Write>> {
        if !self.files.contains_key(name) {
            let w: Box<dyn Write> = match name {
                "/dev/stdout" | "-" => Box::new(io::stdout()),
                "/dev/stderr" => Box::new(io::stderr()),
                _ => {
                    let f = if append {
                        OpenOptions::new().append(true).create(true).open(name)?
                    } else {
                        File::create(name)?
                    };
                    Box::new(BufWriter::new(f))
                }
            };
            self.files.insert(name.to_owned(), w);
        }
        Ok(self.files.get_mut(name).expect("inserted above"))
    }

    /// Flushes and forgets `name`; whether it was open.
    pub fn close(&mut self, name: &str) -> bool {
        match self.files.remove(name) {
            Some(mut w) => {
                let _ = w.flush();
                true
            }
            None => false,
        }
    }

    pub fn flush_all(&mut self) {
        for w in self.files.values_mut() {
            let _ = w.flush();
        }
    }
}
