//! Word expansion, in bash's order: brace expansion (`{a,b}`, `{1..10}`), then tilde,
//! parameters (`$NAME` and every `${NAME<op>...}`), command substitution (`$(...)`, run by the
//! shell through [`Env::substitute`]) and arithmetic (`$((...))`, by [`super::arith`]), then
//! field splitting of unquoted results (on `IFS`) and pathname globbing (patterns from
//! [`super::glob`]) against the confined filesystem. Patterns of `case`, `[[ == ]]` and
//! `${NAME#pattern}` come from here too, with their quoted characters made literal.
//!
//! Globs only ever list directories through [`Fs`], so a pattern cannot reveal anything outside
//! the mounts: an inaccessible directory simply matches nothing and the word stays literal, as in
//! bash when nothing matches. Everything an expansion makes is bounded: [`MAX_EXPANSION`] bytes
//! per command, [`MAX_BRACE_WORDS`] words per brace expansion, and the loops that match patterns
//! against long values check the deadline.

use super::arith;
use super::arrays::Elements;
use super::exec::Abort;
use super::glob::Glob;
use super::lexer::{self, Index, ParamOp, Part, Word};
use super::parser::Script;

/// Most bytes a command's words may expand to, together: a word made of thousands of `$A`, or
/// `A=$A$A` repeated, must not exhaust the worker's memory.
pub(crate) const MAX_EXPANSION: usize = 16 << 20;

/// Most words one brace expansion may make: `{1..1000000000}` or `{a,b}` repeated thirty
/// times would otherwise take the worker's memory before any command runs.
pub(crate) const MAX_BRACE_WORDS: usize = 100_000;

/// Why a word could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// Over [`MAX_EXPANSION`]: the command fails (status 1) and the script goes on.
    #[error("expansion too long (over {} MiB)", MAX_EXPANSION >> 20)]
    TooLong,
    /// The command fails (status 1) and the script goes on.
    #[error("{0}")]
    Failed(String),
    /// Abandons the rest of the line being run with status 1, as bash (not in POSIX mode)
    /// does after an expansion error (division by zero in `$((...))`, a bad substitution).
    #[error("{0}")]
    Fatal(String),
    /// `${X:?msg}` or `set -u` met an unset parameter: ends the script, with status 127 at
    /// the top (1 in a subshell), as bash's.
    #[error("{0}")]
    Unset(String),
    /// The deadline passed, the call was cancelled, or a substitution ended the shell.
    #[error("stopped")]
    Stopped(Abort),
}

/// What expansion reads and runs: the shell (or a test's stand-in).
pub(crate) trait Env: arith::Vars {
    /// The value of a parameter (variables, `$?`, `$1`, `$#`...), `None` when unset.
    fn param(&mut self, name: &str) -> Option<String>;
    /// `$1`, `$2`...
    fn positional(&self) -> Vec<String>;
    /// `${NAME:=word}`.
    ///
    /// # Errors
    /// When the variable cannot take the value.
    fn assign(&mut self, name: &str, value: String) -> Result<(), Error>;
    /// `$(...)`: runs `script` in a subshell and returns its stdout.
    ///
    /// # Errors
    /// When the deadline passes or the call is cancelled.
    fn substitute(&mut self, script: &Script) -> Result<String, Error>;
    /// `<(...)`: runs `script` in a subshell and returns the path of a file holding its
    /// stdout, removed when the command line ends.
    ///
    /// # Errors
    /// When the deadline passes, the call is cancelled, or the file cannot be written.
    fn input_file(&mut self, script: &Script) -> Result<String, Error>;
    /// `>(...)`: the path of a new empty file for the command to write; `script` runs with
    /// it as its stdin when the command ends, and it is removed then.
    ///
    /// # Errors
    /// As [`Env::input_file`].
    fn output_file(&mut self, script: &Script) -> Result<String, Error>;
    /// Pathname expansion of one field (see [`glob`]): the matching paths, sorted.
    fn expand_pathname(&mut self, pattern: &str) -> Vec<String>;
    /// The names of the variables that start with `prefix`, sorted (`${!PREFIX*}`).
    fn names_starting(&self, prefix: &str) -> Vec<String>;
    /// What a pattern that matches nothing becomes (`shopt` nullglob, failglob).
    fn unmatched(&self) -> Unmatched {
        Unmatched::Literal
    }
    /// Whether the deadline passed or the call was cancelled (and which).
    fn stopped(&self) -> Option<Abort>;
    /// `set -u`: expanding an unset parameter is an error.
    fn nounset(&self) -> bool {
        false
    }
    /// The elements of the array `name`, by index (a set scalar is element 0).
    fn elements(&mut self, name: &str) -> Elements<'_> {
        Elements::scalar(self.param(name))
    }
    /// A message on stderr that does not stop the command (`${a[-9]}`).
    fn warn(&mut self, _msg: &str) {}
    /// A variable's attributes as `declare` flags (`a`, `i`, `r`; `${NAME@a}`).
    fn attributes(&self, _name: &str) -> String {
        String::new()
    }
}

/// What a pattern that matches no file becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unmatched {
    /// Itself, unchanged (POSIX).
    Literal,
    /// No word at all (`shopt -s nullglob`).
    Nothing,
    /// An error: the command does not run (`shopt -s failglob`).
    Fail,
}

/// A character and whether quoting made it literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ch {
    pub c: char,
    pub quoted: bool,
}

/// `IFS`'s default: blanks and newlines.
const DEFAULT_IFS: &str = " \t\n";

