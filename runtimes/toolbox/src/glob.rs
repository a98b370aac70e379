//! Shell wildcard patterns (`*`, `?`, `[...]`, `\`), as fnmatch(3) matches them: for find's
//! `-name`/`-path` and grep's `--include`/`--exclude`.

/// Whether `name` matches `pattern`; `fold` ignores ASCII case (find's `-iname`).
pub fn matches(pattern: &str, name: &str, fold: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let eq = |a: char, b: char| {
        if fold {
            a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    };
    // Iterative matching with one backtrack point for the last `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => match class(&p[pi..], n[ni], fold) {
                Some((true, used)) => Some(pi + used),
                Some((false, _)) => None,
                None if eq('[', n[ni]) => Some(pi + 1),
                None => None,
            },
            Some('\\') if pi + 1 < p.len() => eq(p[pi + 1], n[ni]).then_some(pi + 2),
            Some(&c) => eq(c, n[ni]).then_some(pi + 1),
            None => None,
        };
        match step {
            Some(next) => {
                pi = next;
                ni += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A bracket expression at `p[0] == '['` against `c`: whether it matches and how many pattern
/// characters it took; `None` when it is not closed (then `[` is literal).
fn class(p: &[char], c: char, fold: bool) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    let lower = |x: char| if fold { x.to_ascii_lowercase() } else { x };
    let c = lower(c);
    loop {
        let &x = p.get(i)?;
        if x == ']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if x == '[' && p.get(i + 1) == Some(&':') {
            let rest: String = p[i + 2..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let name = &rest[..end];
                hit |= match name {
                    "alpha" => c.is_alphabetic(),
                    "digit" => c.is_ascii_digit(),
                    "alnum" => c.is_alphanumeric(),
                    "upper" => c.is_uppercase(),
                    "lower" => c.is_lowercase(),
                    "space" => c.is_whitespace(),
                    "punct" => c.is_ascii_punctuation(),
                    "xdigit" => c.is_ascii_hexdigit(),
                    _ => false,
                };
                i += 2 + name.chars().count() + 2;
                continue;
            }
        }
        let x = if x == '\\' && i + 1 < p.len() {
            i += 1;
            p[i]
        } else {
            x
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            let hi = p[i + 2];
            hit |= lower(x) <= c && c <= lower(hi);
            i += 3;
        } else {
            hit |= lower(x) == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards() {
        assert!(matches("*.py", "a.py", false));
        assert!(!matches("*.py", "a.pyc", false));
        assert!(matches("a?c", "abc", false));
        assert!(matches("[a-c]x", "bx", false));
        assert!(matches("[!a-c]x", "dx", false));
        assert!(matches("*.TXT", "a.txt", true));
        assert!(matches("*", ".hidden", false));
        assert!(matches("a*b*c", "axxbyyc", false));
    }
}
