//! awk's grammar: the tokens of [`super::lexer`] parsed by recursive descent into rules,
//! functions, statements and expressions, with POSIX precedence (the `>` of `print` is a
//! redirection unless in parentheses, concatenation is juxtaposition). Nesting is bounded so
//! that a hostile program cannot exhaust the stack while it is parsed, and what needs a process
//! (`| cmd`, `cmd | getline`, `system`) is refused here, before anything runs.

use std::collections::HashMap;

use super::lexer::Tok;

/// How deep statements and expressions may nest: far beyond what a person writes, well inside
/// the WebAssembly stack (each level costs a dozen Rust frames while parsing and running).
pub(super) const MAX_NESTING: usize = 100;

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

pub(super) struct Parser {
    pub(super) toks: Vec<(Tok, usize)>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    /// The parameters of the function being parsed, and which are used as arrays.
    pub(super) params: Option<(Vec<String>, Vec<bool>)>,
    /// Functions by name: their index, and the line of a first call (to report undefined ones).
    pub(super) names: HashMap<String, usize>,
    pub(super) called: Vec<(String, usize)>,
    pub(super) defined: Vec<Option<Function>>,
    /// Inside `print`'s list, unparenthesized: `>` redirects.
    pub(super) no_gt: bool,
    /// Inside `for (` ... `;`: `in` is not an operator there.
    pub(super) no_in: bool,
    pub(super) regexes: Vec<String>,
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

pub(super) type R<T> = Result<T, String>;

impl Parser {
    pub(super) fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].0
    }

    pub(super) fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].0
    }

    pub(super) fn line(&self) -> usize {
        self.toks[self.pos.min(self.toks.len() - 1)].1
    }

    pub(super) fn advance(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    pub(super) fn error<T>(&self) -> R<T> {
        Err(format!(
            "line {}: syntax error at or near {}",
            self.line(),
            self.peek().show()
        ))
    }

    pub(super) fn refuse<T>(&self, what: &str) -> R<T> {
        Err(format!(
            "line {}: {what} is not supported: there are no processes in the sandbox (write to a file, then run the command on it)",
            self.line()
        ))
    }

    pub(super) fn eat(&mut self, op: &str) -> bool {
        if self.peek().is(op) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, op: &str) -> R<()> {
        if self.eat(op) { Ok(()) } else { self.error() }
    }

    pub(super) fn newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.advance();
        }
    }

    pub(super) fn terminators(&mut self) {
        while *self.peek() == Tok::Newline || self.peek().is(";") {
            self.advance();
        }
    }

    pub(super) fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "line {}: the program nests deeper than {MAX_NESTING} levels",
                self.line()
            ));
        }
        Ok(())
    }

    pub(super) fn program(&mut self, prog: &mut Program) -> R<()> {
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

    pub(super) fn function_index(&mut self, name: &str) -> usize {
        if let Some(i) = self.names.get(name) {
            return *i;
        }
        self.names.insert(name.to_owned(), self.defined.len());
        self.defined.push(None);
        self.defined.len() - 1
    }

    pub(super) fn function(&mut self) -> R<()> {
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

    pub(super) fn block(&mut self) -> R<Vec<Stmt>> {
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
    pub(super) fn end_simple(&mut self) -> R<()> {
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

    pub(super) fn body(&mut self) -> R<Stmt> {
        self.newlines();
        if self.eat(";") {
            return Ok(Stmt::Block(Vec::new()));
        }
        self.stmt()
    }

    pub(super) fn stmt(&mut self) -> R<Stmt> {
        self.enter()?;
        let s = self.stmt_inner()?;
        self.depth -= 1;
        Ok(s)
    }

    pub(super) fn stmt_inner(&mut self) -> R<Stmt> {
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

    pub(super) fn simple_expr_no_in(&mut self) -> R<Expr> {
        let old = std::mem::replace(&mut self.no_in, true);
        let e = self.expr();
        self.no_in = old;
        e
    }

    pub(super) fn simple_stmt(&mut self) -> R<Stmt> {
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

    pub(super) fn ends_simple(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof) || self.peek().is(";") || self.peek().is("}")
    }

    pub(super) fn print_args(&mut self) -> R<Vec<Expr>> {
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

    pub(super) fn expr_list(&mut self) -> R<Vec<Expr>> {
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

    pub(super) fn array_name(&mut self) -> R<Var> {
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

    pub(super) fn var(&self, name: &str) -> Var {
        if let Some((params, _)) = &self.params {
            if let Some(i) = params.iter().position(|p| p == name) {
                return Var::Local(i);
            }
        }
        Var::Global(name.to_owned())
    }
}
