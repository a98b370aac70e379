//! Shell arithmetic (`$((...))`, `((...))`, `for ((...))`, `let`, `${NAME:offset:length}`):
//! bash's C-like integer expressions over 64-bit wrapping integers, evaluated from their text
//! after the word's own expansions.
//!
//! Operators with C precedence: `, = += -= *= /= %= <<= >>= &= ^= |=`, `?:`, `|| && | ^ &`,
//! `== != < <= > >=`, `<< >>`, `+ -`, `* / %`, `**`, unary `! ~ + -`, `++`/`--` before and
//! after a name. Literals are decimal, `0x` hex, `0` octal or `BASE#digits`. A name stands for
//! its variable, whose value is itself an expression (empty or unset is 0). Division by zero is
//! an error, as in bash. The evaluator is recursive descent that evaluates as it parses (a
//! branch not taken is parsed with `live` off: no assignments, no errors), and its recursion
//! (parentheses, unary operators, assignments, variables holding expressions) is bounded by
//! [`MAX_ARITH_DEPTH`].

/// Deepest nesting of parentheses, unary operators, assignments and variables holding
/// expressions: each level is native stack.
const MAX_ARITH_DEPTH: usize = 64;

/// What arithmetic reads and assigns.
pub(crate) trait Vars {
    fn get_var(&mut self, name: &str) -> Option<String>;
    /// # Errors
    /// When the value cannot be stored (a message).
    fn set_var_arith(&mut self, name: &str, value: String) -> Result<(), String>;
}

/// Evaluates `src`.
///
/// # Errors
/// A message for a syntax error, division by zero, a negative exponent or nesting too deep.
pub(crate) fn eval<V: Vars + ?Sized>(src: &str, vars: &mut V) -> Result<i64, String> {
    // bash names the read-only variable alone, not the expression.
    eval_at(src, vars, 0).map_err(|e| match e.ends_with(READ_ONLY) {
        true => e,
        false => format!("{}: {e}", src.trim()),
    })
}

/// The end of [`Vars::set_var_arith`]'s error for a read-only variable (`NAME: readonly
/// variable`).
pub(crate) const READ_ONLY: &str = ": readonly variable";

fn eval_at<V: Vars + ?Sized>(src: &str, vars: &mut V, depth: usize) -> Result<i64, String> {
    let toks = tokenize(src)?;
    let mut p = Eval {
        toks,
        i: 0,
        vars,
        depth,
    };
    if p.toks.is_empty() {
        return Ok(0);
    }
    let v = p.comma(true)?;
    match p.toks.get(p.i) {
        None => Ok(v),
        Some(t) => Err(format!(
            "syntax error in expression (error token is \"{t}\")"
        )),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Num(n) => write!(f, "{n}"),
            Tok::Name(n) => f.write_str(n),
            Tok::Op(o) => f.write_str(o),
        }
    }
}

/// Operators, longest first.
const OPS: [&str; 41] = [
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~",
    "?", ":", "=", "(", ")", ",", "[", "]",
];

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '#' || *c == '_' || *c == '@')
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            toks.push(Tok::Num(number(&text)?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            // `NAME[expr]`: an element of an array; the subscript is evaluated when the
            // element is read or set.
            if chars.get(i) == Some(&'[') {
                let mut depth = 0usize;
                let end = (i..chars.len()).find(|&k| {
                    match chars[k] {
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                });
                let Some(end) = end else {
                    return Err("missing `]'".into());
                };
                i = end + 1;
            }
            toks.push(Tok::Name(chars[start..i].iter().collect()));
        } else {
            let op = OPS.into_iter().find(|op| {
                op.chars()
                    .enumerate()
                    .all(|(k, oc)| chars.get(i + k) == Some(&oc))
            });
            match op {
                Some("[" | "]") => {
                    return Err(format!("syntax error: `{c}' outside an array subscript"));
                }
                Some(op) => {
                    i += op.len();
                    toks.push(Tok::Op(op));
                }
                None => {
                    let rest: String = chars[i..].iter().collect();
                    return Err(format!(
                        "syntax error: operand expected (error token is \"{rest}\")"
                    ));
                }
            }
        }
    }
    Ok(toks)
}

