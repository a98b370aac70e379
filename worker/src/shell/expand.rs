//! Word expansion: parameters, tilde, field splitting of unquoted expansions, and pathname
//! globbing against the confined filesystem; plus the glob [`Pattern`] that `find -name` shares.
//!
//! Globs only ever list directories through [`Fs`], so a pattern cannot reveal anything outside
//! the mounts: an inaccessible directory simply matches nothing and the word stays literal, as in
//! bash when nothing matches.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::lexer::{Part, Word};
use super::path::{Access, Fs, join};

/// Most paths one glob expands to: bounds memory and time for `/*/*/*/*`-style patterns.
const MAX_GLOB_MATCHES: usize = 100_000;

/// Most bytes a command's words may expand to, together: a word made of thousands of `$A`, or
/// `A=$A$A` repeated, must not exhaust the worker's memory.
pub(crate) const MAX_EXPANSION: usize = 16 << 20;

/// An expansion went over [`MAX_EXPANSION`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expansion too long (over {} MiB)", MAX_EXPANSION >> 20)]
pub(crate) struct TooLong;

/// What expansion reads.
pub(crate) struct Scope<'a> {
    pub vars: &'a BTreeMap<String, String>,
    /// `$0`, `$1`, ...
    pub positional: &'a [String],
    pub status: i32,
    pub fs: &'a Fs,
    pub cwd: &'a str,
    /// Globbing stops listing directories once the deadline passed or the call was cancelled.
    pub deadline: Instant,
    pub cancel: &'a AtomicBool,
}

/// A character and whether quoting made it literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ch {
    pub c: char,
    pub quoted: bool,
}

impl Scope<'_> {
    /// The value of a parameter, `None` when unset.
    fn param(&self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.status.to_string()),
            // There is no process to name: a fixed, harmless value for `tmp.$$` file names.
            "$" => Some("1".into()),
            "#" => Some(self.positional.len().saturating_sub(1).to_string()),
            "@" | "*" => Some(self.positional.get(1..).unwrap_or_default().join(" ")),
            "!" | "-" => Some(String::new()),
            n if n.chars().all(|c| c.is_ascii_digit()) => {
                let i: usize = n.parse().ok()?;
                if i == 0 {
                    Some(
                        self.positional
                            .first()
                            .cloned()
                            .unwrap_or_else(|| "sh".into()),
                    )
                } else {
                    self.positional.get(i).cloned()
                }
            }
            n => self.vars.get(n).cloned(),
        }
    }

    fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    fn value(&self, name: &str, default: Option<&super::lexer::Default>) -> Option<String> {
        let v = self.param(name);
        match default {
            Some(d) if v.is_none() || (d.when_empty && v.as_deref() == Some("")) => {
                Some(d.text.clone())
            }
            _ => v,
        }
    }
}

#[derive(Default)]
struct Fields {
    done: Vec<Vec<Ch>>,
    cur: Vec<Ch>,
    /// The current field exists even if empty (`""` makes an empty argument).
    started: bool,
    /// Bytes expanded so far, and whether that went over the limit (the rest is dropped).
    size: usize,
    overflow: bool,
}

impl Fields {
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
        }
    }

    /// An unquoted expansion: split on blanks and newlines.
    fn push_split(&mut self, s: &str) {
        if !self.room(s) {
            return;
        }
        for c in s.chars() {
            if matches!(c, ' ' | '\t' | '\n') {
                self.finish();
            } else {
                self.cur.push(Ch { c, quoted: false });
                self.started = true;
            }
        }
    }

    fn finish(&mut self) {
        if self.started {
            self.done.push(std::mem::take(&mut self.cur));
            self.started = false;
        }
    }
}

fn expand_parts(word: &Word, scope: &Scope) -> Result<Vec<Vec<Ch>>, TooLong> {
    let mut f = Fields::default();
    for (i, part) in word.parts.iter().enumerate() {
        match part {
            Part::Lit { text, quoted } => {
                // `~` and `~/...` at the start of a word are $HOME.
                if i == 0 && !quoted && (text == "~" || text.starts_with("~/")) {
                    let home = scope.vars.get("HOME").map_or("/app", String::as_str);
                    f.push(home, true);
                    f.push(&text[1..], false);
                } else {
                    f.push(text, *quoted);
                }
            }
            Part::Param {
                name,
                quoted: true,
                default: None,
            } if name == "@" => {
                // "$@": one field per positional parameter.
                for (n, arg) in scope.positional.iter().skip(1).enumerate() {
                    if n > 0 {
                        f.done.push(std::mem::take(&mut f.cur));
                    }
                    f.push(arg, true);
                }
            }
            Part::Param {
                name,
                quoted,
                default,
            } => {
                let value = scope.value(name, default.as_ref()).unwrap_or_default();
                if *quoted {
                    f.push(&value, true);
                } else {
                    f.push_split(&value);
                }
            }
        }
    }
    f.finish();
    if f.overflow {
        return Err(TooLong);
    }
    Ok(f.done)
}

