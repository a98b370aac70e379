//! awk's built-in functions (length, substr, index, split, sub, gsub, match, sprintf, the
//! case and arithmetic functions, rand/srand, close, fflush) and `getline` in its forms,
//! for the interpreter of [`super::interp`].

use std::io::Write;

use regex::Regex;

use super::format::sprintf;
use super::interp::{Cell, Interp, R, fail};
use super::io::Reader;
use super::parser::Expr;
use super::value::Value;

impl Interp<'_> {
    pub(super) fn getline(&mut self, var: Option<&Expr>, file: Option<&Expr>) -> R<Value> {
        let rec = match file {
            None => match self.next_main()? {
                Some(r) => {
                    self.count_record();
                    r
                }
                None => return Ok(Value::Num(0.0)),
            },
            Some(f) => {
                let v = self.eval(f)?;
                let name = self.str_of(&v);
                if !self.inputs.contains_key(&name) {
                    match Reader::open(&name) {
                        Ok(r) => {
                            self.inputs.insert(name.clone(), r);
                        }
                        Err(_) => return Ok(Value::Num(-1.0)),
                    }
                }
                let rs = self.global_str("RS");
                let re = if rs.chars().count() > 1 {
                    Some(self.regex(&rs)?)
                } else {
                    None
                };
                let reader = self.inputs.get_mut(&name).expect("opened above");
                match reader.record(&rs, re.as_ref()) {
                    Ok(Some(r)) => r,
                    Ok(None) => return Ok(Value::Num(0.0)),
                    Err(_) => return Ok(Value::Num(-1.0)),
                }
            }
        };
        match var {
            Some(lv) => self.assign(lv, Value::input(rec))?,
            None => self.set_record(rec),
        }
        Ok(Value::Num(1.0))
    }

    pub(super) fn builtin(&mut self, name: &str, args: &[Expr]) -> R<Value> {
        let num = |it: &mut Self, i: usize| -> R<f64> { Ok(it.eval(&args[i])?.num()) };
        let string = |it: &mut Self, i: usize| -> R<String> {
            let v = it.eval(&args[i])?;
            Ok(it.str_of(&v))
        };
        Ok(match name {
            "length" => match args.first() {
                None => Value::Num(self.record.chars().count() as f64),
                Some(Expr::Var(var)) if matches!(self.cell_mut(var), Cell::Arr(_)) => {
                    Value::Num(self.array(var)?.borrow().len() as f64)
                }
                Some(_) => Value::Num(string(self, 0)?.chars().count() as f64),
            },
            "substr" => {
                let s = string(self, 0)?;
                let len = s.chars().count() as f64;
                let start = round(num(self, 1)?);
                let end = if args.len() > 2 {
                    start + round(num(self, 2)?)
                } else {
                    f64::INFINITY
                };
                let from = start.max(1.0);
                let to = end.min(len + 1.0);
                if from.is_nan() || to.is_nan() || to <= from {
                    Value::Str(String::new())
                } else {
                    Value::Str(
                        s.chars()
                            .skip(from as usize - 1)
                            .take((to - from) as usize)
                            .collect(),
                    )
                }
            }
            "index" => {
                let s = string(self, 0)?;
                let t = string(self, 1)?;
                Value::Num(match (t.is_empty(), s.find(&t)) {
                    (false, Some(at)) => (s[..at].chars().count() + 1) as f64,
                    _ => 0.0,
                })
            }
            "split" => {
                let s = string(self, 0)?;
                let Expr::Var(var) = &args[1] else {
                    return fail("split: the second argument must be an array name");
                };
                let pieces = match args.get(2) {
                    None => self.split(&s, None),
                    Some(Expr::Regex(i)) => {
                        let re = self.literals[*i].clone();
                        self.split(&s, Some(&re))
                    }
                    Some(_) => {
                        let sep = string(self, 2)?;
                        self.split_by(&s, &sep, false)
                    }
                };
                let arr = self.array(var)?;
                let mut arr = arr.borrow_mut();
                arr.clear();
                for (i, p) in pieces.iter().enumerate() {
                    arr.insert((i + 1).to_string(), Value::input(p.clone()));
                }
                Value::Num(pieces.len() as f64)
            }
            "sub" | "gsub" => {
                let re = self.regex_of(&args[0])?;
                let repl = string(self, 1)?;
                let record = Expr::Field(Box::new(Expr::Num(0.0)));
                let target = args.get(2).unwrap_or(&record);
                let v = self.eval(target)?;
                let s = self.str_of(&v);
                let (out, n) = substitute(&re, &repl, &s, name == "gsub");
                if n > 0 {
                    self.assign(target, Value::Str(out))?;
                }
                Value::Num(n as f64)
            }
            "match" => {
                let s = string(self, 0)?;
                let re = self.regex_of(&args[1])?;
                let (start, len) = match re.find(&s) {
                    Some(m) => (
                        (s[..m.start()].chars().count() + 1) as f64,
                        m.as_str().chars().count() as f64,
                    ),
                    None => (0.0, -1.0),
                };
                self.set_global("RSTART", Value::Num(start));
                self.set_global("RLENGTH", Value::Num(len));
                Value::Num(start)
            }
            "sprintf" => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a)?);
                }
                let fmt = self.str_of(&values[0]);
                Value::Str(sprintf(&fmt, &values[1..], &self.convfmt()))
            }
            "tolower" => Value::Str(string(self, 0)?.to_ascii_lowercase()),
            "toupper" => Value::Str(string(self, 0)?.to_ascii_uppercase()),
            "int" => Value::Num(num(self, 0)?.trunc()),
            "sqrt" => Value::Num(num(self, 0)?.sqrt()),
            "exp" => Value::Num(num(self, 0)?.exp()),
            "log" => Value::Num(num(self, 0)?.ln()),
            "sin" => Value::Num(num(self, 0)?.sin()),
            "cos" => Value::Num(num(self, 0)?.cos()),
            "atan2" => {
                let y = num(self, 0)?;
                Value::Num(y.atan2(num(self, 1)?))
            }
            "rand" => {
                // xorshift64*: rand() need not be any particular awk's sequence.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                Value::Num((r >> 11) as f64 / (1u64 << 53) as f64)
            }
            "srand" => {
                let previous = self.seed;
                self.seed = match args.first() {
                    Some(_) => num(self, 0)?,
                    None => std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs() as f64)
                        .unwrap_or(0.0),
                };
                self.rng = (self.seed.to_bits() ^ 0x9e37_79b9_7f4a_7c15) | 1;
                Value::Num(previous)
            }
            "close" => {
                let name = string(self, 0)?;
                if name == "/dev/stdout" || name == "-" {
                    let _ = self.stdout.flush();
                }
                let out = self.outputs.close(&name);
                let inp = self.inputs.remove(&name).is_some();
                Value::Num(if out || inp { 0.0 } else { -1.0 })
            }
            "fflush" => {
                self.flush();
                Value::Num(0.0)
            }
            _ => return fail(format!("{name} is not supported")),
        })
    }
}

