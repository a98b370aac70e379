//! Command-line options, one shape for every built-in: a table of short letters and long names
//! goes in, [`Opts`] (flags, values, operands) comes out, and the usual GNU errors are printed.

use crate::shell::exec::Ctx;

/// Parsed command-line options.
#[derive(Debug, Default)]
pub(crate) struct Opts {
    flags: Vec<char>,
    values: Vec<(char, String)>,
    pub operands: Vec<String>,
}

impl Opts {
    pub(crate) fn has(&self, c: char) -> bool {
        self.flags.contains(&c)
    }

    /// The last value given for an option.
    pub(crate) fn value(&self, c: char) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| *k == c)
            .map(|(_, v)| v.as_str())
    }
}

/// GNU-style option parsing: clustered short flags (`-la`), values attached or separate
/// (`-n5`, `-n 5`), long options mapped to letters (`--null`, `--max-args=5`), options after
/// operands, `--` ends options.
///
/// `spec` lists the letters; a letter followed by `:` takes a value. `longs` maps long names to
/// letters: `"null=0 max-args=n"`. A `+` before the letters ends options at the first operand,
/// as getopt's does (`xargs`, `sh`: the rest belongs to the command they run). Prints the error
/// and returns `None` on an unknown option or a missing value.
pub(crate) fn opts(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
    spec: &str,
    longs: &str,
) -> Option<Opts> {
    let (first_operand_ends, spec) = strip(spec, '+');
    let takes_value = |c: char| spec.find(c).is_some_and(|i| spec[i + 1..].starts_with(':'));
    let mut o = Opts::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            o.operands.extend(rest.cloned());
            break;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            o.operands.push(arg.clone());
            if first_operand_ends {
                o.operands.extend(rest.cloned());
                break;
            }
            continue;
        }
        let options = match arg.strip_prefix("--") {
            Some(long) => vec![long_option(ctx, long, longs, takes_value, &mut rest)?],
            None => short_options(ctx, arg, spec, takes_value, &mut rest)?,
        };
        for (c, value) in options {
            match value {
                Some(v) => o.values.push((c, v)),
                None => o.flags.push(c),
            }
        }
    }
    Some(o)
}

/// `--name` or `--name=value`: its letter, and its value when it takes one; `None` after the
/// message.
fn long_option<'a>(
    ctx: &mut Ctx<'_, '_>,
    long: &str,
    longs: &str,
    takes_value: impl Fn(char) -> bool,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Option<(char, Option<String>)> {
    let (name, inline) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (long, None),
    };
    let letter = |pair: &str| pair.strip_prefix(name)?.strip_prefix('=')?.chars().next();
    let Some(c) = longs.split_whitespace().find_map(letter) else {
        ctx.warn(format_args!("unrecognized option '--{name}'"));
        return None;
    };
    if !takes_value(c) {
        return Some((c, None));
    }
    let Some(value) = inline.or_else(|| rest.next().cloned()) else {
        ctx.warn(format_args!("option '--{name}' requires an argument"));
        return None;
    };
    Some((c, Some(value)))
}

/// `-abc`, `-n5`, `-n 5`: each letter, with its value when it takes one; `None` after the
/// message.
fn short_options<'a>(
    ctx: &mut Ctx<'_, '_>,
    arg: &str,
    spec: &str,
    takes_value: impl Fn(char) -> bool,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Option<Vec<(char, Option<String>)>> {
    let mut options = Vec::new();
    for (at, c) in arg.char_indices().skip(1) {
        if c == ':' || !spec.contains(c) {
            ctx.warn(format_args!("invalid option -- '{c}'"));
            return None;
        }
        if !takes_value(c) {
            options.push((c, None));
            continue;
        }
        // The rest of the word is the value, or else the next word.
        let attached = &arg[at + c.len_utf8()..];
        let value = match attached {
            "" => rest.next().cloned(),
            attached => Some(attached.to_string()),
        };
        let Some(value) = value else {
            ctx.warn(format_args!("option requires an argument -- '{c}'"));
            return None;
        };
        options.push((c, Some(value)));
        break;
    }
    Some(options)
}

/// Whether `spec` starts with `prefix`, and the rest.
fn strip(spec: &str, prefix: char) -> (bool, &str) {
    match spec.strip_prefix(prefix) {
        Some(rest) => (true, rest),
        None => (false, spec),
    }
}

/// A bash built-in's options: short letters only (`spec` as [`opts`] takes it), ending at
/// the first operand, with bash's error and usage on a bad one (`wait`, `jobs`, `disown`,
/// `alias`).
pub(crate) fn bash_opts(
    ctx: &mut Ctx<'_, '_>,
    args: &[String],
    spec: &str,
    usage: &str,
) -> Option<Opts> {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" || arg.len() < 2 || !arg.starts_with('-') {
            break;
        }
        for (i, letter) in arg.char_indices().skip(1) {
            let Some(at) = spec.find(letter).filter(|_| letter != ':') else {
                ctx.warn(format_args!("-{letter}: invalid option"));
                ctx.warn(format_args!("usage: {usage}"));
                return None;
            };
            if spec[at + 1..].starts_with(':') {
                // The rest of the word, or the next word, is its value.
                if i + 1 == arg.len() {
                    rest.next();
                }
                break;
            }
        }
    }
    opts(ctx, args, &format!("+{spec}"), "")
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    #[test]
    fn options_parse_like_gnu() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.ok("echo a b c | xargs -n1 echo; echo d e | xargs --max-args 1 echo"),
            "a\nb\nc\nd\ne\n"
        );
        assert_eq!(s.ok("echo a b | xargs --max-args=2 -- echo -n"), "a b");
        // `+`: options end at the first operand, so `-n` here is echo's.
        assert_eq!(s.ok("echo a b | xargs -n 1 echo -n"), "ab");
        let errors = [
            ("xargs --bogus", "xargs: unrecognized option '--bogus'\n"),
            ("xargs -n", "xargs: option requires an argument -- 'n'\n"),
            (
                "xargs --max-args",
                "xargs: option '--max-args' requires an argument\n",
            ),
            ("xargs -z", "xargs: invalid option -- 'z'\n"),
        ];
        for (line, message) in errors {
            assert_eq!(
                s.sh(line),
                (String::new(), message.to_string(), 1),
                "{line}"
            );
        }
    }
}