/// Expands a word into arguments: parameters, splitting of unquoted expansions, globbing.
///
/// # Errors
/// [`TooLong`] past [`MAX_EXPANSION`].
pub(crate) fn fields(word: &Word, scope: &Scope) -> Result<Vec<String>, TooLong> {
    let mut out = Vec::new();
    for field in expand_parts(word, scope)? {
        if field
            .iter()
            .any(|ch| !ch.quoted && matches!(ch.c, '*' | '?' | '['))
        {
            let matches = glob(&field, scope);
            if !matches.is_empty() {
                out.extend(matches);
                continue;
            }
        }
        out.push(field.iter().map(|ch| ch.c).collect());
    }
    Ok(out)
}

/// Expands a word into one string without splitting or globbing (assignments, here-documents).
///
/// # Errors
/// [`TooLong`] past [`MAX_EXPANSION`].
pub(crate) fn text(word: &Word, scope: &Scope) -> Result<String, TooLong> {
    let mut out = String::new();
    for part in &word.parts {
        match part {
            Part::Lit { text, .. } => out.push_str(text),
            Part::Param { name, default, .. } => {
                out.push_str(&scope.value(name, default.as_ref()).unwrap_or_default());
            }
        }
        if out.len() > MAX_EXPANSION {
            return Err(TooLong);
        }
    }
    Ok(out)
}

/// Pathname expansion of one field; empty when nothing matches.
fn glob(field: &[Ch], scope: &Scope) -> Vec<String> {
    let absolute = field.first().is_some_and(|ch| ch.c == '/');
    let trailing_slash = field.last().is_some_and(|ch| ch.c == '/');
    let comps: Vec<&[Ch]> = field
        .split(|ch| ch.c == '/')
        .filter(|c| !c.is_empty())
        .collect();
    let is_glob = |comp: &[Ch]| {
        comp.iter()
            .any(|ch| !ch.quoted && matches!(ch.c, '*' | '?' | '['))
    };
    let Some(last_glob) = comps.iter().rposition(|c| is_glob(c)) else {
        return Vec::new();
    };
    let mut cands = vec![if absolute {
        "/".to_string()
    } else {
        String::new()
    }];
    for (i, comp) in comps.iter().enumerate() {
        let mut next = Vec::new();
        if is_glob(comp) {
            let pattern = Pattern::from_chars(comp);
            let dotted = comp.first().is_some_and(|ch| ch.c == '.');
            for cand in &cands {
                if scope.stopped() {
                    return Vec::new();
                }
                let dir = if cand.is_empty() { "." } else { cand };
                let Ok(node) = scope.fs.resolve(scope.cwd, dir, Access::Read, true) else {
                    continue;
                };
                let Ok(entries) = scope.fs.list(&node) else {
                    continue;
                };
                for e in entries {
                    if (dotted || !e.name.starts_with('.')) && pattern.matches(&e.name) {
                        next.push(join(cand, &e.name));
                    }
                }
                if next.len() > MAX_GLOB_MATCHES {
                    break;
                }
            }
        } else {
            let lit: String = comp.iter().map(|ch| ch.c).collect();
            next = cands.iter().map(|c| join(c, &lit)).collect();
        }
        next.truncate(MAX_GLOB_MATCHES);
        cands = next;
        if i >= last_glob && cands.is_empty() {
            break;
        }
    }
    let exists = |p: &str, dir: bool| {
        scope
            .fs
            .resolve(scope.cwd, p, Access::Read, !dir)
            .ok()
            .and_then(|r| {
                if dir {
                    scope.fs.stat(&r).ok()
                } else {
                    scope.fs.lstat(&r).ok()
                }
            })
            .is_some_and(|m| !dir || m.is_dir())
    };
    let mut out: Vec<String> = if last_glob + 1 < comps.len() || trailing_slash {
        cands
            .into_iter()
            .filter(|p| exists(p, trailing_slash))
            .map(|p| if trailing_slash { format!("{p}/") } else { p })
            .collect()
    } else {
        cands
    };
    out.sort();
    out
}

/// One element of a compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[...]`
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
        named: Vec<String>,
    },
}

/// A shell glob (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`, `[[:digit:]]`) matching one path component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    items: Vec<Item>,
}

fn named_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        _ => false,
    }
}

