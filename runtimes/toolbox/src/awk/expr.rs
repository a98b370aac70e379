//! awk's expressions, by POSIX precedence from assignment down to primaries (fields,
//! variables, calls, `getline`), for the parser of [`super::parser`]: concatenation is
//! juxtaposition, `>` is a redirection inside an unparenthesized `print` list, and each level
//! of nesting counts against the parser's bound.

use super::lexer::Tok;
use super::parser::{Expr, Parser, R, Var};

impl Parser {
    pub(super) fn expr(&mut self) -> R<Expr> {
        self.enter()?;
        let e = self.ternary()?;
        let e = match self.peek() {
            Tok::Op(op @ ("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=")) if is_lvalue(&e) => {
                let op = *op;
                self.advance();
                self.newlines();
                let rhs = self.expr()?;
                let kind = if op == "=" { None } else { Some(&op[..1]) };
                let kind = kind.map(|k| match k {
                    "+" => "+",
                    "-" => "-",
                    "*" => "*",
                    "/" => "/",
                    "%" => "%",
                    _ => "^",
                });
                Expr::Assign(kind, Box::new(e), Box::new(rhs))
            }
            _ => e,
        };
        self.depth -= 1;
        Ok(e)
    }

    pub(super) fn ternary(&mut self) -> R<Expr> {
        let c = self.or()?;
        if self.eat("?") {
            self.newlines();
            let a = self.expr()?;
            self.newlines();
            self.expect(":")?;
            self.newlines();
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    pub(super) fn or(&mut self) -> R<Expr> {
        let mut l = self.and()?;
        while self.eat("||") {
            self.newlines();
            l = Expr::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }

    pub(super) fn and(&mut self) -> R<Expr> {
        let mut l = self.in_expr()?;
        while self.eat("&&") {
            self.newlines();
            l = Expr::And(Box::new(l), Box::new(self.in_expr()?));
        }
        Ok(l)
    }

    pub(super) fn in_expr(&mut self) -> R<Expr> {
        let mut l = self.matching()?;
        while !self.no_in && self.eat("in") {
            let a = self.array_name()?;
            l = Expr::In(vec![l], a);
        }
        Ok(l)
    }

    pub(super) fn matching(&mut self) -> R<Expr> {
        let mut l = self.comparison()?;
        loop {
            let negate = if self.eat("~") {
                false
            } else if self.eat("!~") {
                true
            } else {
                return Ok(l);
            };
            l = Expr::Match(negate, Box::new(l), Box::new(self.comparison()?));
        }
    }

    pub(super) fn comparison(&mut self) -> R<Expr> {
        let l = self.concat()?;
        let op = match self.peek() {
            Tok::Op(op @ ("<" | "<=" | "==" | "!=" | ">=")) => *op,
            Tok::Op(">") if !self.no_gt => ">",
            Tok::Op("|") if self.peek_at(1).is("getline") => {
                return self.refuse("\"command\" | getline");
            }
            _ => return Ok(l),
        };
        self.advance();
        Ok(Expr::Cmp(op, Box::new(l), Box::new(self.concat()?)))
    }

    pub(super) fn concat_no_gt(&mut self) -> R<Expr> {
        let old = std::mem::replace(&mut self.no_gt, true);
        let e = self.concat();
        self.no_gt = old;
        e
    }

    pub(super) fn concat(&mut self) -> R<Expr> {
        let mut l = self.additive()?;
        loop {
            // What can start the next operand of a concatenation (not `-`, `!` or `++`,
            // which bind to the left operand instead).
            let starts = match self.peek() {
                Tok::Num(_)
                | Tok::Str(_)
                | Tok::Regex(_)
                | Tok::Name(_)
                | Tok::Func(_)
                | Tok::Builtin(_) => true,
                t => t.is("$") || t.is("("),
            };
            if !starts {
                return Ok(l);
            }
            l = Expr::Concat(Box::new(l), Box::new(self.additive()?));
        }
    }

    pub(super) fn additive(&mut self) -> R<Expr> {
        let mut l = self.multiplicative()?;
        loop {
            let op = if self.eat("+") {
                "+"
            } else if self.eat("-") {
                "-"
            } else {
                return Ok(l);
            };
            l = Expr::Binary(op, Box::new(l), Box::new(self.multiplicative()?));
        }
    }

    pub(super) fn multiplicative(&mut self) -> R<Expr> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat("*") {
                "*"
            } else if self.eat("/") {
                "/"
            } else if self.eat("%") {
                "%"
            } else {
                return Ok(l);
            };
            l = Expr::Binary(op, Box::new(l), Box::new(self.unary()?));
        }
    }

    pub(super) fn unary(&mut self) -> R<Expr> {
        self.enter()?;
        let e = if self.eat("!") {
            Expr::Not(Box::new(self.unary()?))
        } else if self.eat("-") {
            Expr::Neg(Box::new(self.unary()?))
        } else if self.eat("+") {
            Expr::Plus(Box::new(self.unary()?))
        } else {
            self.power()?
        };
        self.depth -= 1;
        Ok(e)
    }

    pub(super) fn power(&mut self) -> R<Expr> {
        let base = self.postfix()?;
        if self.eat("^") {
            // Right-associative, and the exponent may have a sign: `2^-1`.
            let exp = self.unary()?;
            return Ok(Expr::Binary("^", Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    pub(super) fn postfix(&mut self) -> R<Expr> {
        if self.eat("++") {
            let lv = self.primary_lvalue()?;
            return Ok(Expr::Incr(true, 1.0, Box::new(lv)));
        }
        if self.eat("--") {
            let lv = self.primary_lvalue()?;
            return Ok(Expr::Incr(true, -1.0, Box::new(lv)));
        }
        let e = self.primary()?;
        if is_lvalue(&e) {
            if self.eat("++") {
                return Ok(Expr::Incr(false, 1.0, Box::new(e)));
            }
            if self.eat("--") {
                return Ok(Expr::Incr(false, -1.0, Box::new(e)));
            }
        }
        Ok(e)
    }

    pub(super) fn primary_lvalue(&mut self) -> R<Expr> {
        let e = self.primary()?;
        if is_lvalue(&e) { Ok(e) } else { self.error() }
    }

    pub(super) fn primary(&mut self) -> R<Expr> {
        self.enter()?;
        let e = self.primary_inner()?;
        self.depth -= 1;
        Ok(e)
    }

    pub(super) fn primary_inner(&mut self) -> R<Expr> {
        let t = self.advance();
        Ok(match t {
            Tok::Num(n) => Expr::Num(n),
            Tok::Str(s) => Expr::Str(s),
            Tok::Regex(r) => {
                self.regexes.push(r);
                Expr::Regex(self.regexes.len() - 1)
            }
            Tok::Op("$") => {
                // `$NF++` increments the field; `$i++` too: the operand is a primary.
                let e = if self.eat("++") {
                    Expr::Incr(true, 1.0, Box::new(self.primary_lvalue()?))
                } else if self.eat("--") {
                    Expr::Incr(true, -1.0, Box::new(self.primary_lvalue()?))
                } else if self.eat("-") {
                    Expr::Neg(Box::new(self.primary()?))
                } else {
                    self.primary()?
                };
                Expr::Field(Box::new(e))
            }
            Tok::Op("(") => {
                let list = self.expr_list()?;
                self.expect(")")?;
                if list.len() > 1 {
                    if !self.eat("in") {
                        return self.error();
                    }
                    let a = self.array_name()?;
                    return Ok(Expr::In(list, a));
                }
                let mut list = list;
                Expr::Group(Box::new(list.remove(0)))
            }
            Tok::Op("-") => Expr::Neg(Box::new(self.unary()?)),
            Tok::Op("+") => Expr::Plus(Box::new(self.unary()?)),
            Tok::Op("!") => Expr::Not(Box::new(self.unary()?)),
            Tok::Op("getline") => {
                let var = match self.peek() {
                    Tok::Name(_) => Some(Box::new(self.primary()?)),
                    t if t.is("$") => Some(Box::new(self.primary()?)),
                    _ => None,
                };
                let file = if self.eat("<") {
                    Some(Box::new(self.primary()?))
                } else {
                    None
                };
                Expr::Getline(var, file)
            }
            Tok::Name(n) => {
                if self.eat("[") {
                    let subs = self.expr_list()?;
                    self.expect("]")?;
                    let v = self.var(&n);
                    if let (Var::Local(i), Some((_, arrays))) = (&v, self.params.as_mut()) {
                        arrays[*i] = true;
                    }
                    Expr::Index(v, subs)
                } else {
                    Expr::Var(self.var(&n))
                }
            }
            Tok::Func(n) => {
                let line = self.toks[self.pos - 1].1;
                self.expect("(")?;
                let args = if self.peek().is(")") {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                self.expect(")")?;
                let i = self.function_index(&n);
                self.called.push((n, line));
                Expr::Call(i, args)
            }
            Tok::Builtin(b) => {
                if b == "system" {
                    self.pos -= 1;
                    return self.refuse("system()");
                }
                if !self.peek().is("(") {
                    if b == "length" {
                        return Ok(Expr::Builtin(b, Vec::new()));
                    }
                    return self.error();
                }
                self.advance();
                let args = if self.peek().is(")") {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                self.expect(")")?;
                if matches!(b, "split") {
                    if let Some(Expr::Var(Var::Local(i))) = args.get(1) {
                        if let Some((_, arrays)) = self.params.as_mut() {
                            arrays[*i] = true;
                        }
                    }
                }
                let (min, max) = match b {
                    "length" => (0, 1),
                    "substr" => (2, 3),
                    "index" | "atan2" => (2, 2),
                    "split" => (2, 3),
                    "sub" | "gsub" => (2, 3),
                    "match" => (2, 2),
                    "sprintf" => (1, usize::MAX),
                    "rand" => (0, 0),
                    "srand" | "fflush" => (0, 1),
                    "close" => (1, 1),
                    _ => (1, 1),
                };
                if args.len() < min || args.len() > max {
                    self.pos -= 1;
                    return Err(format!(
                        "line {}: wrong number of arguments in call to {b}",
                        self.line()
                    ));
                }
                if matches!(b, "sub" | "gsub") && args.len() == 3 && !is_lvalue(&args[2]) {
                    return Err(format!(
                        "line {}: the third argument of {b} must be a variable, an array element or a field",
                        self.line()
                    ));
                }
                Expr::Builtin(b, args)
            }
            _ => {
                self.pos -= 1;
                return self.error();
            }
        })
    }
}

pub fn is_lvalue(e: &Expr) -> bool {
    matches!(e, Expr::Var(_) | Expr::Index(..) | Expr::Field(_))
}
