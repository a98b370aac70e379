//! bc's grammar as GNU bc 1.07 reads it: tokens, statements up to the end of a line (an
//! "input item", run as soon as it is complete), function definitions, GNU's precedence
//! (assignment binds tighter than comparisons, unary minus tighter than `^`), its parse-time
//! `quit` and `limits`, and its messages for what POSIX bc lacks (`-w` warns, `-s` refuses).
//!
//! GNU compiles each item to byte code and names the byte of a runtime error
//! (`adr=`); the parser counts those bytes as GNU lays them out, so that the messages say the
//! same addresses.

use super::num::Num;
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::io::Read;

#[derive(Clone, Debug, PartialEq)]
enum T {
    Num(String),
    Name(String),
    Str(String),
    Kw(&'static str),
    Sym(&'static str),
    Newline,
    Eof,
}

/// How deep the parser nests before it calls the input a syntax error.
const MAX_NESTING: usize = 400;

const KEYWORDS: &[&str] = &[
    "auto", "break", "continue", "define", "else", "for", "halt", "ibase", "if", "last", "length",
    "limits", "obase", "print", "quit", "read", "return", "scale", "sqrt", "void", "warranty",
    "while",
];

const SYMBOLS: &[&str] = &[
    "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "==", "!=", "<=", ">=", "&&", "||", "+", "-",
    "*", "/", "%", "^", "=", "<", ">", "!", "(", ")", "[", "]", "{", "}", ",", ";", ".",
];

/// The tokens of the files named and then of stdin, one stream (a line may go on in the next
/// file, as in GNU's), each file read when the one before is done.
struct Lexer {
    text: Vec<char>,
    at: usize,
    line: usize,
    /// `(standard_in)` or the file's name, for messages.
    wher: String,
    /// The files still to read (`None`: stdin).
    pending: VecDeque<Option<String>>,
    /// A file that could not be read: the end of the program.
    unavailable: Option<String>,
    /// `-i`: stdin's lines are echoed as they are read (as GNU's readline does when stdin is
    /// no terminal).
    interactive: bool,
    stdin: bool,
    echoed: usize,
    echo: String,
    /// Messages for stderr, for the caller to print after what the items before printed.
    errs: String,
    /// `-s`: `#` is no comment.
    standard: bool,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.text.get(self.at + ahead).copied()
    }

    fn is_digit(c: char) -> bool {
        c.is_ascii_digit() || c.is_ascii_uppercase()
    }

    /// The next token and the line GNU says it is on (a newline's is the next line: GNU
    /// counts it when it reads it).
    fn next(&mut self) -> (T, usize) {
        loop {
            if self.interactive && self.stdin && self.at >= self.echoed && self.at < self.text.len()
            {
                let end = (self.text[self.at..].iter().position(|&c| c == '\n'))
                    .map_or(self.text.len(), |n| self.at + n + 1);
                self.echo.extend(&self.text[self.at..end]);
                self.echoed = end;
            }
            let Some(c) = self.peek(0) else {
                if self.unavailable.is_none()
                    && let Some(next) = self.pending.pop_front()
                {
                    self.open(next);
                    continue;
                }
                return (T::Eof, self.line);
            };
            match c {
                ' ' | '\t' => self.at += 1,
                '\\' if self.peek(1) == Some('\n') => {
                    self.at += 2;
                    self.line += 1;
                }
                '\n' => {
                    self.at += 1;
                    self.line += 1;
                    return (T::Newline, self.line);
                }
                '#' => {
                    // POSIX bc has no `#` comments (GNU says so, and skips it still).
                    if self.standard {
                        self.illegal('#');
                    }
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '/' if self.peek(1) == Some('*') => {
                    self.at += 2;
                    loop {
                        match self.peek(0) {
                            None => {
                                self.errs.push_str("EOF encountered in a comment.\n");
                                return (T::Eof, self.line);
                            }
                            Some('*') if self.peek(1) == Some('/') => {
                                self.at += 2;
                                break;
                            }
                            Some(c) => {
                                if c == '\n' {
                                    self.line += 1;
                                }
                                self.at += 1;
                            }
                        }
                    }
                }
                '"' => {
                    let start = self.at + 1;
                    match self.text[start..].iter().position(|&c| c == '"') {
                        Some(len) => {
                            let s: String = self.text[start..start + len].iter().collect();
                            self.line += s.matches('\n').count();
                            self.at = start + len + 1;
                            return (T::Str(s), self.line);
                        }
                        None => {
                            self.illegal('"');
                            self.at += 1;
                        }
                    }
                }
                c if Self::is_digit(c)
                    || (c == '.' && self.peek(1).is_some_and(Self::is_digit)) =>
                {
                    return (T::Num(self.number()), self.line);
                }
                c if c.is_ascii_lowercase() => {
                    let start = self.at;
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    {
                        self.at += 1;
                    }
                    let word: String = self.text[start..self.at].iter().collect();
                    let t = match KEYWORDS.iter().find(|k| **k == word) {
                        Some(k) => T::Kw(k),
                        None => T::Name(word),
                    };
                    return (t, self.line);
                }
                _ => {
                    let rest = &self.text[self.at..];
                    let sym = SYMBOLS.iter().find(|s| {
                        s.chars().count() <= rest.len() && s.chars().zip(rest).all(|(a, b)| a == *b)
                    });
                    match sym {
                        Some(s) => {
                            self.at += s.len();
                            return (T::Sym(s), self.line);
                        }
                        None => {
                            self.illegal(c);
                            self.at += 1;
                        }
                    }
                }
            }
        }
    }

    /// Starts reading `file` (`None`: stdin).
    fn open(&mut self, file: Option<String>) {
        let mut bytes = Vec::new();
        let read = match &file {
            None => std::io::stdin().read_to_end(&mut bytes).map(|_| ()),
            Some(f) => {
                std::fs::File::open(f).and_then(|mut f| f.read_to_end(&mut bytes).map(|_| ()))
            }
        };
        if read.is_err() {
            self.unavailable = Some(file.unwrap_or_else(|| "-".into()));
            return;
        }
        self.text = String::from_utf8_lossy(&bytes).chars().collect();
        self.at = 0;
        self.line = 1;
        self.stdin = file.is_none();
        self.echoed = 0;
        self.wher = file.unwrap_or_else(|| "(standard_in)".into());
    }

    fn illegal(&mut self, c: char) {
        let msg = format!("{} {}: illegal character: {c}\n", self.wher, self.line);
        self.errs.push_str(&msg);
    }

    /// Digits (0-9 and A-Z), a point and more digits; a backslash-newline inside is skipped.
    fn number(&mut self) -> String {
        let mut s = String::new();
        let mut point = false;
        loop {
            match self.peek(0) {
                Some(c) if Self::is_digit(c) => s.push(c),
                Some('.') if !point => {
                    point = true;
                    s.push('.');
                }
                Some('\\') if self.peek(1) == Some('\n') => {
                    self.at += 1;
                    self.line += 1;
                }
                _ => return s,
            }
            self.at += 1;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

#[derive(Debug, Clone, Copy)]
pub enum Rel {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// What can be assigned.
#[derive(Debug)]
pub enum Lv {
    Var(String),
    Elem(String, Box<Expr>),
    Scale,
    Ibase,
    Obase,
    Last,
}

#[derive(Debug)]
pub enum Expr {
    /// Converted when run, in the `ibase` of that moment (as GNU does); the last conversion
    /// kept.
    Const(String, RefCell<Option<(u32, Num)>>),
    Load(Lv, usize),
    /// `lv op= rhs` (`op` none for `=`): the address of the operation, of the store.
    Assign(Lv, Option<Op>, Box<Expr>, usize, usize),
    Bin(Op, Box<Expr>, Box<Expr>, usize),
    Rel(Rel, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `++x` / `x--`...: the change, whether before, the address.
    IncDec(Lv, i64, bool, usize),
    /// The address of the call, and after its parameter list.
    Call(String, Vec<Arg>, usize, usize),
    Length(Box<Expr>),
    Sqrt(Box<Expr>, usize),
    ScaleOf(Box<Expr>),
    Read(usize),
    Paren(Box<Expr>),
}

#[derive(Debug)]
pub enum Arg {
    Value(Expr),
    Array(String),
}

/// What a `print` statement prints: a string (with escapes) or a number.
#[derive(Debug)]
pub enum PrintItem {
    Str(String),
    Expr(Expr),
}

#[derive(Debug)]
pub enum Stmt {
    /// An expression, and whether its value is printed (not for an assignment).
    Expr(Expr, bool),
    Str(String),
    Print(Vec<PrintItem>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    Block(Vec<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    Halt,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    Scalar,
    Array,
    /// `*a[]`: GNU's array by reference.
    ArrayRef,
}

#[derive(Debug)]
pub struct Func {
    pub name: String,
    pub params: Vec<(String, ParamKind)>,
    /// Names, and whether each is an array.
    pub autos: Vec<(String, bool)>,
    pub body: Vec<Stmt>,
    pub void: bool,
}

pub enum Item {
    Run(Vec<Stmt>),
    Define(Func),
    /// Nothing to run: an error was said.
    Skip,
    Quit,
    Eof,
}

enum PErr {
    Syntax,
    Quit,
}

type P<X> = Result<X, PErr>;

#[derive(Clone, Copy, Default)]
pub struct Mode {
    /// `-s`: POSIX bc only, the rest refused.
    pub standard: bool,
    /// `-w`: warnings for what is not POSIX.
    pub warn: bool,
}

pub struct Parser<'v> {
    lx: Lexer,
    tok: T,
    /// The token after an item's last newline is read when the next item is asked for, not
    /// before the item runs (`-i` echoes each line as it is read).
    deferred: bool,
    line: usize,
    mode: Mode,
    /// Bytes of GNU's code for the current item or function so far.
    pc: usize,
    in_func: bool,
    loops: usize,
    had_error: bool,
    /// Functions defined `void` so far (their value cannot be used).
    voids: &'v mut HashSet<String>,
    /// How deep expressions and statements nest at this point.
    depth: usize,
    /// What `limits` and `warranty` print as they are read, for the caller to print in order.
    pub said: String,
}

impl<'v> Parser<'v> {
    /// A parser of the files (then stdin).
    pub fn new(
        files: &[String],
        mode: Mode,
        interactive: bool,
        voids: &'v mut HashSet<String>,
    ) -> Self {
        let mut pending: VecDeque<Option<String>> = files.iter().cloned().map(Some).collect();
        pending.push_back(None);
        let lx = Lexer {
            text: Vec::new(),
            at: 0,
            line: 1,
            wher: String::new(),
            pending,
            unavailable: None,
            interactive,
            stdin: false,
            echoed: 0,
            echo: String::new(),
            errs: String::new(),
            standard: mode.standard,
        };
        Parser {
            lx,
            tok: T::Eof,
            line: 1,
            deferred: true,
            mode,
            pc: 0,
            in_func: false,
            loops: 0,
            had_error: false,
            voids,
            said: String::new(),
            depth: 0,
        }
    }

    /// A parser of `text` alone, as stdin (for the tests).
    #[cfg(test)]
    pub fn of_text(text: &str, voids: &'v mut HashSet<String>) -> Self {
        let mut p = Parser::new(&[], Mode::default(), false, voids);
        p.lx.pending.clear();
        p.lx.text = text.chars().collect();
        p.lx.stdin = true;
        p.lx.wher = "(standard_in)".into();
        p
    }

    fn advance(&mut self) {
        (self.tok, self.line) = self.lx.next();
    }

    fn say(&mut self, msg: &str) {
        let line = format!("{} {}: {msg}\n", self.lx.wher, self.line);
        self.lx.errs.push_str(&line);
        self.had_error = true;
    }

    /// The file that could not be read, when that ended the program.
    pub fn unavailable(&self) -> Option<&str> {
        self.lx.unavailable.as_deref()
    }

    /// The lines `-i` echoes, since the last call.
    pub fn take_echo(&mut self) -> String {
        std::mem::take(&mut self.lx.echo)
    }

    /// The messages said since the last call.
    pub fn take_errors(&mut self) -> String {
        std::mem::take(&mut self.lx.errs)
    }

    /// GNU's note on what POSIX bc does not have.
    fn extension(&mut self, what: &str) {
        let line = if self.mode.standard {
            self.had_error = true;
            format!("{} {}: Error: {what}\n", self.lx.wher, self.line)
        } else if self.mode.warn {
            format!("{} {}: (Warning) {what}\n", self.lx.wher, self.line)
        } else {
            return;
        };
        self.lx.errs.push_str(&line);
    }

    fn is(&self, sym: &str) -> bool {
        self.tok
            == T::Sym(match SYMBOLS.iter().find(|s| **s == sym) {
                Some(s) => s,
                None => return false,
            })
    }

    fn expect(&mut self, sym: &str) -> P<()> {
        if self.is(sym) {
            self.advance();
            Ok(())
        } else {
            Err(PErr::Syntax)
        }
    }

    fn skip_newline(&mut self) {
        if self.tok == T::Newline {
            self.advance();
        }
    }

    /// The next input item: statements to the end of a line, or a function.
    pub fn item(&mut self) -> Item {
        if std::mem::take(&mut self.deferred) {
            self.advance();
        }
        self.pc = 0;
        self.depth = 0;
        self.had_error = false;
        self.in_func = false;
        self.loops = 0;
        match self.try_item() {
            Ok(Item::Run(_) | Item::Define(_)) if self.had_error => Item::Skip,
            Ok(item) => item,
            Err(PErr::Quit) => Item::Quit,
            Err(PErr::Syntax) => {
                let line = format!("{} {}: syntax error\n", self.lx.wher, self.line);
                self.lx.errs.push_str(&line);
                // As GNU's `error ENDOFLINE`: the rest of the line goes.
                loop {
                    match self.tok {
                        T::Newline => {
                            self.deferred = true;
                            break;
                        }
                        T::Eof => break,
                        _ => self.advance(),
                    }
                }
                Item::Skip
            }
        }
    }

    fn try_item(&mut self) -> P<Item> {
        match self.tok {
            T::Eof => return Ok(Item::Eof),
            T::Kw("define") => return self.define(),
            _ => {}
        }
        let mut stmts = Vec::new();
        loop {
            match &self.tok {
                T::Newline => {
                    self.deferred = true;
                    return Ok(Item::Run(stmts));
                }
                T::Eof => return Err(PErr::Syntax),
                T::Sym(";") => self.advance(),
                _ => {
                    stmts.push(self.statement()?);
                    if !(self.is(";") || self.tok == T::Newline) {
                        return Err(PErr::Syntax);
                    }
                }
            }
        }
    }

    fn define(&mut self) -> P<Item> {
        self.advance();
        let void = self.tok == T::Kw("void");
        if void {
            self.extension("void functions");
            self.advance();
        }
        let name = self.name()?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.is(")") {
            loop {
                let by_ref = self.is("*");
                if by_ref {
                    self.extension("Call by variable arrays");
                    self.advance();
                }
                let p = self.name()?;
                let kind = if self.is("[") {
                    self.advance();
                    self.expect("]")?;
                    if by_ref {
                        ParamKind::ArrayRef
                    } else {
                        ParamKind::Array
                    }
                } else if by_ref {
                    return Err(PErr::Syntax);
                } else {
                    ParamKind::Scalar
                };
                params.push((p, kind));
                if !self.is(",") {
                    break;
                }
                self.advance();
            }
        }
        self.expect(")")?;
        self.skip_newline();
        self.expect("{")?;
        if self.tok == T::Newline {
            self.advance();
        } else {
            self.extension("End of line required");
        }
        for _ in params.iter().filter(|p| p.1 == ParamKind::ArrayRef) {
            self.extension("Variable array parameter");
        }
        while self.tok == T::Newline {
            self.advance();
        }
        let mut autos = Vec::new();
        if self.tok == T::Kw("auto") {
            self.advance();
            loop {
                let a = self.name()?;
                let array = self.is("[");
                if array {
                    self.advance();
                    self.expect("]")?;
                }
                autos.push((a, array));
                if !self.is(",") {
                    break;
                }
                self.advance();
            }
            if self.tok == T::Newline || self.is(";") {
                self.advance();
            } else {
                return Err(PErr::Syntax);
            }
        }
        self.in_func = true;
        self.pc = 0;
        let body = self.statement_list()?;
        self.expect("}")?;
        self.in_func = false;
        if !self.had_error {
            if void {
                self.voids.insert(name.clone());
            } else {
                self.voids.remove(&name);
            }
        }
        Ok(Item::Define(Func {
            name,
            params,
            autos,
            body,
            void,
        }))
    }

    /// A name (of a variable, array or function), with GNU's note on longer ones.
    fn name(&mut self) -> P<String> {
        let T::Name(n) = &self.tok else {
            return Err(PErr::Syntax);
        };
        let n = n.clone();
        if n.len() > 1 {
            self.extension(&format!("multiple letter name - {n}"));
        }
        self.advance();
        Ok(n)
    }

    /// Statements separated by newlines and `;`, up to a `}`.
    fn statement_list(&mut self) -> P<Vec<Stmt>> {
        let mut stmts = Vec::new();
        loop {
            match &self.tok {
                T::Newline | T::Sym(";") => self.advance(),
                T::Sym("}") => return Ok(stmts),
                T::Eof => return Err(PErr::Syntax),
                _ => {
                    stmts.push(self.statement()?);
                    if !(self.is(";") || self.is("}") || self.tok == T::Newline) {
                        return Err(PErr::Syntax);
                    }
                }
            }
        }
    }

    fn starts_expression(&self) -> bool {
        matches!(
            &self.tok,
            T::Num(_)
                | T::Name(_)
                | T::Kw("scale" | "ibase" | "obase" | "last" | "length" | "sqrt" | "read")
                | T::Sym("(" | "-" | "!" | "++" | "--" | ".")
        )
    }

    fn statement(&mut self) -> P<Stmt> {
        if self.depth >= MAX_NESTING {
            return Err(PErr::Syntax);
        }
        self.depth += 1;
        let s = self.statement_inner();
        self.depth -= 1;
        s
    }

    fn statement_inner(&mut self) -> P<Stmt> {
        match self.tok.clone() {
            T::Str(s) => {
                self.advance();
                self.pc += s.len() + 2;
                Ok(Stmt::Str(s))
            }
            T::Kw("quit") => Err(PErr::Quit),
            T::Kw("break") => {
                if self.loops == 0 {
                    self.say("Break outside a for/while");
                }
                self.advance();
                self.pc += 3;
                Ok(Stmt::Break)
            }
            T::Kw("continue") => {
                self.extension("Continue statement");
                if self.loops == 0 {
                    self.say("Continue outside a for");
                }
                self.advance();
                self.pc += 3;
                Ok(Stmt::Continue)
            }
            T::Kw("halt") => {
                self.advance();
                self.pc += 1;
                Ok(Stmt::Halt)
            }
            T::Kw("return") => {
                if !self.in_func {
                    self.say("Return outside of a function.");
                }
                self.advance();
                if self.starts_expression() {
                    let e = self.expr(0)?;
                    if !matches!(e, Expr::Paren(_)) {
                        self.extension("return expression requires parenthesis");
                    }
                    self.pc += 1;
                    Ok(Stmt::Return(Some(e)))
                } else {
                    self.pc += 2;
                    Ok(Stmt::Return(None))
                }
            }
            T::Kw("if") => {
                self.advance();
                self.expect("(")?;
                let cond = self.expr(0)?;
                self.expect(")")?;
                self.pc += 3;
                self.skip_newline();
                let then = self.statement()?;
                let els = if self.tok == T::Kw("else") {
                    self.extension("else clause in if statement");
                    self.advance();
                    self.pc += 3;
                    self.skip_newline();
                    Some(Box::new(self.statement()?))
                } else {
                    None
                };
                Ok(Stmt::If(cond, Box::new(then), els))
            }
            T::Kw("while") => {
                self.advance();
                self.expect("(")?;
                let cond = self.expr(0)?;
                self.expect(")")?;
                self.pc += 3;
                self.skip_newline();
                let body = self.loop_body()?;
                self.pc += 3;
                Ok(Stmt::While(cond, Box::new(body)))
            }
            T::Kw("for") => {
                self.advance();
                self.expect("(")?;
                let init = self.for_part(";", 1)?;
                self.expect(";")?;
                let cond = self.for_part(";", 0)?;
                if cond.is_none() {
                    self.pc += 1;
                }
                self.expect(";")?;
                self.pc += 6;
                let step = self.for_part(")", 1)?;
                self.expect(")")?;
                self.pc += 3;
                self.skip_newline();
                let body = self.loop_body()?;
                self.pc += 3;
                Ok(Stmt::For(init, cond, step, Box::new(body)))
            }
            T::Sym("{") => {
                self.advance();
                let stmts = self.statement_list()?;
                self.expect("}")?;
                Ok(Stmt::Block(stmts))
            }
            T::Kw("print") => {
                self.advance();
                self.extension("print statement");
                let mut items = Vec::new();
                loop {
                    if let T::Str(s) = &self.tok {
                        self.pc += s.len() + 2;
                        items.push(PrintItem::Str(s.clone()));
                        self.advance();
                    } else {
                        items.push(PrintItem::Expr(self.expr(0)?));
                        self.pc += 1;
                    }
                    if !self.is(",") {
                        break;
                    }
                    self.advance();
                }
                Ok(Stmt::Print(items))
            }
            T::Kw("limits") => {
                self.advance();
                self.said.push_str(
                    "BC_BASE_MAX     = 2147483647\nBC_DIM_MAX      = 16777215\n\
                     BC_SCALE_MAX    = 2147483647\nBC_STRING_MAX   = 2147483647\n\
                     MAX Exponent    = 9223372036854775807\nNumber of vars  = 32767\n",
                );
                Ok(Stmt::Block(Vec::new()))
            }
            T::Kw("warranty") => {
                self.advance();
                self.said.push_str(super::WARRANTY);
                Ok(Stmt::Block(Vec::new()))
            }
            _ => {
                let e = self.expr(0)?;
                if has_comparison(&e) {
                    self.extension("comparison in expression");
                }
                self.pc += 1;
                let print = !matches!(e, Expr::Assign(..));
                Ok(Stmt::Expr(e, print))
            }
        }
    }

    fn loop_body(&mut self) -> P<Stmt> {
        self.loops += 1;
        let body = self.statement();
        self.loops -= 1;
        body
    }

    /// One of a `for`'s three expressions, or none (GNU's extension); `pop` bytes after it.
    fn for_part(&mut self, end: &str, pop: usize) -> P<Option<Expr>> {
        if self.is(end) {
            self.extension("Missing expression in for statement");
            return Ok(None);
        }
        let e = self.expr(0)?;
        self.pc += pop;
        Ok(Some(e))
    }

    fn expr(&mut self, min: u8) -> P<Expr> {
        // GNU's parser gives up nesting this deep (its stack is 10000 long); ours would
        // overflow the WebAssembly stack first.
        if self.depth >= MAX_NESTING {
            return Err(PErr::Syntax);
        }
        self.depth += 1;
        let left = self.prefix();
        let e = left.and_then(|left| self.infix(min, left));
        self.depth -= 1;
        e
    }

    fn infix(&mut self, min: u8, mut left: Expr) -> P<Expr> {
        loop {
            let T::Sym(sym) = self.tok else {
                return Ok(left);
            };
            let bp = match sym {
                "||" => 1,
                "&&" => 2,
                "<" | "<=" | ">" | ">=" | "==" | "!=" => 4,
                "+" | "-" => 6,
                "*" | "/" | "%" => 7,
                "^" => 8,
                _ => return Ok(left),
            };
            if bp < min {
                return Ok(left);
            }
            self.advance();
            left = match sym {
                "||" => {
                    self.extension("|| operator");
                    self.pc += 3;
                    let right = self.expr(2)?;
                    self.pc += 8;
                    Expr::Or(Box::new(left), Box::new(right))
                }
                "&&" => {
                    self.extension("&& operator");
                    self.pc += 5;
                    let right = self.expr(3)?;
                    self.pc += 6;
                    Expr::And(Box::new(left), Box::new(right))
                }
                _ if bp == 4 => {
                    let right = self.expr(5)?;
                    self.pc += 1;
                    let rel = match sym {
                        "<" => Rel::Lt,
                        "<=" => Rel::Le,
                        ">" => Rel::Gt,
                        ">=" => Rel::Ge,
                        "==" => Rel::Eq,
                        _ => Rel::Ne,
                    };
                    Expr::Rel(rel, Box::new(left), Box::new(right))
                }
                _ => {
                    let op = op_of(sym);
                    let right = self.expr(if op == Op::Pow { 8 } else { bp + 1 })?;
                    if self.is_void(&left) || self.is_void(&right) {
                        self.say(&format!("void expression with {sym}"));
                    }
                    self.pc += 1;
                    Expr::Bin(op, Box::new(left), Box::new(right), self.pc)
                }
            };
        }
    }

    fn is_void(&self, e: &Expr) -> bool {
        matches!(e, Expr::Call(name, ..) if self.voids.contains(name))
    }

    fn prefix(&mut self) -> P<Expr> {
        match self.tok.clone() {
            T::Num(text) => {
                self.advance();
                // GNU keeps constants without their leading zeros, 0 and 1 as one byte each.
                let kept = text.trim_start_matches('0');
                let kept = if kept.is_empty() { "0" } else { kept };
                self.pc += if kept == "0" || kept == "1" {
                    1
                } else {
                    kept.len() + 2
                };
                Ok(Expr::Const(text, RefCell::new(None)))
            }
            T::Sym("(") => {
                self.advance();
                let e = self.expr(0)?;
                self.expect(")")?;
                Ok(Expr::Paren(Box::new(e)))
            }
            T::Sym("-") => {
                self.advance();
                let e = self.expr(9)?;
                self.pc += 1;
                Ok(Expr::Neg(Box::new(e)))
            }
            T::Sym("!") => {
                self.extension("! operator");
                self.advance();
                let e = self.expr(3)?;
                self.pc += 1;
                Ok(Expr::Not(Box::new(e)))
            }
            T::Sym(s @ ("++" | "--")) => {
                self.advance();
                let lv = self.lvalue()?;
                self.pc += 4;
                Ok(Expr::IncDec(
                    lv,
                    if s == "++" { 1 } else { -1 },
                    true,
                    self.pc,
                ))
            }
            T::Kw(k @ ("length" | "sqrt")) => {
                self.advance();
                self.expect("(")?;
                let e = Box::new(self.expr(0)?);
                self.expect(")")?;
                self.pc += 2;
                Ok(if k == "length" {
                    Expr::Length(e)
                } else {
                    Expr::Sqrt(e, self.pc)
                })
            }
            T::Kw("read") => {
                self.extension("read function");
                self.advance();
                self.expect("(")?;
                self.expect(")")?;
                self.pc += 2;
                Ok(Expr::Read(self.pc))
            }
            T::Kw("scale") => {
                self.advance();
                if self.is("(") {
                    self.advance();
                    let e = self.expr(0)?;
                    self.expect(")")?;
                    self.pc += 2;
                    Ok(Expr::ScaleOf(Box::new(e)))
                } else {
                    self.named(Lv::Scale)
                }
            }
            T::Kw("ibase") => {
                self.advance();
                self.named(Lv::Ibase)
            }
            T::Kw("obase") => {
                self.advance();
                self.named(Lv::Obase)
            }
            T::Kw("last") | T::Sym(".") => {
                self.extension("Last variable");
                self.advance();
                self.named(Lv::Last)
            }
            T::Name(_) => {
                let name = self.name()?;
                if self.is("(") {
                    self.advance();
                    return self.call(name);
                }
                let lv = self.subscript(name)?;
                self.named(lv)
            }
            _ => Err(PErr::Syntax),
        }
    }

    /// `name` or `name[index]`, the name read.
    fn subscript(&mut self, name: String) -> P<Lv> {
        if !self.is("[") {
            return Ok(Lv::Var(name));
        }
        self.advance();
        let index = self.expr(0)?;
        self.expect("]")?;
        Ok(Lv::Elem(name, Box::new(index)))
    }

    fn lvalue(&mut self) -> P<Lv> {
        match self.tok.clone() {
            T::Kw("scale") => Ok(self.take(Lv::Scale)),
            T::Kw("ibase") => Ok(self.take(Lv::Ibase)),
            T::Kw("obase") => Ok(self.take(Lv::Obase)),
            T::Kw("last") | T::Sym(".") => {
                self.extension("Last variable");
                Ok(self.take(Lv::Last))
            }
            T::Name(_) => {
                let name = self.name()?;
                self.subscript(name)
            }
            _ => Err(PErr::Syntax),
        }
    }

    fn take(&mut self, lv: Lv) -> Lv {
        self.advance();
        lv
    }

    /// What follows a named expression: an assignment, `++`/`--`, or nothing (a load).
    fn named(&mut self, lv: Lv) -> P<Expr> {
        let op = match self.tok {
            T::Sym("=") => None,
            T::Sym("+=") => Some(Op::Add),
            T::Sym("-=") => Some(Op::Sub),
            T::Sym("*=") => Some(Op::Mul),
            T::Sym("/=") => Some(Op::Div),
            T::Sym("%=") => Some(Op::Rem),
            T::Sym("^=") => Some(Op::Pow),
            T::Sym(s @ ("++" | "--")) => {
                self.advance();
                self.pc += 4;
                return Ok(Expr::IncDec(
                    lv,
                    if s == "++" { 1 } else { -1 },
                    false,
                    self.pc,
                ));
            }
            _ => {
                self.pc += 2;
                return Ok(Expr::Load(lv, self.pc));
            }
        };
        self.advance();
        if op.is_some() {
            self.pc += 2;
        }
        let rhs = self.expr(5)?;
        if self.is_void(&rhs) {
            self.say("Assignment of a void expression");
        }
        if op.is_some() {
            self.pc += 1;
        }
        let op_adr = self.pc;
        self.pc += 2;
        Ok(Expr::Assign(lv, op, Box::new(rhs), op_adr, self.pc))
    }

    /// A call's arguments, after its `(`: expressions, or `name[]` for an array.
    fn call(&mut self, name: String) -> P<Expr> {
        let mut args = Vec::new();
        if !self.is(")") {
            loop {
                args.push(self.argument()?);
                if !self.is(",") {
                    break;
                }
                self.advance();
            }
        }
        self.expect(")")?;
        self.pc += 2;
        let adr = self.pc;
        self.pc += args.len() + 1;
        Ok(Expr::Call(name, args, adr, self.pc))
    }

    fn argument(&mut self) -> P<Arg> {
        let T::Name(_) = self.tok else {
            return Ok(Arg::Value(self.expr(0)?));
        };
        let name = self.name()?;
        let first = if self.is("(") {
            self.advance();
            self.call(name)?
        } else if self.is("[") {
            self.advance();
            if self.is("]") {
                self.advance();
                self.pc += 2;
                return Ok(Arg::Array(name));
            }
            let index = self.expr(0)?;
            self.expect("]")?;
            self.named(Lv::Elem(name, Box::new(index)))?
        } else {
            self.named(Lv::Var(name))?
        };
        Ok(Arg::Value(self.infix(0, first)?))
    }
}

fn op_of(sym: &str) -> Op {
    match sym {
        "+" => Op::Add,
        "-" => Op::Sub,
        "*" => Op::Mul,
        "/" => Op::Div,
        "%" => Op::Rem,
        _ => Op::Pow,
    }
}

/// Whether a comparison is part of the expression (POSIX allows them only in conditions).
fn has_comparison(e: &Expr) -> bool {
    match e {
        Expr::Rel(..) => true,
        Expr::Bin(_, a, b, _) | Expr::And(a, b) | Expr::Or(a, b) => {
            has_comparison(a) || has_comparison(b)
        }
        Expr::Neg(a) | Expr::Not(a) | Expr::Paren(a) | Expr::Assign(_, _, a, _, _) => {
            has_comparison(a)
        }
        _ => false,
    }
}