/// An integer literal: decimal, `0x` hex, `0` octal, or `BASE#digits` (base 2 to 64).
fn number(text: &str) -> Result<i64, String> {
    let (base, digits) = if let Some((base, digits)) = text.split_once('#') {
        let base: u32 = base
            .parse()
            .ok()
            .filter(|b| (2..=64).contains(b))
            .ok_or_else(|| format!("invalid arithmetic base (error token is \"{text}\")"))?;
        (base, digits)
    } else if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        (16, hex)
    } else if text.len() > 1 && text.starts_with('0') {
        (8, &text[1..])
    } else {
        (10, text)
    };
    let too_great = || format!("value too great for base (error token is \"{text}\")");
    if digits.is_empty() {
        return Err(too_great());
    }
    let mut v: i64 = 0;
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            '@' => 62,
            '_' => 63,
            _ => return Err(too_great()),
        };
        if d >= base {
            return Err(too_great());
        }
        v = v.wrapping_mul(i64::from(base)).wrapping_add(i64::from(d));
    }
    Ok(v)
}

struct Eval<'v, V: ?Sized> {
    toks: Vec<Tok>,
    i: usize,
    vars: &'v mut V,
    depth: usize,
}

/// Binary operators by precedence level, loosest first (from `||` down to `*`).
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl<V: Vars + ?Sized> Eval<'_, V> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_ARITH_DEPTH {
            return Err(format!(
                "expression nested too deeply (more than {MAX_ARITH_DEPTH} levels)"
            ));
        }
        Ok(())
    }

    fn comma(&mut self, live: bool) -> Result<i64, String> {
        let mut v = self.assign(live)?;
        while self.peek_op() == Some(",") {
            self.i += 1;
            v = self.assign(live)?;
        }
        Ok(v)
    }

    fn assign(&mut self, live: bool) -> Result<i64, String> {
        self.deeper()?;
        let v = self.assign_inner(live);
        self.depth -= 1;
        v
    }

    fn assign_inner(&mut self, live: bool) -> Result<i64, String> {
        if let (Some(Tok::Name(name)), Some(Tok::Op(op))) =
            (self.toks.get(self.i), self.toks.get(self.i + 1))
            && matches!(
                *op,
                "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "|=" | "^="
            )
        {
            let (name, op) = (name.clone(), *op);
            self.i += 2;
            let rhs = self.assign(live)?;
            if !live {
                return Ok(0);
            }
            let v = if op == "=" {
                rhs
            } else {
                let old = self.var(&name)?;
                binary(&op[..op.len() - 1], old, rhs)?
            };
            self.store(&name, v)?;
            return Ok(v);
        }
        self.ternary(live)
    }

    fn ternary(&mut self, live: bool) -> Result<i64, String> {
        let c = self.binary(0, live)?;
        if self.peek_op() != Some("?") {
            return Ok(c);
        }
        self.i += 1;
        let a = self.comma(live && c != 0)?;
        if self.peek_op() != Some(":") {
            return Err("`:' expected for conditional expression".into());
        }
        self.i += 1;
        let b = self.assign(live && c == 0)?;
        Ok(if c != 0 { a } else { b })
    }

    fn binary(&mut self, level: usize, live: bool) -> Result<i64, String> {
        let Some(ops) = LEVELS.get(level) else {
            return self.power(live);
        };
        let mut v = self.binary(level + 1, live)?;
        while let Some(op) = self.peek_op().filter(|op| ops.contains(op)) {
            self.i += 1;
            // `&&` and `||` do not evaluate their right side when the left decides.
            let rhs_live = match op {
                "&&" => live && v != 0,
                "||" => live && v == 0,
                _ => live,
            };
            let rhs = self.binary(level + 1, rhs_live)?;
            v = if live {
                match op {
                    "&&" => i64::from(v != 0 && rhs != 0),
                    "||" => i64::from(v != 0 || rhs != 0),
                    _ => binary(op, v, rhs)?,
                }
            } else {
                0
            };
        }
        Ok(v)
    }

    /// `**`, right-associative, tighter than `*`.
    fn power(&mut self, live: bool) -> Result<i64, String> {
        let base = self.unary(live)?;
        if self.peek_op() != Some("**") {
            return Ok(base);
        }
        self.i += 1;
        self.deeper()?;
        let exp = self.power(live);
        self.depth -= 1;
        let exp = exp?;
        if !live {
            return Ok(0);
        }
        binary("**", base, exp)
    }

    fn unary(&mut self, live: bool) -> Result<i64, String> {
        match self.peek_op() {
            Some(op @ ("!" | "~" | "-" | "+")) => {
                self.i += 1;
                self.deeper()?;
                let v = self.unary(live);
                self.depth -= 1;
                let v = v?;
                Ok(match op {
                    "!" => i64::from(v == 0),
                    "~" => !v,
                    "-" => v.wrapping_neg(),
                    _ => v,
                })
            }
            Some(op @ ("++" | "--")) => {
                self.i += 1;
                let Some(Tok::Name(name)) = self.toks.get(self.i).cloned() else {
                    return Err(format!("`{op}' needs a variable name"));
                };
                self.i += 1;
                if !live {
                    return Ok(0);
                }
                let v = self.var(&name)?;
                let v = if op == "++" {
                    v.wrapping_add(1)
                } else {
                    v.wrapping_sub(1)
                };
                self.store(&name, v)?;
                Ok(v)
            }
            _ => self.postfix(live),
        }
    }

    fn postfix(&mut self, live: bool) -> Result<i64, String> {
        let tok = self.toks.get(self.i).cloned();
        self.i += 1;
        match tok {
            Some(Tok::Num(n)) => Ok(n),
            Some(Tok::Name(name)) => {
                let after = self.peek_op().filter(|op| matches!(*op, "++" | "--"));
                if !live {
                    self.i += usize::from(after.is_some());
                    return Ok(0);
                }
                let v = self.var(&name)?;
                if let Some(op) = after {
                    self.i += 1;
                    let new = if op == "++" {
                        v.wrapping_add(1)
                    } else {
                        v.wrapping_sub(1)
                    };
                    self.store(&name, new)?;
                }
                Ok(v)
            }
            Some(Tok::Op("(")) => {
                let v = self.comma(live)?;
                if self.peek_op() != Some(")") {
                    return Err("missing `)'".into());
                }
                self.i += 1;
                Ok(v)
            }
            Some(t) => Err(format!(
                "syntax error: operand expected (error token is \"{t}\")"
            )),
            None => Err("syntax error: operand expected".into()),
        }
    }

    /// A variable's value as a number: empty or unset is 0, anything else an expression.
    fn var(&mut self, name: &str) -> Result<i64, String> {
        let name = self.element(name)?;
        let text = self.vars.get_var(&name).unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            return Ok(0);
        }
        if let Ok(v) = text.parse::<i64>() {
            return Ok(v);
        }
        self.deeper()?;
        let v = eval_at(text, self.vars, self.depth);
        self.depth -= 1;
        v
    }

    fn store(&mut self, name: &str, v: i64) -> Result<(), String> {
        let name = self.element(name)?;
        self.vars.set_var_arith(&name, v.to_string())
    }

    /// `NAME[expr]` with its subscript evaluated (`NAME[3]`); a plain name as it is.
    fn element(&mut self, name: &str) -> Result<String, String> {
        let Some((array, rest)) = name.split_once('[') else {
            return Ok(name.to_string());
        };
        let subscript = rest.strip_suffix(']').unwrap_or(rest);
        self.deeper()?;
        let i = eval_at(subscript, self.vars, self.depth);
        self.depth -= 1;
        Ok(format!("{array}[{}]", i?))
    }
}

