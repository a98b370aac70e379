//! awk's grammar: the tokens of [`super::lexer`] parsed by recursive descent into rules,
//! functions, statements and expressions, with POSIX precedence (the `>` of `print` is a
//! redirection unless in parentheses, concatenation is juxtaposition). Nesting is bounded so
//! that a hostile program cannot exhaust the stack while it is parsed, and what needs a process
//! (`| cmd`, `cmd | getline`, `system`) is refused here, before anything runs.

use std::collections::HashMap;

use super::lexer::Tok;

/// How deep statements and expressions may nest: far beyond what a person writes, well inside
/// the WebAssembly stack (each level costs a dozen Rust frames while parsing and running).
const MAX_NESTING: usize = 100;

/// Where an array lives: a global by name, or a parameter of the running function.
#[derive(Debug, Clone)]
pub enum Var {
    Global(String),
    Local(usize),
}

#[derive(Debug, Clone)]
pub enum Expr {
    Num(f64),
    Str(String),
    /// A regex literal: alone it matches `$0`; the index is into [`Program::regexes`].
    Regex(usize),
    Var(Var),
    Index(Var, Vec<Expr>),
    Field(Box<Expr>),
    Assign(Option<&'static str>, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cmp(&'static str, Box<Expr>, Box<Expr>),
    Match(bool, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    In(Vec<Expr>, Var),
    /// `++x` / `--x` (true: before), `x++` / `x--`.
    Incr(bool, f64, Box<Expr>),
    Call(usize, Vec<Expr>),
    Builtin(&'static str, Vec<Expr>),
    /// `getline [var] [< file]`.
    Getline(Option<Box<Expr>>, Option<Box<Expr>>),
    Group(Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Redirect {
    Truncate,
    Append,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Expr(Expr),
    Print(Vec<Expr>, Option<(Redirect, Expr)>),
    Printf(Vec<Expr>, Option<(Redirect, Expr)>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    Do(Box<Stmt>, Expr),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    ForIn(Box<Expr>, Var, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    NextFile,
    Exit(Option<Expr>),
    Return(Option<Expr>),
    Break,
    Continue,
    Delete(Var, Option<Vec<Expr>>),
}

#[derive(Debug, Clone)]
pub enum Pattern {
    All,
    Expr(Expr),
    Range(Expr, Expr),
}

pub struct Rule {
    pub pattern: Pattern,
    /// None: print the record.
    pub action: Option<Vec<Stmt>>,
}

pub struct Function {
    pub name: String,
    pub params: usize,
    /// Which parameters the body uses as arrays (an unset variable passed there becomes one).
    pub arrays: Vec<bool>,
    pub body: Vec<Stmt>,
}

#[derive(Default)]
pub struct Program {
    pub begin: Vec<Vec<Stmt>>,
    pub end: Vec<Vec<Stmt>>,
    pub rules: Vec<Rule>,
    pub functions: Vec<Function>,
    pub regexes: Vec<String>,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
    /// The parameters of the function being parsed, and which are used as arrays.
    params: Option<(Vec<String>, Vec<bool>)>,
    /// Functions by name: their index, and the line of a first call (to report undefined ones).
    names: HashMap<String, usize>,
    called: Vec<(String, usize)>,
    defined: Vec<Option<Function>>,
    /// Inside `print`'s list, unparenthesized: `>` redirects.
    no_gt: bool,
    /// Inside `for (` ... `;`: `in` is not an operator there.
    no_in: bool,
    regexes: Vec<String>,
}

/// Parses a whole program; the error is awk's message.
pub fn parse(toks: Vec<(Tok, usize)>) -> Result<Program, String> {
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        params: None,
        names: HashMap::new(),
        called: Vec::new(),
        defined: Vec::new(),
        no_gt: false,
        no_in: false,
        regexes: Vec::new(),
    };
    let mut prog = Program::default();
    p.program(&mut prog)?;
    for (name, line) in &p.called {
        let i = p.names[name];
        if p.defined[i].is_none() {
            return Err(format!("line {line}: function {name} never defined"));
        }
    }
    prog.functions = p
        .defined
        .into_iter()
        .map(Option::unwrap_or_else_default)
        .collect();
    prog.regexes = p.regexes;
    Ok(prog)
}

trait OrDefault {
    fn unwrap_or_else_default(self) -> Function;
}

impl OrDefault for Option<Function> {
    fn unwrap_or_else_default(self) -> Function {
        self.unwrap_or(Function {
            name: String::new(),
            params: 0,
            arrays: Vec::new(),
            body: Vec::new(),
        })
    }
}

type R<T> = Result<T, String>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].0
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].0
    }

    fn line(&self) -> usize {
        self.toks[self.pos.min(self.toks.len() - 1)].1
    }

    fn advance(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn error<T>(&self) -> R<T> {
        Err(format!(
            "line {}: syntax error at or near {}",
            self.line(),
            self.peek().show()
        ))
    }

    fn refuse<T>(&self, what: &str) -> R<T> {
        Err(format!(
            "line {}: {what} is not supported: there are no processes in the sandbox (write to a file, then run the command on it)",
            self.line()
        ))
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek().is(op) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> R<()> {
        if self.eat(op) { Ok(()) } else { self.error() }
    }

    fn newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.advance();
        }
    }

    fn terminators(&mut self) {
        while *self.peek() == Tok::Newline || self.peek().is(";") {
            self.advance();
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "line {}: the program nests deeper than {MAX_NESTING} levels",
                self.line()
            ));
        }
        Ok(())
    }

    fn program(&mut self, prog: &mut Program) -> R<()> {
        self.terminators();
        while *self.peek() != Tok::Eof {
            if self.eat("BEGIN") {
                prog.begin.push(self.block()?);
            } else if self.eat("END") {
                prog.end.push(self.block()?);
            } else if self.eat("function") {
                self.function()?;
            } else if self.peek().is("{") {
                let action = self.block()?;
                prog.rules.push(Rule {
                    pattern: Pattern::All,
                    action: Some(action),
                });
            } else {
                let first = self.expr()?;
                let pattern = if self.eat(",") {
                    self.newlines();
                    Pattern::Range(first, self.expr()?)
                } else {
                    Pattern::Expr(first)
                };
                let action = if self.peek().is("{") {
                    Some(self.block()?)
                } else {
                    None
                };
                prog.rules.push(Rule { pattern, action });
            }
            match self.peek() {
                Tok::Eof => {}
                Tok::Newline => {}
                t if t.is(";") => {}
                _ if matches!(self.toks[self.pos - 1].0, Tok::Op("}")) => {}
                _ => return self.error(),
            }
            self.terminators();
        }
        Ok(())
    }

    fn function_index(&mut self, name: &str) -> usize {
        if let Some(i) = self.names.get(name) {
            return *i;
        }
        self.names.insert(name.to_owned(), self.defined.len());
        self.defined.push(None);
        self.defined.len() - 1
    }

    fn function(&mut self) -> R<()> {
        let name = match self.advance() {
            Tok::Func(n) | Tok::Name(n) => n,
            _ => {
                self.pos -= 1;
                return self.error();
            }
        };
        let i = self.function_index(&name);
        if self.defined[i].is_some() {
            return Err(format!("line {}: function {name} redefined", self.line()));
        }
        self.expect("(")?;
        let mut params = Vec::new();
        while let Tok::Name(n) = self.peek().clone() {
            self.advance();
            params.push(n);
            if !self.eat(",") {
                break;
            }
            self.newlines();
        }
        self.expect(")")?;
        self.newlines();
        let n = params.len();
        self.params = Some((params, vec![false; n]));
        let body = self.block()?;
        let (_, arrays) = self.params.take().unwrap_or_default();
        self.defined[i] = Some(Function {
            name,
            params: n,
            arrays,
            body,
        });
        Ok(())
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.expect("{")?;
        self.enter()?;
        let mut out = Vec::new();
        self.terminators();
        while !self.peek().is("}") {
            if *self.peek() == Tok::Eof {
                return self.error();
            }
            out.push(self.stmt()?);
            self.terminators();
        }
        self.advance();
        self.depth -= 1;
        Ok(out)
    }

    /// The end of a simple statement: `;`, a newline, or (not consumed) `}`.
    fn end_simple(&mut self) -> R<()> {
        match self.peek() {
            Tok::Newline => {
                self.advance();
                Ok(())
            }
            t if t.is(";") => {
                self.advance();
                Ok(())
            }
            t if t.is("}") => Ok(()),
            Tok::Eof => Ok(()),
            _ => self.error(),
        }
    }

    fn body(&mut self) -> R<Stmt> {
        self.newlines();
        if self.eat(";") {
            return Ok(Stmt::Block(Vec::new()));
        }
        self.stmt()
    }

    fn stmt(&mut self) -> R<Stmt> {
        self.enter()?;
        let s = self.stmt_inner()?;
        self.depth -= 1;
        Ok(s)
    }

    fn stmt_inner(&mut self) -> R<Stmt> {
        if self.peek().is("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if self.eat("if") {
            self.expect("(")?;
            let c = self.expr()?;
            self.expect(")")?;
            let then = self.body()?;
            let save = self.pos;
            self.terminators();
            if self.eat("else") {
                let other = self.body()?;
                return Ok(Stmt::If(c, Box::new(then), Some(Box::new(other))));
            }
            self.pos = save;
            return Ok(Stmt::If(c, Box::new(then), None));
        }
        if self.eat("while") {
            self.expect("(")?;
            let c = self.expr()?;
            self.expect(")")?;
            if self.peek().is(";") {
                self.advance();
                return Ok(Stmt::While(c, Box::new(Stmt::Block(Vec::new()))));
            }
            return Ok(Stmt::While(c, Box::new(self.body()?)));
        }
        if self.eat("do") {
            let body = self.body()?;
            self.terminators();
            self.expect("while")?;
            self.expect("(")?;
            let c = self.expr()?;
            self.expect(")")?;
            self.end_simple()?;
            return Ok(Stmt::Do(Box::new(body), c));
        }
        if self.eat("for") {
            self.expect("(")?;
            // `for (k in a)`: decided by looking ahead, as `(k in a)` is also an expression.
            if let (Tok::Name(_), true, Tok::Name(_), true) = (
                self.peek().clone(),
                self.peek_at(1).is("in"),
                self.peek_at(2).clone(),
                self.peek_at(3).is(")"),
            ) {
                let k = self.primary_lvalue()?;
                self.expect("in")?;
                let a = self.array_name()?;
                self.expect(")")?;
                return Ok(Stmt::ForIn(Box::new(k), a, Box::new(self.body()?)));
            }
            let init = if self.peek().is(";") {
                None
            } else {
                Some(self.simple_expr_no_in()?)
            };
            self.expect(";")?;
            self.newlines();
            let cond = if self.peek().is(";") {
                None
            } else {
                Some(self.expr()?)
            };
            self.expect(";")?;
            self.newlines();
            let step = if self.peek().is(")") {
                None
            } else {
                Some(self.expr()?)
            };
            self.expect(")")?;
            if self.peek().is(";") {
                self.advance();
                return Ok(Stmt::For(
                    init,
                    cond,
                    step,
                    Box::new(Stmt::Block(Vec::new())),
                ));
            }
            return Ok(Stmt::For(init, cond, step, Box::new(self.body()?)));
        }
        if self.eat(";") {
            return Ok(Stmt::Block(Vec::new()));
        }
        let s = self.simple_stmt()?;
        self.end_simple()?;
        Ok(s)
    }

    fn simple_expr_no_in(&mut self) -> R<Expr> {
        let old = std::mem::replace(&mut self.no_in, true);
        let e = self.expr();
        self.no_in = old;
        e
    }

    fn simple_stmt(&mut self) -> R<Stmt> {
        let t = self.peek().clone();
        match t {
            Tok::Op("print") | Tok::Op("printf") => {
                self.advance();
                let args = self.print_args()?;
                let dest = if self.eat(">") {
                    Some((Redirect::Truncate, self.concat_no_gt()?))
                } else if self.eat(">>") {
                    Some((Redirect::Append, self.concat_no_gt()?))
                } else if self.peek().is("|") {
                    return self.refuse("print | \"command\"");
                } else {
                    None
                };
                if t.is("print") {
                    Ok(Stmt::Print(args, dest))
                } else {
                    if args.is_empty() {
                        return self.error();
                    }
                    Ok(Stmt::Printf(args, dest))
                }
            }
            Tok::Op("next") => {
                self.advance();
                Ok(Stmt::Next)
            }
            Tok::Op("nextfile") => {
                self.advance();
                Ok(Stmt::NextFile)
            }
            Tok::Op("break") => {
                self.advance();
                Ok(Stmt::Break)
            }
            Tok::Op("continue") => {
                self.advance();
                Ok(Stmt::Continue)
            }
            Tok::Op("exit") | Tok::Op("return") => {
                self.advance();
                let value = if self.ends_simple() {
                    None
                } else {
                    Some(self.expr()?)
                };
                Ok(if t.is("exit") {
                    Stmt::Exit(value)
                } else {
                    Stmt::Return(value)
                })
            }
            Tok::Op("delete") => {
                self.advance();
                let a = self.array_name()?;
                if self.eat("[") {
                    let subs = self.expr_list()?;
                    self.expect("]")?;
                    Ok(Stmt::Delete(a, Some(subs)))
                } else {
                    Ok(Stmt::Delete(a, None))
                }
            }
            _ => Ok(Stmt::Expr(self.expr()?)),
        }
    }

    fn ends_simple(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof) || self.peek().is(";") || self.peek().is("}")
    }

    fn print_args(&mut self) -> R<Vec<Expr>> {
        if self.ends_simple() || self.peek().is(">") || self.peek().is(">>") || self.peek().is("|")
        {
            return Ok(Vec::new());
        }
        // `print (a, b) > f`: a parenthesized list, if what follows it ends the statement.
        if self.peek().is("(") {
            let save = self.pos;
            self.advance();
            if let Ok(list) = self.expr_list() {
                if self.eat(")")
                    && (self.ends_simple()
                        || self.peek().is(">")
                        || self.peek().is(">>")
                        || self.peek().is("|"))
                {
                    return Ok(list);
                }
            }
            self.pos = save;
        }
        let old = std::mem::replace(&mut self.no_gt, true);
        let mut list = vec![self.expr()];
        while self.peek().is(",") {
            self.advance();
            self.newlines();
            list.push(self.expr());
        }
        self.no_gt = old;
        list.into_iter().collect()
    }

    fn expr_list(&mut self) -> R<Vec<Expr>> {
        let old = (
            std::mem::replace(&mut self.no_gt, false),
            std::mem::replace(&mut self.no_in, false),
        );
        let mut list = vec![self.expr()?];
        while self.eat(",") {
            self.newlines();
            list.push(self.expr()?);
        }
        (self.no_gt, self.no_in) = old;
        Ok(list)
    }

    fn array_name(&mut self) -> R<Var> {
        match self.peek().clone() {
            Tok::Name(n) => {
                self.advance();
                let v = self.var(&n);
                if let (Var::Local(i), Some((_, arrays))) = (&v, self.params.as_mut()) {
                    arrays[*i] = true;
                }
                Ok(v)
            }
            _ => self.error(),
        }
    }

    fn var(&self, name: &str) -> Var {
        if let Some((params, _)) = &self.params {
            if let Some(i) = params.iter().position(|p| p == name) {
                return Var::Local(i);
            }
        }
        Var::Global(name.to_owned())
    }

    pub fn expr(&mut self) -> R<Expr> {
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

    fn ternary(&mut self) -> R<Expr> {
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

    fn or(&mut self) -> R<Expr> {
        let mut l = self.and()?;
        while self.eat("||") {
            self.newlines();
            l = Expr::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }

    fn and(&mut self) -> R<Expr> {
        let mut l = self.in_expr()?;
        while self.eat("&&") {
            self.newlines();
            l = Expr::And(Box::new(l), Box::new(self.in_expr()?));
        }
        Ok(l)
    }

    fn in_expr(&mut self) -> R<Expr> {
        let mut l = self.matching()?;
        while !self.no_in && self.eat("in") {
            let a = self.array_name()?;
            l = Expr::In(vec![l], a);
        }
        Ok(l)
    }

    fn matching(&mut self) -> R<Expr> {
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

    fn comparison(&mut self) -> R<Expr> {
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

    fn concat_no_gt(&mut self) -> R<Expr> {
        let old = std::mem::replace(&mut self.no_gt, true);
        let e = self.concat();
        self.no_gt = old;
        e
    }

    fn concat(&mut self) -> R<Expr> {
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

    fn additive(&mut self) -> R<Expr> {
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

    fn multiplicative(&mut self) -> R<Expr> {
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

    fn unary(&mut self) -> R<Expr> {
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

    fn power(&mut self) -> R<Expr> {
        let base = self.postfix()?;
        if self.eat("^") {
            // Right-associative, and the exponent may have a sign: `2^-1`.
            let exp = self.unary()?;
            return Ok(Expr::Binary("^", Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> R<Expr> {
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

    fn primary_lvalue(&mut self) -> R<Expr> {
        let e = self.primary()?;
        if is_lvalue(&e) { Ok(e) } else { self.error() }
    }

    fn primary(&mut self) -> R<Expr> {
        self.enter()?;
        let e = self.primary_inner()?;
        self.depth -= 1;
        Ok(e)
    }

    fn primary_inner(&mut self) -> R<Expr> {
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
