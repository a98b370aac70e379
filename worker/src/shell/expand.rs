//! Word expansion: parameters, tilde, field splitting of unquoted expansions, and pathname
//! globbing (patterns from [`super::glob`]) against the confined filesystem.
//!
//! Globs only ever list directories through [`Fs`], so a pattern cannot reveal anything outside
//! the mounts: an inaccessible directory simply matches nothing and the word stays literal, as in
//! bash when nothing matches.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::glob::Glob;
use super::lexer::{Fallback, Part, Word};
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

    fn value(&self, name: &str, fallback: Option<&Fallback>) -> Option<String> {
        let v = self.param(name);
        match fallback {
            Some(f) if v.is_none() || (f.when_empty && v.as_deref() == Some("")) => {
                Some(f.text.clone())
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
                fallback: None,
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
                fallback,
            } => {
                let value = scope.value(name, fallback.as_ref()).unwrap_or_default();
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
        if has_glob(&field) {
            let matches = glob(&field, scope);
            if !matches.is_empty() {
                out.extend(matches);
                continue;
            }
        }
        out.push(text_of(&field));
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
            Part::Param { name, fallback, .. } => {
                out.push_str(&scope.value(name, fallback.as_ref()).unwrap_or_default());
            }
        }
        if out.len() > MAX_EXPANSION {
            return Err(TooLong);
        }
    }
    Ok(out)
}

/// Whether unquoted `*`, `?` or `[` make these characters a pattern.
fn has_glob(chs: &[Ch]) -> bool {
    chs.iter()
        .any(|ch| !ch.quoted && matches!(ch.c, '*' | '?' | '['))
}

fn text_of(chs: &[Ch]) -> String {
    chs.iter().map(|ch| ch.c).collect()
}

/// Pathname expansion of one field, sorted; empty when nothing matches.
fn glob(field: &[Ch], scope: &Scope) -> Vec<String> {
    let comps: Vec<&[Ch]> = field
        .split(|ch| ch.c == '/')
        .filter(|c| !c.is_empty())
        .collect();
    let Some(last_glob) = comps.iter().rposition(|c| has_glob(c)) else {
        return Vec::new();
    };
    let absolute = field.first().is_some_and(|ch| ch.c == '/');
    let mut paths = vec![String::from(if absolute { "/" } else { "" })];
    for comp in &comps[..=last_glob] {
        paths = if has_glob(comp) {
            match matching_entries(&paths, comp, scope) {
                Some(found) => found,
                None => return Vec::new(),
            }
        } else {
            let name = text_of(comp);
            paths.iter().map(|p| join(p, &name)).collect()
        };
        if paths.is_empty() {
            return paths;
        }
    }
    // What follows the last pattern, and a trailing slash, keep only the paths that exist (as
    // directories, for the slash).
    let rest: Vec<String> = comps[last_glob + 1..].iter().map(|c| text_of(c)).collect();
    let rest = rest.join("/");
    let dir_only = field.last().is_some_and(|ch| ch.c == '/');
    if !rest.is_empty() || dir_only {
        paths = paths
            .into_iter()
            .map(|p| if rest.is_empty() { p } else { join(&p, &rest) })
            .filter(|p| {
                let found = scope.fs.resolve(scope.cwd, p, Access::Read, !dir_only);
                let meta = found.and_then(|r| {
                    if dir_only {
                        scope.fs.stat(&r)
                    } else {
                        scope.fs.lstat(&r)
                    }
                });
                meta.is_ok_and(|m| !dir_only || m.is_dir())
            })
            .map(|p| if dir_only { p + "/" } else { p })
            .collect();
    }
    paths.sort();
    paths
}

/// The entries of the directories `dirs` whose names `comp` matches (hidden ones only when it
/// starts with a dot), at most [`MAX_GLOB_MATCHES`]; `None` once the call is stopped.
fn matching_entries(dirs: &[String], comp: &[Ch], scope: &Scope) -> Option<Vec<String>> {
    // Quoted characters are literal in the pattern, and so is a backslash an expansion put there.
    let mut text = String::new();
    for ch in comp {
        if ch.quoted || ch.c == '\\' {
            text.push('\\');
        }
        text.push(ch.c);
    }
    // A pattern that cannot match anything (`[z-a]`) matches nothing.
    let pattern = Glob::new(&text, false).ok();
    let dotted = comp.first().is_some_and(|ch| ch.c == '.');
    let mut found = Vec::new();
    for dir in dirs {
        if scope.stopped() {
            return None;
        }
        let at = if dir.is_empty() { "." } else { dir };
        let listed = scope
            .fs
            .resolve(scope.cwd, at, Access::Read, true)
            .and_then(|node| scope.fs.list(&node));
        for e in listed.into_iter().flatten() {
            let hidden = e.name.starts_with('.') && !dotted;
            if !hidden && pattern.as_ref().is_some_and(|p| p.matches(&e.name)) {
                found.push(join(dir, &e.name));
            }
        }
        if found.len() >= MAX_GLOB_MATCHES {
            found.truncate(MAX_GLOB_MATCHES);
            break;
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::lexer::Tok;
    use crate::shell::lexer::tokenize;
    use crate::shell::{FsView, Mount};

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
            mounts: vec![Mount {
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
        assert_eq!(expand(&e, "[\"!\"a].txt"), ["a.txt"]);
        assert_eq!(expand(&e, "[a\"-\"c].*"), ["a.txt", "c.py"]);
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
}