/// `a op b` for the binary operators (wrapping, like bash's 64-bit arithmetic).
fn binary(op: &str, a: i64, b: i64) -> Result<i64, String> {
    Ok(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" if b == 0 => return Err("division by 0".into()),
        "/" => a.wrapping_div(b),
        "%" => a.wrapping_rem(b),
        "**" if b < 0 => return Err("exponent less than 0".into()),
        "**" => a.wrapping_pow(u32::try_from(b).unwrap_or(u32::MAX)),
        "<<" => a.wrapping_shl(b as u32),
        ">>" => a.wrapping_shr(b as u32),
        "&" => a & b,
        "|" => a | b,
        "^" => a ^ b,
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "<" => i64::from(a < b),
        "<=" => i64::from(a <= b),
        ">" => i64::from(a > b),
        ">=" => i64::from(a >= b),
        _ => return Err(format!("unknown operator {op}")),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    impl Vars for BTreeMap<String, String> {
        fn get_var(&mut self, name: &str) -> Option<String> {
            self.get(name).cloned()
        }

        fn set_var_arith(&mut self, name: &str, value: String) -> Result<(), String> {
            self.insert(name.to_string(), value);
            Ok(())
        }
    }

    fn calc(src: &str) -> Result<i64, String> {
        let mut vars = BTreeMap::from([
            ("x".to_string(), "5".to_string()),
            ("e".to_string(), "x*2".to_string()),
        ]);
        eval(src, &mut vars)
    }

    #[test]
    fn c_operators_and_precedence() {
        for (src, want) in [
            ("1 + 2 * 3", 7),
            ("(1 + 2) * 3", 9),
            ("2 ** 3 ** 2", 512),
            ("-2 ** 2", 4),
            ("7 / 2 + 7 % 2", 4),
            ("-7 / 2", -3),
            ("1 << 4 | 1", 17),
            ("6 & 3 ^ 1", 3),
            ("!0 + !5 + ~0", 0),
            ("3 > 2 && 2 > 3 || 1", 1),
            ("x > 3 ? 10 : 20", 10),
            ("0 ? 1 : 0 ? 2 : 3", 3),
            ("0x1f + 010 + 2#101 + 36#z", 31 + 8 + 5 + 35),
            ("x", 5),
            ("e + 1", 11),
            ("unset_var + 1", 1),
            ("9223372036854775807 + 1", i64::MIN),
            ("", 0),
            ("1, 2, 3", 3),
        ] {
            assert_eq!(calc(src), Ok(want), "{src}");
        }
    }

    #[test]
    fn assignments() {
        let mut vars = BTreeMap::new();
        assert_eq!(eval("a = 3, a += 2, a *= 3, a <<= 1, a", &mut vars), Ok(30));
        assert_eq!(eval("b = a++ + ++a", &mut vars), Ok(62));
        assert_eq!(vars["a"], "32");
        assert_eq!(eval("a--, --a", &mut vars), Ok(30));
        assert_eq!(eval("c = d = 4", &mut vars), Ok(4));
        assert_eq!(vars["d"], "4");
        // A branch not taken assigns nothing and divides by nothing.
        assert_eq!(eval("0 && (z = 1/0)", &mut vars), Ok(0));
        assert_eq!(eval("1 || z++", &mut vars), Ok(1));
        assert_eq!(eval("1 ? 2 : (z = 3)", &mut vars), Ok(2));
        assert!(!vars.contains_key("z"));
    }

    #[test]
    fn errors() {
        for (src, says) in [
            ("1 / 0", "division by 0"),
            ("5 % (x - 5)", "division by 0"),
            ("2 ** -1", "exponent"),
            ("1 +", "operand expected"),
            ("(1", "missing"),
            ("08", "too great"),
            ("1 2", "syntax error"),
            ("a[1", "missing `]'"),
            ("1]", "outside an array subscript"),
            ("1 ? 2", "`:'"),
            ("3 = 4", "syntax error"),
        ] {
            let err = calc(src).unwrap_err();
            assert!(err.contains(says), "{src}: {err}");
        }
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(calc(&deep).unwrap_err().contains("nested too deeply"));
        assert!(
            calc(&("- ".repeat(10_000) + "1"))
                .unwrap_err()
                .contains("nested")
        );
        let mut vars = BTreeMap::from([("r".to_string(), "r + 1".to_string())]);
        assert!(
            eval("r", &mut vars)
                .unwrap_err()
                .contains("nested too deeply")
        );
    }
}
