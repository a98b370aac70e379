//! Numbers and small constant expressions in code: loop bounds such as `range(10**6)` and
//! allocation sizes such as `bytearray(3 * 1024**3)`. Anything that is not a constant (a name, a
//! call other than a few numeric wrappers) has no value, and the caller treats it as unknown.

use super::lexer::{Kind, Source};

/// The value of a numeric literal: `1_000_000`, `1e6`, `0x10`, `10n`.
pub(crate) fn number_value(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let t = t.trim_end_matches(['n', 'j', 'J', 'l', 'L']);
    let lower = t.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    if let Some(bin) = lower.strip_prefix("0b") {
        return u64::from_str_radix(bin, 2).ok().map(|v| v as f64);
    }
    if let Some(oct) = lower.strip_prefix("0o") {
        return u64::from_str_radix(oct, 8).ok().map(|v| v as f64);
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Evaluates a constant arithmetic expression over tokens `[from, to)`: numbers, `+ - * / // %
/// **`, parentheses, and `int(...)`/`Number(...)`/`Math.floor(...)` wrappers. None for anything
/// else (names, calls), which the caller treats as an unknown bound.
pub(crate) fn const_value(src: &Source<'_>, from: usize, to: usize) -> Option<f64> {
    let mut p = ConstParser {
        src,
        pos: from,
        end: to.min(src.tokens.len()),
        depth: 0,
    };
    let v = p.expr()?;
    (p.pos == p.end && v.is_finite()).then_some(v)
}

struct ConstParser<'s, 'a> {
    src: &'s Source<'a>,
    pos: usize,
    end: usize,
    depth: u32,
}

impl ConstParser<'_, '_> {
    /// Deep enough for real code, shallow enough that `((((...` cannot exhaust the stack.
    const MAX_DEPTH: u32 = 24;

    fn peek(&self) -> Option<&str> {
        (self.pos < self.end).then(|| self.src.tokens[self.pos].text)
    }

    fn eat(&mut self, text: &str) -> bool {
        if self.pos < self.end
            && self.src.tokens[self.pos].text == text
            && self.src.tokens[self.pos].kind == Kind::Op
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Option<f64> {
        self.depth += 1;
        if self.depth > Self::MAX_DEPTH {
            return None;
        }
        let mut v = self.term()?;
        loop {
            if self.eat("+") {
                v += self.term()?;
            } else if self.eat("-") {
                v -= self.term()?;
            } else {
                break;
            }
        }
        self.depth -= 1;
        Some(v)
    }

    fn term(&mut self) -> Option<f64> {
        let mut v = self.unary()?;
        loop {
            if self.eat("*") {
                v *= self.unary()?;
            } else if self.eat("//") {
                let d = self.unary()?;
                v = if d == 0.0 {
                    return None;
                } else {
                    (v / d).floor()
                };
            } else if self.eat("/") {
                let d = self.unary()?;
                v = if d == 0.0 { return None } else { v / d };
            } else if self.eat("%") {
                let d = self.unary()?;
                v = if d == 0.0 { return None } else { v % d };
            } else {
                break;
            }
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<f64> {
        if self.eat("-") {
            return Some(-self.unary()?);
        }
        if self.eat("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if self.eat("**") {
            self.depth += 1;
            if self.depth > Self::MAX_DEPTH {
                return None;
            }
            let exp = self.unary()?;
            self.depth -= 1;
            return Some(base.powf(exp));
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<f64> {
        let t = *self
            .src
            .tokens
            .get(self.pos)
            .filter(|_| self.pos < self.end)?;
        match t.kind {
            Kind::Number => {
                self.pos += 1;
                number_value(t.text)
            }
            Kind::Op if t.text == "(" => {
                self.pos += 1;
                let v = self.expr()?;
                self.eat(")").then_some(v)
            }
            Kind::Ident => {
                // int(1e6), Number(1e6), Math.floor(x), Math.pow(a, b)
                let mut name = t.text.to_owned();
                self.pos += 1;
                while self.peek() == Some(".") {
                    self.pos += 1;
                    let part = self.src.ident(self.pos).filter(|_| self.pos < self.end)?;
                    name.push('.');
                    name.push_str(part);
                    self.pos += 1;
                }
                if !self.eat("(") {
                    return None;
                }
                let first = self.expr()?;
                let value = match name.as_str() {
                    "int" | "Number" | "Math.floor" | "Math.trunc" | "round" | "Math.round"
                    | "parseInt" => first,
                    "Math.pow" | "pow" if self.eat(",") => first.powf(self.expr()?),
                    _ => return None,
                };
                self.eat(")").then_some(value)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::py;
    use super::*;

    #[test]
    fn constant_expressions() {
        let s = py("(10**6 + 2*3 - int(1e3)) // 2");
        assert_eq!(
            const_value(&s, 0, s.tokens.len()),
            Some((1e6 + 6.0 - 1e3) / 2.0)
        );
        let s = py("n * 2");
        assert_eq!(const_value(&s, 0, s.tokens.len()), None);
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let s = py(&deep);
        assert_eq!(const_value(&s, 0, s.tokens.len()), None);
        assert_eq!(number_value("0x10"), Some(16.0));
        assert_eq!(number_value("1_000_000"), Some(1e6));
        assert_eq!(number_value("10n"), Some(10.0));
    }

    #[test]
    fn expression_table() {
        let cases: [(&str, Option<f64>); 10] = [
            ("2**10", Some(1024.0)),
            ("-3 + +4", Some(1.0)),
            ("7 // 2", Some(3.0)),
            ("7 % 4", Some(3.0)),
            ("1 / 0", None),
            ("7 // 0", None),
            ("Math.pow(2, 3)", Some(8.0)),
            ("Math.floor(2.5)", Some(2.5)),
            ("len(x)", None),
            ("0b101 + 0o7", Some(12.0)),
        ];
        for (code, want) in cases {
            let s = py(code);
            assert_eq!(const_value(&s, 0, s.tokens.len()), want, "{code}");
        }
    }
}