struct Fields {
    done: Vec<Vec<Ch>>,
    cur: Vec<Ch>,
    /// The current field exists even if empty (`""` makes an empty argument).
    started: bool,
    /// Bytes expanded so far, and whether that went over the limit (the rest is dropped).
    size: usize,
    overflow: bool,
    /// Whether unquoted expansions are split into fields (not in assignments, patterns...).
    split: bool,
    ifs: String,
    /// The last split ended a field at IFS white space (so a following `,` of `IFS=', '`
    /// belongs to the same separator).
    after_blank: bool,
}

impl Fields {
    fn new(split: bool, ifs: Option<String>) -> Self {
        Self {
            done: Vec::new(),
            cur: Vec::new(),
            started: false,
            size: 0,
            overflow: false,
            split,
            ifs: ifs.unwrap_or_else(|| DEFAULT_IFS.into()),
            after_blank: false,
        }
    }

    fn room(&mut self, s: &str) -> bool {
        self.size += s.len();
        self.overflow |= self.size > MAX_EXPANSION;
        !self.overflow
    }

    fn push(&mut self, s: &str, quoted: bool) {
        if !self.room(s) {
            return;
        }
        self.cur.extend(s.chars().map(|c| Ch { c, quoted }));
        if quoted || !s.is_empty() {
            self.started = true;
            self.after_blank = false;
        }
    }

    /// An unquoted expansion: split on `IFS` (when splitting).
    fn push_split(&mut self, s: &str) {
        if !self.split {
            self.push(s, false);
            return;
        }
        if !self.room(s) {
            return;
        }
        for c in s.chars() {
            if !self.ifs.contains(c) {
                self.cur.push(Ch { c, quoted: false });
                self.started = true;
                self.after_blank = false;
            } else if DEFAULT_IFS.contains(c) {
                if self.started {
                    self.finish();
                    self.after_blank = true;
                }
            } else {
                // A non-blank separator ends a field, even an empty one.
                if self.started || !self.after_blank {
                    self.done.push(std::mem::take(&mut self.cur));
                    self.started = false;
                }
                self.after_blank = false;
            }
        }
    }

    /// Ends the current field and starts the next one (between the words of `"$@"`).
    fn next_field(&mut self) {
        self.done.push(std::mem::take(&mut self.cur));
        self.started = false;
    }

    fn finish(&mut self) {
        if self.started {
            self.done.push(std::mem::take(&mut self.cur));
            self.started = false;
        }
    }

    fn into_text(mut self) -> String {
        self.finish();
        let fields: Vec<String> = self.done.iter().map(|f| text_of(f)).collect();
        fields.join(" ")
    }
}

fn stopped(env: &dyn Env) -> Result<(), Error> {
    env.stopped().map_or(Ok(()), |a| Err(Error::Stopped(a)))
}

/// Expands the parts of `word` into `f`. `force_quoted`: the word is inside double quotes (an
/// operand of a quoted `${...}`); `top`: it is a whole word (where `~` can start).
fn expand_word(
    word: &Word,
    env: &mut dyn Env,
    f: &mut Fields,
    force_quoted: bool,
    top: bool,
) -> Result<(), Error> {
    for (i, part) in word.parts.iter().enumerate() {
        match part {
            Part::Lit { text, quoted } => {
                let quoted = *quoted || force_quoted;
                // `~` and `~/...` at the start of a word are $HOME.
                if top && i == 0 && !quoted && (text == "~" || text.starts_with("~/")) {
                    let home = env.param("HOME").unwrap_or_else(|| "/app".into());
                    f.push(&home, true);
                    f.push(&text[1..], false);
                } else {
                    f.push(text, quoted);
                }
            }
            Part::Param { name, quoted, op } => {
                param(f, env, name, *quoted || force_quoted, op.as_deref())?;
            }
            Part::Element {
                name,
                index,
                quoted,
                op,
            } => {
                element(f, env, name, index, *quoted || force_quoted, op.as_deref())?;
            }
            Part::Command { script, quoted } => {
                let out = env.substitute(script)?;
                let out = out.trim_end_matches('\n');
                if *quoted || force_quoted {
                    f.push(out, true);
                } else {
                    f.push_split(out);
                }
            }
            Part::Arith { expr, quoted } => {
                let v = arithmetic(expr, env)?;
                push_value(f, &v.to_string(), *quoted || force_quoted);
            }
            Part::Input { script } => {
                let path = env.input_file(script)?;
                f.push(&path, true);
            }
            Part::Output { script } => {
                let path = env.output_file(script)?;
                f.push(&path, true);
            }
        }
        if f.overflow {
            return Err(Error::TooLong);
        }
    }
    Ok(())
}

/// Evaluates an arithmetic word (after its expansions).
///
/// # Errors
/// [`Error::Fatal`] for a bad expression: bash abandons the line being run there.
pub(crate) fn arithmetic(expr: &Word, env: &mut dyn Env) -> Result<i64, Error> {
    let text = text(expr, env)?;
    arith::eval(&text, env).map_err(Error::Fatal)
}

/// `${NAME@how}` of a variable (or of the element `NAME[i]`) with `value` (`None`: unset,
/// which stays empty but for its attributes).
fn transformed(how: char, name: &str, value: Option<&str>, env: &dyn Env) -> String {
    // An element's `@A` declares its array (bash: `declare -a a='y'`).
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    let flags = env.attributes(name);
    let Some(value) = value else {
        return match how {
            'a' => flags,
            'A' if !flags.is_empty() => format!("declare -{flags} {name}"),
            _ => String::new(),
        };
    };
    match how {
        'Q' | 'K' | 'k' => quoted_for_input(value),
        'E' => lexer::ansi_c_decoded(value),
        'U' => value.to_uppercase(),
        'L' => value.to_lowercase(),
        'u' => match value.chars().next() {
            Some(first) => first.to_uppercase().chain(value.chars().skip(1)).collect(),
            None => String::new(),
        },
        'a' => flags,
        // 'A': the statement that would make it again.
        _ if flags.is_empty() => format!("{name}={}", quoted_for_input(value)),
        _ => format!("declare -{flags} {name}={}", quoted_for_input(value)),
    }
}

