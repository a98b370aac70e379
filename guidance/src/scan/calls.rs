//! Calls with their dotted callee (`os.path.join`) and string literals with the call they are
//! an argument of: what file, network and process checks look at.

use super::lexer::{Kind, Source};

/// Every call `name(` with its dotted callee and line, e.g. ("os.readdir", 3, index of `(`).
pub(crate) fn calls(src: &Source<'_>) -> Vec<(String, u32, usize)> {
    let t = &src.tokens;
    let mut out = Vec::new();
    for i in 1..t.len() {
        if src.is(i, "(")
            && t[i - 1].kind == Kind::Ident
            && let Some(callee) = src.callee(i)
        {
            out.push((callee, t[i].line, i));
        }
    }
    out
}

/// A string literal and the call it is an argument of, if any (`open` for `open("x")`).
#[derive(Debug, Clone)]
pub(crate) struct StrLit<'a> {
    pub text: &'a str,
    pub line: u32,
    pub call: Option<String>,
}

pub(crate) fn strings<'a>(src: &Source<'a>) -> Vec<StrLit<'a>> {
    let t = &src.tokens;
    let mut out = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if tok.kind != Kind::Str {
            continue;
        }
        // The innermost enclosing call: walk back to the unmatched `(` at depth - 1.
        let mut call = None;
        if tok.depth > 0 {
            let mut k = i;
            let mut steps = 0;
            while k > 0 && steps < 64 {
                k -= 1;
                steps += 1;
                if t[k].depth < tok.depth {
                    if src.is(k, "(") {
                        call = src.callee(k);
                    }
                    break;
                }
            }
        }
        out.push(StrLit {
            text: tok.text,
            line: tok.line,
            call,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::py;
    use super::*;

    #[test]
    fn strings_know_their_call() {
        let s = py("open('/etc/passwd').read()\nx = '/not/a/call'\npathlib.Path('/home/u', 'x')");
        let got: Vec<(&str, Option<String>)> =
            strings(&s).into_iter().map(|l| (l.text, l.call)).collect();
        assert_eq!(
            got,
            vec![
                ("/etc/passwd", Some("open".to_string())),
                ("/not/a/call", None),
                ("/home/u", Some("pathlib.Path".to_string())),
                ("x", Some("pathlib.Path".to_string())),
            ]
        );
    }

    #[test]
    fn calls_name_their_dotted_callee() {
        let s = py("os.path.join(a, b)\nx = f(g(1))\nobj[0](2)");
        let got: Vec<(String, u32)> = calls(&s).into_iter().map(|(c, l, _)| (c, l)).collect();
        assert_eq!(
            got,
            [
                ("os.path.join".to_string(), 1),
                ("f".to_string(), 2),
                ("g".to_string(), 2),
            ]
        );
    }
}