impl Pattern {
    /// Compiles a pattern where quoted characters are literal.
    pub(crate) fn from_chars(chs: &[Ch]) -> Self {
        let mut items = Vec::new();
        let mut i = 0;
        while i < chs.len() {
            let ch = chs[i];
            if ch.quoted {
                items.push(Item::Char(ch.c));
            } else {
                match ch.c {
                    '*' => {
                        if items.last() != Some(&Item::Star) {
                            items.push(Item::Star);
                        }
                    }
                    '?' => items.push(Item::Any),
                    '[' => match Self::class(&chs[i + 1..]) {
                        Some((item, used)) => {
                            items.push(item);
                            i += used;
                        }
                        None => items.push(Item::Char('[')),
                    },
                    c => items.push(Item::Char(c)),
                }
            }
            i += 1;
        }
        Self { items }
    }

    /// Compiles a pattern written as text, where a backslash makes the next character literal
    /// (`find -name 'a\*'`).
    pub(crate) fn parse(s: &str) -> Self {
        let mut chs = Vec::new();
        let mut it = s.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                if let Some(n) = it.next() {
                    chs.push(Ch { c: n, quoted: true });
                    continue;
                }
            }
            chs.push(Ch { c, quoted: false });
        }
        Self::from_chars(&chs)
    }

    /// Parses the inside of `[...]`; returns the item and how many chars it used (with `]`).
    fn class(chs: &[Ch]) -> Option<(Item, usize)> {
        let mut i = 0;
        let negated = matches!(
            chs.first(),
            Some(Ch {
                c: '!' | '^',
                quoted: false
            })
        );
        if negated {
            i += 1;
        }
        let mut ranges = Vec::new();
        let mut named = Vec::new();
        let mut first = true;
        loop {
            let ch = *chs.get(i)?;
            if ch.c == ']' && !ch.quoted && !first {
                return Some((
                    Item::Class {
                        negated,
                        ranges,
                        named,
                    },
                    i + 1,
                ));
            }
            first = false;
            if ch.c == '[' && !ch.quoted && chs.get(i + 1).map(|c| c.c) == Some(':') {
                let rest: String = chs[i + 2..].iter().map(|c| c.c).collect();
                if let Some(end) = rest.find(":]") {
                    named.push(rest[..end].to_string());
                    i += 2 + rest[..end].chars().count() + 2;
                    continue;
                }
            }
            if chs.get(i + 1).is_some_and(|c| c.c == '-')
                && chs.get(i + 2).is_some_and(|c| c.c != ']')
            {
                ranges.push((ch.c, chs[i + 2].c));
                i += 3;
            } else {
                ranges.push((ch.c, ch.c));
                i += 1;
            }
        }
    }

    fn one(item: &Item, c: char) -> bool {
        match item {
            Item::Char(x) => *x == c,
            Item::Any => true,
            Item::Star => false,
            Item::Class {
                negated,
                ranges,
                named,
            } => {
                let hit = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
                    || named.iter().any(|n| named_class(n, c));
                hit != *negated
            }
        }
    }

    /// Whether the whole of `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        let s: Vec<char> = name.chars().collect();
        let (mut p, mut i) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while i < s.len() {
            if let Some(item) = self.items.get(p) {
                if *item == Item::Star {
                    star = Some((p, i));
                    p += 1;
                    continue;
                }
                if Self::one(item, s[i]) {
                    p += 1;
                    i += 1;
                    continue;
                }
            }
            match star {
                Some((sp, si)) => {
                    p = sp + 1;
                    i = si + 1;
                    star = Some((sp, si + 1));
                }
                None => return false,
            }
        }
        self.items[p..].iter().all(|it| *it == Item::Star)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::lexer::Tok;
    use crate::shell::lexer::tokenize;
    use crate::shell::{FsView, MountPoint};

    fn word(src: &str) -> Word {
        match tokenize(src).unwrap().toks.remove(0) {
            Tok::Word(w) => w,
            t => panic!("{t:?}"),
        }
    }

    struct Env {
        _dir: tempfile::TempDir,
        fs: Fs,
        vars: BTreeMap<String, String>,
        positional: Vec<String>,
    }

    fn env() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "a.txt",
            "b.txt",
            "c.py",
            ".hidden.txt",
            "sub/x.txt",
            "sub/y.py",
            "other/x.txt",
        ] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let fs = Fs::new(&FsView {
            mounts: vec![MountPoint {
                guest: "/app".into(),
                host: dir.path().into(),
                writable: true,
            }],
        });
        let vars = BTreeMap::from([
            ("A".to_string(), "x  y".to_string()),
            ("E".to_string(), String::new()),
            ("G".to_string(), "*.py".to_string()),
            ("HOME".to_string(), "/app".to_string()),
        ]);
        Env {
            _dir: dir,
            fs,
            vars,
            positional: vec!["sh".into(), "p 1".into(), "p2".into()],
        }
    }

    fn expand(e: &Env, src: &str) -> Vec<String> {
        let cancel = AtomicBool::new(false);
        let scope = Scope {
            vars: &e.vars,
            positional: &e.positional,
            status: 3,
            fs: &e.fs,
            cwd: "/app",
            deadline: Instant::now() + std::time::Duration::from_secs(60),
            cancel: &cancel,
        };
        fields(&word(src), &scope).unwrap()
    }

    #[test]
    fn parameters_and_splitting() {
        let e = env();
        assert_eq!(expand(&e, "$A"), ["x", "y"]);
        assert_eq!(expand(&e, "\"$A\""), ["x  y"]);
        assert_eq!(expand(&e, "a${A}b"), ["ax", "yb"]);
        assert!(expand(&e, "$E").is_empty());
        assert!(expand(&e, "$UNSET").is_empty());
        assert_eq!(expand(&e, "\"$E\""), [""]);
        assert_eq!(expand(&e, "''"), [""]);
        assert_eq!(expand(&e, "$?"), ["3"]);
        assert_eq!(expand(&e, "${E:-d}${E-u}"), ["d"]);
        assert_eq!(expand(&e, "${NO-u}"), ["u"]);
        assert_eq!(expand(&e, "$1"), ["p", "1"]);
        assert_eq!(expand(&e, "\"$@\""), ["p 1", "p2"]);
        assert_eq!(expand(&e, "$#"), ["2"]);
        assert_eq!(expand(&e, "~/x"), ["/app/x"]);
        assert_eq!(expand(&e, "'~'"), ["~"]);
    }

    #[test]
    fn globbing() {
        let e = env();
        assert_eq!(expand(&e, "*.txt"), ["a.txt", "b.txt"]);
        assert_eq!(expand(&e, ".*"), [".hidden.txt"]);
        assert_eq!(expand(&e, "[ab].txt"), ["a.txt", "b.txt"]);
        assert_eq!(expand(&e, "[!a].txt"), ["b.txt"]);
        assert_eq!(expand(&e, "?.py"), ["c.py"]);
        assert_eq!(expand(&e, "*/x.txt"), ["other/x.txt", "sub/x.txt"]);
        assert_eq!(expand(&e, "/app/s*/*.py"), ["/app/sub/y.py"]);
        assert_eq!(expand(&e, "*/"), ["other/", "sub/"]);
        assert_eq!(expand(&e, "/a*"), ["/app"]);
        assert_eq!(expand(&e, "$G"), ["c.py"]);
        assert_eq!(expand(&e, "\"*.txt\""), ["*.txt"]);
        assert_eq!(expand(&e, "\\*.txt"), ["*.txt"]);
        assert_eq!(expand(&e, "*.none"), ["*.none"]);
        assert_eq!(expand(&e, "/etc/*"), ["/etc/*"]);
        assert_eq!(expand(&e, "../../*"), ["../../app"]);
    }

    #[test]
    fn expansions_are_bounded() {
        let mut e = env();
        e.vars.insert("BIG".into(), "x".repeat(MAX_EXPANSION / 4));
        let cancel = AtomicBool::new(false);
        let scope = Scope {
            vars: &e.vars,
            positional: &e.positional,
            status: 0,
            fs: &e.fs,
            cwd: "/app",
            deadline: Instant::now() + std::time::Duration::from_secs(60),
            cancel: &cancel,
        };
        assert!(fields(&word("$BIG$BIG$BIG"), &scope).is_ok());
        assert_eq!(fields(&word("$BIG$BIG$BIG$BIG$BIG"), &scope), Err(TooLong));
        assert_eq!(
            fields(&word("\"$BIG$BIG$BIG$BIG$BIG\""), &scope),
            Err(TooLong)
        );
        assert_eq!(text(&word("$BIG$BIG$BIG$BIG$BIG"), &scope), Err(TooLong));
        cancel.store(true, Ordering::Relaxed);
        assert_eq!(fields(&word("*.txt"), &scope).unwrap(), ["*.txt"]);
    }

    #[test]
    fn patterns() {
        let p = Pattern::parse;
        assert!(p("*.rs").matches("main.rs"));
        assert!(!p("*.rs").matches("main.rsx"));
        assert!(p("a*b*c").matches("aXbYbc"));
        assert!(p("[a-c]?").matches("bz"));
        assert!(!p("[a-c]?").matches("dz"));
        assert!(p("[[:digit:]]x").matches("7x"));
        assert!(p("[]]").matches("]"));
        assert!(p("[^a]").matches("b"));
        assert!(p("a\\*").matches("a*"));
        assert!(!p("a\\*").matches("ab"));
        assert!(p("[ab").matches("[ab"));
        assert!(p("*").matches(""));
        assert!(p("héllo*").matches("héllo wörld"));
    }
}