/// `declare -p`'s text for a variable: its attributes (`-` for none) and its value as bash
/// quotes it there (in double quotes, or as `$'...'` with control characters).
pub(crate) fn declaration(flags: &str, name: &str, value: &str) -> String {
    let flags = if flags.is_empty() { "-" } else { flags };
    format!("declare -{flags} {name}={}", double_quoted(value))
}

/// `declare -p`'s text for an indexed array: `declare -a a=([0]="x" [1]="y")`.
pub(crate) fn array_declaration(flags: &str, name: &str, elements: &Elements<'_>) -> String {
    if elements.unassigned() {
        return format!("declare -{flags} {name}");
    }
    format!("declare -{flags} {name}={}", array_value(elements))
}

/// An array's value as `declare` writes it: `([0]="x" [1]="y")`, `()` when empty.
pub(crate) fn array_value(elements: &Elements<'_>) -> String {
    format!("({})", keyed(elements, true))
}

/// `NAME=VALUE` as bash's `set` and a bare `declare` list a variable: the value as it is when
/// the shell reads it back so, else quoted for input.
pub(crate) fn listed_variable(name: &str, value: &str) -> String {
    let plain = value.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '.' | '/' | ':' | '-' | ',' | '+' | '@' | '%' | '=')
    });
    match plain {
        true => format!("{name}={value}"),
        false => format!("{name}={}", quoted_for_input(value)),
    }
}

/// Each element as `[i]="v"` (`declare -p`) or as `i "v"` (`${a[@]@K}`).
fn keyed(elements: &Elements<'_>, declared: bool) -> String {
    let items: Vec<String> = (elements.iter())
        .map(|(i, v)| match declared {
            true => format!("[{i}]={}", double_quoted(v)),
            false => format!("{i} {}", double_quoted(v)),
        })
        .collect();
    items.join(" ")
}

/// `value` in double quotes as `declare -p` writes it (`$'...'` for control characters).
fn double_quoted(value: &str) -> String {
    if value.chars().any(char::is_control) {
        return quoted_for_input(value);
    }
    let mut out = String::from('"');
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out + "\""
}

