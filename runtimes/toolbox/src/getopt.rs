//! GNU-style option parsing for the toolbox's own commands (grep, find's helpers, sed, du,
//! stat): bundled short options (`-rn`), attached or separate values (`-A2`, `-A 2`), long
//! options with `=` or a separate value and unique prefixes (`--inc=*.py`), options after the
//! operands (GNU's permutation), `--` and `-` as an operand.

/// One long option: its name, the short letter it stands for, whether it takes a value.
pub type Long = (&'static str, char, bool);

/// The first letter standing for a long-only option a command refuses by name: a command's
/// table of such names gives each its own private-use letter from here on ([`refused`]), never
/// typed and never one of its own long-only letters below it.
pub const REFUSED_BASE: u32 = 0xe100;

/// The letter of refused long option number `index` (its place in the command's names).
pub const fn refused(index: u32) -> char {
    match char::from_u32(REFUSED_BASE + index) {
        Some(c) => c,
        None => panic!("a private-use character"),
    }
}

/// `--NAME` (with `=...` when it is in `valued`) for the refused letter `c`, from the
/// command's table of refused `names`.
pub fn refused_name(c: char, names: &[&str], valued: &[&str]) -> String {
    let index = (c as u32).wrapping_sub(REFUSED_BASE) as usize;
    let name = names.get(index).copied().unwrap_or("this option");
    let suffix = if valued.contains(&name) { "=..." } else { "" };
    format!("--{name}{suffix}")
}

/// What a command line said.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Options in order, with their values.
    pub opts: Vec<(char, Option<String>)>,
    pub operands: Vec<String>,
    /// Where each operand was among the words parsed (diff repeats the other words).
    pub operand_at: Vec<usize>,
}

impl Parsed {
    pub fn has(&self, c: char) -> bool {
        self.opts.iter().any(|(o, _)| *o == c)
    }

    /// The last value given to `c`.
    pub fn value(&self, c: char) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(o, _)| *o == c)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Every value given to `c`, in order.
    pub fn values(&self, c: char) -> Vec<&str> {
        (self.opts.iter())
            .filter(|(o, _)| *o == c)
            .filter_map(|(_, v)| v.as_deref())
            .collect()
    }
}

/// The words after a command's name, as text (lossily: the toolbox's options and paths are
/// UTF-8).
pub fn words(args: crate::Args) -> Vec<String> {
    args.skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// [`parse`] for the command `name`; on a bad option, GNU's two lines on stderr and `None`.
pub fn parse_or_say(name: &str, args: &[String], short: &str, long: &[Long]) -> Option<Parsed> {
    let parsed = parse(args, short, long);
    if let Err(e) = &parsed {
        eprintln!("{name}: {e}\nTry '{name} --help' for more information.");
    }
    parsed.ok()
}

/// Parses `args` (without the command's name). `short` lists the letters, a `:` after one that
/// takes a value; a `#` in it lets `-5` stand for the option `#` with the value `5` (grep's
/// context). The error is GNU's message, without the command's name.
pub fn parse(args: &[String], short: &str, long: &[Long]) -> Result<Parsed, String> {
    let takes = |c: char| {
        short
            .find(c)
            .map(|at| short[at + c.len_utf8()..].starts_with(':'))
    };
    let numeric = short.contains('#');
    let mut p = Parsed::default();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_operands || a == "-" || !a.starts_with('-') {
            p.operands.push(a.clone());
            p.operand_at.push(i - 1);
            continue;
        }
        if a == "--" {
            only_operands = true;
            continue;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (body, None),
            };
            let exact = long.iter().find(|l| l.0 == name);
            let candidates: Vec<&Long> = long.iter().filter(|l| l.0.starts_with(name)).collect();
            let found = match (exact, candidates.as_slice()) {
                (Some(l), _) => l,
                (None, [l]) => l,
                (None, []) => return Err(format!("unrecognized option '--{name}'")),
                (None, many) if many.iter().all(|l| l.1 == many[0].1) => many[0],
                (None, _) => return Err(format!("option '--{name}' is ambiguous")),
            };
            let value = if found.2 {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(format!("option '--{}' requires an argument", found.0)),
                }
            } else if inline.is_some() {
                return Err(format!("option '--{}' doesn't allow an argument", found.0));
            } else {
                None
            };
            p.opts.push((found.1, value));
            continue;
        }
        let letters: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        while j < letters.len() {
            let c = letters[j];
            j += 1;
            if numeric && c.is_ascii_digit() {
                let mut n = c.to_string();
                while j < letters.len() && letters[j].is_ascii_digit() {
                    n.push(letters[j]);
                    j += 1;
                }
                p.opts.push(('#', Some(n)));
                continue;
            }
            match takes(c) {
                None => return Err(format!("invalid option -- '{c}'")),
                Some(false) => p.opts.push((c, None)),
                Some(true) => {
                    let rest: String = letters[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    };
                    p.opts.push((c, Some(value)));
                    break;
                }
            }
        }
    }
    Ok(p)
}