fn round(n: f64) -> f64 {
    // C's rint: halves to even, as mawk rounds substr's positions.
    let r = n.round();
    if (n - n.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - n.signum()
    } else {
        r
    }
}

/// sub/gsub: `&` is the match, `\&` a literal `&`, `\\` a backslash.
fn substitute(re: &Regex, repl: &str, s: &str, global: bool) -> (String, usize) {
    let mut out = String::new();
    let mut last = 0;
    let mut n = 0;
    let mut previous_end: Option<usize> = None;
    for m in re.find_iter(s) {
        // An empty match right after a replaced one is not a new match.
        if m.start() == m.end() && previous_end == Some(m.start()) {
            continue;
        }
        out.push_str(&s[last..m.start()]);
        let r: Vec<char> = repl.chars().collect();
        let mut i = 0;
        while i < r.len() {
            match r[i] {
                '\\' if matches!(r.get(i + 1), Some('&' | '\\')) => {
                    out.push(r[i + 1]);
                    i += 2;
                    continue;
                }
                '&' => out.push_str(m.as_str()),
                c => out.push(c),
            }
            i += 1;
        }
        last = m.end();
        previous_end = Some(m.end());
        n += 1;
        if !global {
            break;
        }
    }
    out.push_str(&s[last..]);
    (out, n)
}