/// `value` quoted so that the shell reads it back as it is (bash's `${NAME@Q}`, `printf %q`'s
/// cousin): in single quotes, or as `$'...'` when it holds control characters.
pub(crate) fn quoted_for_input(value: &str) -> String {
    if !value.chars().any(char::is_control) {
        return single_quoted(value);
    }
    let mut out = String::from("$'");
    for c in value.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\x1b' => out.push_str("\\E"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if c.is_control() => out.push_str(&format!("\\{:03o}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `text` in single quotes, each `'` as `'\''`.
pub(crate) fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn push_value(f: &mut Fields, value: &str, quoted: bool) {
    if quoted {
        f.push(value, true);
    } else {
        f.push_split(value);
    }
}

/// Pushes a list of words (`$@`, `$*`): separate fields when quoted `$@`, one field joined by
/// a space for quoted `$*`, split when unquoted.
fn push_list(f: &mut Fields, list: &[String], quoted: bool, at: bool) {
    if quoted && at {
        for (n, arg) in list.iter().enumerate() {
            if n > 0 {
                f.next_field();
            }
            f.push(arg, true);
        }
    } else if quoted {
        // `"$*"` joins with the first character of IFS.
        let sep: String = f.ifs.chars().next().map(String::from).unwrap_or_default();
        f.push(&list.join(&sep), true);
    } else {
        for (n, arg) in list.iter().enumerate() {
            if n > 0 && f.split {
                f.finish();
            } else if n > 0 {
                f.push(" ", false);
            }
            f.push_split(arg);
        }
    }
}

/// `${!NAME...}`: the parameter NAME's value names (bash's indirection), or with `target`
/// `PREFIX*`/`PREFIX@` the variables' names that start with PREFIX.
fn indirect(
    f: &mut Fields,
    env: &mut dyn Env,
    target: &str,
    quoted: bool,
    op: Option<&ParamOp>,
) -> Result<(), Error> {
    if let Some(prefix) = target.strip_suffix(['*', '@']) {
        let names = env.names_starting(prefix);
        push_list(f, &names, quoted, target.ends_with('@'));
        return Ok(());
    }
    let pointed = env.param(target).unwrap_or_default();
    let valid = crate::shell::lexer::is_name(&pointed)
        || (!pointed.is_empty() && pointed.chars().all(|c| c.is_ascii_digit()))
        || matches!(pointed.as_str(), "?" | "$" | "#" | "@" | "*" | "!" | "-");
    if pointed.is_empty() {
        return Err(Error::Fatal(format!(
            "{target}: invalid indirect expansion"
        )));
    }
    if !valid {
        return Err(Error::Fatal(format!("{pointed}: invalid variable name")));
    }
    param(f, env, &pointed, quoted, op)
}

/// One `$NAME` or `${NAME<op>...}`.
fn param(
    f: &mut Fields,
    env: &mut dyn Env,
    name: &str,
    quoted: bool,
    op: Option<&ParamOp>,
) -> Result<(), Error> {
    if let Some(target) = name.strip_prefix('!').filter(|t| !t.is_empty()) {
        return indirect(f, env, target, quoted, op);
    }
    let list = matches!(name, "@" | "*");
    match op {
        None if list => {
            push_list(f, &env.positional(), quoted, name == "@");
            return Ok(());
        }
        Some(ParamOp::Slice { offset, length }) if list => {
            // `${@:2}`: from `$2` on (offset 0 would be `$0`).
            let mut all = vec![env.param("0").unwrap_or_default()];
            all.extend(env.positional());
            let slice = slice_range(all.len(), offset, length.as_ref(), env)?;
            push_list(f, &all[slice], quoted, name == "@");
            return Ok(());
        }
        Some(ParamOp::Length) if list => {
            f.push(&env.positional().len().to_string(), quoted);
            return Ok(());
        }
        Some(ParamOp::Transform(how)) if list => {
            let each: Vec<String> = (env.positional().iter())
                .map(|v| transformed(*how, name, Some(v), env))
                .collect();
            push_list(f, &each, quoted, name == "@");
            return Ok(());
        }
        _ => {}
    }
    let value = env.param(name);
    apply(f, env, name, value, quoted, op)
}

/// `${NAME[...]<op>...}`.
fn element(
    f: &mut Fields,
    env: &mut dyn Env,
    name: &str,
    index: &Index,
    quoted: bool,
    op: Option<&ParamOp>,
) -> Result<(), Error> {
    let length = op == Some(&ParamOp::Length);
    let array = env.attributes(name).contains('a');
    if length && env.nounset() && (!array || env.elements(name).unassigned()) {
        // bash 5.2 counts the elements of what is no array (or an array declared and never
        // assigned) as unbound, with status 1, abandoning the line.
        return Err(Error::Fatal(format!("{name}: unbound variable")));
    }
    let (at, keys) = match index {
        Index::At(expr) => {
            let i = arithmetic(expr, env)?;
            let elements = env.elements(name);
            let at = if i < 0 {
                elements.last().map_or(0, |last| last as i64 + 1) + i
            } else {
                i
            };
            let value = usize::try_from(at).ok().and_then(|at| elements.get(at));
            // An unset element's length is 0, even under `set -u`.
            let value = value
                .map(str::to_owned)
                .or_else(|| length.then(String::new));
            if at < 0 {
                env.warn(&format!("{name}: bad array subscript"));
                if quoted {
                    f.push("", true);
                }
                return Ok(());
            }
            return apply(f, env, &format!("{name}[{at}]"), value, quoted, op);
        }
        Index::All { at } => (*at, false),
        Index::Keys { at } => (*at, true),
    };
    if let Some(ParamOp::Transform(how @ ('A' | 'K' | 'k'))) = op
        && array
        && !keys
    {
        let flags = env.attributes(name);
        let elements = env.elements(name);
        let words: Vec<String> = match how {
            // bash makes `"${a[@]@A}"` the words `declare`, `-a` and `a=(...)`.
            'A' if at => (array_declaration(&flags, name, &elements).splitn(3, ' '))
                .map(str::to_owned)
                .collect(),
            'A' => vec![array_declaration(&flags, name, &elements)],
            'K' => Some(keyed(&elements, false))
                .filter(|k| !k.is_empty())
                .into_iter()
                .collect(),
            _ => (elements.iter())
                .flat_map(|(i, v)| [i.to_string(), v.to_owned()])
                .collect(),
        };
        push_list(f, &words, quoted, at);
        return Ok(());
    }
    let elements = env.elements(name).to_vec();
    let values: Vec<String> = if keys {
        elements.iter().map(|(k, _)| k.to_string()).collect()
    } else {
        elements.iter().map(|(_, v)| v.clone()).collect()
    };
    let Some(op) = op else {
        push_list(f, &values, quoted, at);
        return Ok(());
    };
    match op {
        ParamOp::Length => f.push(&values.len().to_string(), quoted),
        ParamOp::Slice { offset, length } => {
            let end = elements.last().map_or(0, |(last, _)| *last as i64 + 1);
            let start = arithmetic(offset, env)?;
            let start = if start < 0 { end + start } else { start };
            let count = match length {
                Some(w) => arithmetic(w, env)?,
                None => i64::MAX,
            };
            if count < 0 {
                return Err(Error::Fatal(format!("{count}: substring expression < 0")));
            }
            let taken: Vec<String> = if start < 0 {
                Vec::new()
            } else {
                (elements.iter())
                    .filter(|(k, _)| *k as i64 >= start)
                    .take(usize::try_from(count).unwrap_or(usize::MAX))
                    .map(|(_, v)| v.clone())
                    .collect()
            };
            push_list(f, &taken, quoted, at);
        }
        ParamOp::Default { word, colon } | ParamOp::Alternative { word, colon } => {
            let null = values.is_empty() || (*colon && values.concat().is_empty());
            let default = matches!(op, ParamOp::Default { .. });
            if null == default {
                if quoted {
                    f.push("", true);
                }
                expand_word(word, env, f, quoted, false)?;
            } else if default {
                push_list(f, &values, quoted, at);
            }
        }
        ParamOp::Assign { .. } | ParamOp::Error { .. } => {
            return Err(Error::Fatal(format!("{name}[@]: bad array subscript")));
        }
        _ => {
            // The other operators apply to each element.
            let mut each = Vec::with_capacity(values.len());
            for v in values {
                let mut one = Fields::new(false, None);
                apply(&mut one, env, name, Some(v), true, Some(op))?;
                each.push(one.into_text());
            }
            push_list(f, &each, quoted, at);
        }
    }
    Ok(())
}

/// `op` applied to a parameter's `value` (`None`: unset).
fn apply(
    f: &mut Fields,
    env: &mut dyn Env,
    name: &str,
    value: Option<String>,
    quoted: bool,
    op: Option<&ParamOp>,
) -> Result<(), Error> {
    // A quoted expansion makes a field even when it comes to nothing (`"${X:+y}"`).
    if quoted {
        f.push("", true);
    }
    let tests_unset = matches!(
        op,
        Some(
            ParamOp::Default { .. }
                | ParamOp::Assign { .. }
                | ParamOp::Alternative { .. }
                | ParamOp::Error { .. }
        )
    );
    if value.is_none() && !tests_unset && env.nounset() {
        return Err(Error::Unset(format!("{name}: unbound variable")));
    }
    let null = |colon: bool| value.is_none() || (colon && value.as_deref() == Some(""));
    let v = value.clone().unwrap_or_default();
    let Some(op) = op else {
        push_value(f, &v, quoted);
        return Ok(());
    };
    match op {
        ParamOp::Length => f.push(&v.chars().count().to_string(), quoted),
        ParamOp::Case { upper, all } => {
            let change = |s: &str| {
                if *upper {
                    s.to_uppercase()
                } else {
                    s.to_lowercase()
                }
            };
            let out = match v.chars().next() {
                _ if *all => change(&v),
                Some(first) => change(&first.to_string()) + &v[first.len_utf8()..],
                None => String::new(),
            };
            push_value(f, &out, quoted);
        }
        ParamOp::Transform(how) => {
            push_value(f, &transformed(*how, name, value.as_deref(), env), quoted);
        }
        ParamOp::Default { word, colon } => {
            if null(*colon) {
                expand_word(word, env, f, quoted, false)?;
            } else {
                push_value(f, &v, quoted);
            }
        }
        ParamOp::Assign { word, colon } => {
            if null(*colon) {
                if !super::lexer::is_name(name) && !name.ends_with(']') {
                    return Err(Error::Fatal(format!("${name}: cannot assign in this way")));
                }
                let new = text(word, env)?;
                env.assign(name, new.clone())?;
                push_value(f, &new, quoted);
            } else {
                push_value(f, &v, quoted);
            }
        }
        ParamOp::Alternative { word, colon } => {
            if !null(*colon) {
                expand_word(word, env, f, quoted, false)?;
            }
        }
        ParamOp::Error { word, colon } => {
            if null(*colon) {
                let msg = text(word, env)?;
                let msg = if msg.is_empty() {
                    "parameter null or not set".to_string()
                } else {
                    msg
                };
                return Err(Error::Unset(format!("{name}: {msg}")));
            }
            push_value(f, &v, quoted);
        }
        ParamOp::RemovePrefix { pattern, longest } => {
            let p = Pattern::of(pattern, env)?;
            let out = p.remove_prefix(&v, *longest, env)?;
            push_value(f, out, quoted);
        }
        ParamOp::RemoveSuffix { pattern, longest } => {
            let p = Pattern::of(pattern, env)?;
            let out = p.remove_suffix(&v, *longest, env)?;
            push_value(f, out, quoted);
        }
        ParamOp::Replace {
            pattern,
            with,
            all,
            anchor,
        } => {
            let p = Pattern::of(pattern, env)?;
            let with = text(with, env)?;
            let out = p.replace(&v, &with, *all, *anchor, env)?;
            push_value(f, &out, quoted);
        }
        ParamOp::Slice { offset, length } => {
            let chars: Vec<char> = v.chars().collect();
            let range = slice_range(chars.len(), offset, length.as_ref(), env)?;
            let out: String = chars[range].iter().collect();
            push_value(f, &out, quoted);
        }
    }
    Ok(())
}

/// The range `${NAME:offset:length}` takes of `len` items (negative offsets count from the
/// end; a negative length is an end counted from the end).
fn slice_range(
    len: usize,
    offset: &Word,
    length: Option<&Word>,
    env: &mut dyn Env,
) -> Result<std::ops::Range<usize>, Error> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let offset = arithmetic(offset, env)?;
    let start = if offset < 0 { len + offset } else { offset };
    if start < 0 || start > len {
        return Ok(0..0);
    }
    let end = match length {
        None => len,
        Some(w) => {
            let n = arithmetic(w, env)?;
            let end = if n < 0 {
                len + n
            } else {
                start.saturating_add(n)
            };
            if end < start {
                return Err(Error::Fatal(format!("{n}: substring expression < 0")));
            }
            end.min(len)
        }
    };
    Ok(start as usize..end as usize)
}

/// A pattern of `${NAME#pattern}` and friends: a plain string when it has no pattern
/// characters (the common, fast case), else a glob.
enum Pattern {
    Literal(String),
    Glob(Glob),
}

impl Pattern {
    fn of(word: &Word, env: &mut dyn Env) -> Result<Self, Error> {
        let (text, literal) = pattern_text(word, env)?;
        Ok(if literal {
            Self::Literal(unescape(&text))
        } else {
            Self::Glob(Glob::new(&text, false))
        })
    }

    /// Whether `s` matches the whole pattern.
    fn matches(&self, s: &str) -> bool {
        match self {
            Self::Literal(l) => l == s,
            Self::Glob(g) => g.matches(s),
        }
    }

    /// The cut points of `v`: every char boundary, in order.
    fn cuts(v: &str) -> Vec<usize> {
        v.char_indices().map(|(i, _)| i).chain([v.len()]).collect()
    }

    fn remove_prefix<'v>(
        &self,
        v: &'v str,
        longest: bool,
        env: &mut dyn Env,
    ) -> Result<&'v str, Error> {
        if let Self::Literal(l) = self {
            return Ok(v.strip_prefix(l.as_str()).unwrap_or(v));
        }
        let mut cuts = Self::cuts(v);
        if longest {
            cuts.reverse();
        }
        for (n, &i) in cuts.iter().enumerate() {
            if n % 256 == 255 {
                stopped(env)?;
            }
            if self.matches(&v[..i]) {
                return Ok(&v[i..]);
            }
        }
        Ok(v)
    }

    fn remove_suffix<'v>(
        &self,
        v: &'v str,
        longest: bool,
        env: &mut dyn Env,
    ) -> Result<&'v str, Error> {
        if let Self::Literal(l) = self {
            return Ok(v.strip_suffix(l.as_str()).unwrap_or(v));
        }
        let mut cuts = Self::cuts(v);
        if !longest {
            cuts.reverse();
        }
        for (n, &i) in cuts.iter().enumerate() {
            if n % 256 == 255 {
                stopped(env)?;
            }
            if self.matches(&v[i..]) {
                return Ok(&v[..i]);
            }
        }
        Ok(v)
    }

    fn replace(
        &self,
        v: &str,
        with: &str,
        all: bool,
        anchor: Option<char>,
        env: &mut dyn Env,
    ) -> Result<String, Error> {
        match anchor {
            Some('#') => {
                let rest = self.remove_prefix(v, true, env)?;
                return Ok(if rest.len() == v.len() && !self.matches("") {
                    v.to_string()
                } else {
                    format!("{with}{rest}")
                });
            }
            Some(_) => {
                let rest = self.remove_suffix(v, true, env)?;
                return Ok(if rest.len() == v.len() && !self.matches("") {
                    v.to_string()
                } else {
                    format!("{rest}{with}")
                });
            }
            None => {}
        }
        if let Self::Literal(l) = self {
            return Ok(match (l.is_empty(), all) {
                (true, _) => v.to_string(),
                (false, true) => v.replace(l.as_str(), with),
                (false, false) => v.replacen(l.as_str(), with, 1),
            });
        }
        let cuts = Self::cuts(v);
        let mut out = String::new();
        let mut k = 0;
        let mut tries = 0usize;
        while k < cuts.len() {
            let start = cuts[k];
            // The longest non-empty match starting here.
            let mut found = None;
            for e in (k + 1..cuts.len()).rev() {
                tries += 1;
                if tries.is_multiple_of(256) {
                    stopped(env)?;
                }
                if self.matches(&v[start..cuts[e]]) {
                    found = Some(e);
                    break;
                }
            }
            match found {
                Some(e) => {
                    out.push_str(with);
                    k = e;
                    if !all {
                        out.push_str(&v[cuts[k]..]);
                        return Ok(out);
                    }
                }
                None => {
                    if let Some(&next) = cuts.get(k + 1) {
                        out.push_str(&v[start..next]);
                    }
                    k += 1;
                }
            }
        }
        Ok(out)
    }
}

/// A backslash-escaped pattern without its backslashes.
fn unescape(p: &str) -> String {
    let mut out = String::new();
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// A word as a glob pattern (quoted characters escaped) and whether it is just literal text.
fn pattern_text(word: &Word, env: &mut dyn Env) -> Result<(String, bool), Error> {
    let mut f = Fields::new(false, None);
    expand_word(word, env, &mut f, false, true)?;
    f.finish();
    let mut text = String::new();
    let mut literal = true;
    for (n, field) in f.done.iter().enumerate() {
        if n > 0 {
            text.push(' ');
        }
        for ch in field {
            let special = matches!(ch.c, '*' | '?' | '[' | ']' | '\\');
            if ch.quoted && special {
                text.push('\\');
            } else if special {
                literal = false;
            }
            text.push(ch.c);
        }
    }
    Ok((text, literal))
}

/// A word as a shell pattern for [`Glob`] (`case`, `[[ x == pattern ]]`): quoted characters
/// are literal.
///
/// # Errors
/// As [`fields`].
pub(crate) fn pattern(word: &Word, env: &mut dyn Env) -> Result<String, Error> {
    Ok(pattern_text(word, env)?.0)
}

/// A word as a regular expression (`[[ x =~ regex ]]`): quoted characters are literal.
///
/// # Errors
/// As [`fields`].
pub(crate) fn regex(word: &Word, env: &mut dyn Env) -> Result<String, Error> {
    let mut f = Fields::new(false, None);
    expand_word(word, env, &mut f, false, true)?;
    f.finish();
    let mut text = String::new();
    for field in &f.done {
        for ch in field {
            if ch.quoted {
                text.push_str(&regex::escape(ch.c.encode_utf8(&mut [0; 4])));
            } else {
                text.push(ch.c);
            }
        }
    }
    Ok(text)
}

/// Expands a word into arguments: braces, parameters, substitutions, splitting, globbing.
///
/// # Errors
/// See [`Error`].
pub(crate) fn fields(word: &Word, env: &mut dyn Env) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    match braces(word, env)? {
        Some(words) => {
            for w in &words {
                expand_fields(w, env, &mut out)?;
            }
        }
        None => expand_fields(word, env, &mut out)?,
    }
    Ok(out)
}

fn expand_fields(word: &Word, env: &mut dyn Env, out: &mut Vec<String>) -> Result<(), Error> {
    let ifs = env.param("IFS");
    let mut f = Fields::new(true, ifs);
    expand_word(word, env, &mut f, false, true)?;
    f.finish();
    for field in f.done {
        if has_glob(&field) {
            let matches = glob(&field, env);
            if !matches.is_empty() {
                out.extend(matches);
                continue;
            }
            match env.unmatched() {
                Unmatched::Literal => {}
                Unmatched::Nothing => continue,
                Unmatched::Fail => {
                    return Err(Error::Failed(format!("no match: {}", text_of(&field))));
                }
            }
        }
        out.push(text_of(&field));
    }
    Ok(())
}

/// Expands a word into one string without splitting or globbing (assignments, here-documents,
/// `case` words).
///
/// # Errors
/// See [`Error`].
pub(crate) fn text(word: &Word, env: &mut dyn Env) -> Result<String, Error> {
    let ifs = env.param("IFS");
    let mut f = Fields::new(false, ifs);
    expand_word(word, env, &mut f, false, true)?;
    Ok(f.into_text())
}

/// One piece of a word during brace expansion: an unquoted character (where braces, commas and
/// `..` count) or any other part, kept whole.
#[derive(Debug, Clone, Copy)]
enum Unit<'w> {
    Char(char),
    Part(&'w Part),
}

/// The words brace expansion makes of `word`, or `None` when it has no unquoted brace.
fn braces(word: &Word, env: &mut dyn Env) -> Result<Option<Vec<Word>>, Error> {
    let unquoted_has = |c: char| {
        word.parts
            .iter()
            .any(|p| matches!(p, Part::Lit { text, quoted: false } if text.contains(c)))
    };
    if !(unquoted_has('{') && unquoted_has('}')) {
        return Ok(None);
    }
    let mut units = Vec::new();
    for p in &word.parts {
        match p {
            Part::Lit {
                text,
                quoted: false,
            } => units.extend(text.chars().map(Unit::Char)),
            other => units.push(Unit::Part(other)),
        }
    }
    // Depth first, first alternative first: the words come out in bash's order, and a word
    // with many groups never recurses.
    let mut stack = vec![units];
    let mut out = Vec::new();
    let mut budget = 0usize;
    while let Some(units) = stack.pop() {
        if out.len() % 1024 == 1023 {
            stopped(env)?;
        }
        let Some((open, close, alternatives)) = brace_group(&units)? else {
            out.push(to_word(&units));
            if out.len() > MAX_BRACE_WORDS {
                return Err(too_many_words());
            }
            continue;
        };
        for alt in alternatives.into_iter().rev() {
            let mut w = Vec::with_capacity(units.len() + alt.len());
            w.extend_from_slice(&units[..open]);
            w.extend(alt);
            w.extend_from_slice(&units[close + 1..]);
            budget += w.len();
            if budget > MAX_EXPANSION {
                return Err(Error::TooLong);
            }
            stack.push(w);
        }
    }
    Ok(Some(out))
}

fn too_many_words() -> Error {
    Error::Failed(format!(
        "brace expansion: more than {MAX_BRACE_WORDS} words"
    ))
}

fn to_word(units: &[Unit]) -> Word {
    let mut w = Word::default();
    for u in units {
        match u {
            Unit::Char(c) => w.push_lit(c.encode_utf8(&mut [0; 4]), false),
            Unit::Part(p) => w.parts.push((*p).clone()),
        }
    }
    w
}

type Alternatives<'w> = Vec<Vec<Unit<'w>>>;

/// The leftmost brace group that expands (`{a,b}` with a comma at its level, or a sequence
/// `{x..y[..step]}`): where it opens and closes and what it stands for.
fn brace_group<'w>(units: &[Unit<'w>]) -> Result<Option<(usize, usize, Alternatives<'w>)>, Error> {
    let mut close_of = vec![usize::MAX; units.len()];
    let mut comma_owner = Vec::new();
    let mut open = Vec::new();
    for (i, u) in units.iter().enumerate() {
        match u {
            Unit::Char('{') => open.push(i),
            Unit::Char('}') => {
                if let Some(o) = open.pop() {
                    close_of[o] = i;
                }
            }
            Unit::Char(',') => {
                if let Some(&o) = open.last() {
                    comma_owner.push((i, o));
                }
            }
            _ => {}
        }
    }
    let mut has_comma = vec![false; units.len()];
    for &(_, o) in &comma_owner {
        has_comma[o] = true;
    }
    for o in 0..units.len() {
        let c = close_of[o];
        if c == usize::MAX {
            continue;
        }
        if has_comma[o] {
            let mut alts = Vec::new();
            let mut from = o + 1;
            for &(i, owner) in &comma_owner {
                if owner == o && i < c {
                    alts.push(units[from..i].to_vec());
                    from = i + 1;
                }
            }
            alts.push(units[from..c].to_vec());
            return Ok(Some((o, c, alts)));
        }
        let inner: Option<String> = units[o + 1..c]
            .iter()
            .map(|u| match u {
                Unit::Char(ch) => Some(*ch),
                Unit::Part(_) => None,
            })
            .collect();
        if let Some(words) = inner.as_deref().map(sequence).transpose()?.flatten() {
            let alts = words
                .into_iter()
                .map(|w| w.chars().map(Unit::Char).collect())
                .collect();
            return Ok(Some((o, c, alts)));
        }
    }
    Ok(None)
}

/// `x..y` or `x..y..step` of numbers (zero-padded when an end is) or single letters.
fn sequence(inner: &str) -> Result<Option<Vec<String>>, Error> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (start, end, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return Ok(None),
    };
    let step = match step.map(str::parse::<i64>) {
        None => 1,
        Some(Ok(s)) => s.unsigned_abs().max(1),
        Some(Err(_)) => return Ok(None),
    };
    let count = |a: i64, b: i64| (a.abs_diff(b) / step).saturating_add(1);
    if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
        if count(a, b) > MAX_BRACE_WORDS as u64 {
            return Err(too_many_words());
        }
        let padded = |s: &str| {
            s.trim_start_matches('-').len() > 1 && s.trim_start_matches('-').starts_with('0')
        };
        let width = if padded(start) || padded(end) {
            start.len().max(end.len())
        } else {
            0
        };
        let up = a <= b;
        let (mut v, end, step) = (i128::from(a), i128::from(b), i128::from(step));
        let mut out = Vec::new();
        while if up { v <= end } else { v >= end } {
            out.push(format!("{v:0width$}"));
            v += if up { step } else { -step };
        }
        return Ok(Some(out));
    }
    let letter = |s: &str| {
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as u8),
            _ => None,
        }
    };
    let (Some(a), Some(b)) = (letter(start), letter(end)) else {
        return Ok(None);
    };
    let up = a <= b;
    let (mut v, end) = (i64::from(a), i64::from(b));
    let step = i64::try_from(step).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    while if up { v <= end } else { v >= end } {
        out.push(char::from(v as u8).to_string());
        v = if up {
            v.saturating_add(step)
        } else {
            v.saturating_sub(step)
        };
    }
    Ok(Some(out))
}

/// Whether unquoted `*`, `?` or `[` make these characters a pattern.
fn has_glob(chs: &[Ch]) -> bool {
    chs.iter()
        .any(|ch| !ch.quoted && matches!(ch.c, '*' | '?' | '['))
}

fn text_of(chs: &[Ch]) -> String {
    chs.iter().map(|ch| ch.c).collect()
}

/// Pathname expansion of one field, sorted; empty when nothing matches. The field goes to
/// [`Env::expand_pathname`] as a pattern whose quoted characters are escaped with a backslash
/// (`/` always separates components, quoted or not).
fn glob(field: &[Ch], env: &mut dyn Env) -> Vec<String> {
    let mut pattern = String::with_capacity(field.len() * 2);
    for ch in field {
        if ch.c != '/' && (ch.quoted || ch.c == '\\') {
            pattern.push('\\');
        }
        pattern.push(ch.c);
    }
    env.expand_pathname(&pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(inner: &str) -> Option<String> {
        sequence(inner).unwrap().map(|words| words.join(" "))
    }

    /// The brace expansion of an unquoted word, as text.
    fn braced(text: &str) -> String {
        let word = Word::lit(text);
        let mut units: Vec<Unit> = Vec::new();
        if let Part::Lit { text, .. } = &word.parts[0] {
            units.extend(text.chars().map(Unit::Char));
        }
        let mut out = Vec::new();
        let mut stack = vec![units];
        while let Some(u) = stack.pop() {
            match brace_group(&u).unwrap() {
                None => out.push(text_of_units(&u)),
                Some((open, close, alts)) => {
                    for alt in alts.into_iter().rev() {
                        let mut w = u[..open].to_vec();
                        w.extend(alt);
                        w.extend_from_slice(&u[close + 1..]);
                        stack.push(w);
                    }
                }
            }
        }
        out.join(" ")
    }

    fn text_of_units(units: &[Unit]) -> String {
        units
            .iter()
            .map(|u| match u {
                Unit::Char(c) => *c,
                Unit::Part(_) => '?',
            })
            .collect()
    }

    #[test]
    fn sequences() {
        assert_eq!(seq("1..3").as_deref(), Some("1 2 3"));
        assert_eq!(seq("3..1").as_deref(), Some("3 2 1"));
        assert_eq!(seq("-1..1").as_deref(), Some("-1 0 1"));
        assert_eq!(seq("01..3").as_deref(), Some("01 02 03"));
        assert_eq!(seq("1..10..4").as_deref(), Some("1 5 9"));
        assert_eq!(seq("1..10..-4").as_deref(), Some("1 5 9"));
        assert_eq!(seq("a..c").as_deref(), Some("a b c"));
        assert_eq!(seq("C..A").as_deref(), Some("C B A"));
        assert_eq!(seq("a..e..2").as_deref(), Some("a c e"));
        for not_a_sequence in ["1..", "..2", "a..1", "1..2..x", "ab..c", "1..2..3..4", "x"] {
            assert_eq!(seq(not_a_sequence), None, "{not_a_sequence}");
        }
        assert_eq!(sequence("1..1000000"), Err(too_many_words()));
        assert_eq!(
            sequence("-9223372036854775808..9223372036854775807"),
            Err(too_many_words())
        );
    }

    #[test]
    fn brace_groups() {
        assert_eq!(braced("a{b,c}d"), "abd acd");
        assert_eq!(braced("{a,b}{1,2}"), "a1 a2 b1 b2");
        assert_eq!(braced("{a,{b,c}d}"), "a bd cd");
        assert_eq!(braced("{a{b,c}}"), "{ab} {ac}");
        assert_eq!(braced("{a,{b}"), "{a,{b}");
        assert_eq!(braced("{a,b"), "{a,b");
        assert_eq!(braced("{}"), "{}");
        assert_eq!(braced("{x}"), "{x}");
        assert_eq!(braced("{,a}"), " a");
        assert_eq!(braced("x{1..3}"), "x1 x2 x3");
    }
}
