//! Running a parsed awk program: variables and associative arrays, the record and its fields,
//! statements and expressions, user functions (with a bound on how deep calls nest) and the
//! built-in functions. Errors and `next`/`exit` travel as [`Jump`]s through `Result`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufWriter, Stdout, Write};
use std::rc::Rc;

use regex::{Regex, RegexBuilder};

use super::format::sprintf;
use super::io::{Outputs, Reader};
use super::parser::{Expr, Program, Redirect, Stmt, Var};
use super::value::{Value, num_to_str};

/// How deep user functions may call each other: recursion that deep is a runaway, and each
/// call costs WebAssembly stack.
const MAX_CALL_DEPTH: usize = 200;

pub type Array = Rc<RefCell<BTreeMap<String, Value>>>;

#[derive(Clone)]
pub enum Cell {
    Val(Value),
    Arr(Array),
}

/// What stops the normal flow of statements beyond a loop or a function.
pub enum Jump {
    Next,
    NextFile,
    Exit,
    Error(String),
}

enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
}

pub(super) type R<T> = Result<T, Jump>;

pub(super) fn fail<T>(msg: impl Into<String>) -> R<T> {
    Err(Jump::Error(msg.into()))
}

/// The main input: the operands of ARGV in turn, or stdin.
#[derive(Default)]
struct MainInput {
    next_arg: usize,
    current: Option<Reader>,
    opened_any: bool,
    done: bool,
}

pub struct Interp<'p> {
    pub(super) prog: &'p Program,
    pub(super) globals: HashMap<String, Cell>,
    pub(super) frames: Vec<Vec<Cell>>,
    pub(super) record: String,
    pub(super) fields: Vec<String>,
    pub(super) literals: Vec<Regex>,
    pub(super) cache: HashMap<String, Regex>,
    pub(super) stdout: BufWriter<Stdout>,
    pub(super) outputs: Outputs,
    pub(super) inputs: HashMap<String, Reader>,
    main: MainInput,
    pub range_active: Vec<bool>,
    pub(super) seed: f64,
    pub(super) rng: u64,
    pub exit_code: i32,
}

impl<'p> Interp<'p> {
    pub fn new(prog: &'p Program) -> Result<Interp<'p>, String> {
        let literals = prog
            .regexes
            .iter()
            .map(|r| compile(r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut it = Interp {
            prog,
            globals: HashMap::new(),
            frames: Vec::new(),
            record: String::new(),
            fields: Vec::new(),
            literals,
            cache: HashMap::new(),
            stdout: BufWriter::new(io::stdout()),
            outputs: Outputs::default(),
            inputs: HashMap::new(),
            main: MainInput {
                next_arg: 1,
                ..MainInput::default()
            },
            range_active: vec![false; prog.rules.len()],
            seed: 0.0,
            rng: 0x2545_f491_4f6c_dd1d,
            exit_code: 0,
        };
        for (name, value) in [
            ("FS", " "),
            ("OFS", " "),
            ("ORS", "\n"),
            ("RS", "\n"),
            ("SUBSEP", "\x1c"),
            ("CONVFMT", "%.6g"),
            ("OFMT", "%.6g"),
            ("FILENAME", ""),
        ] {
            it.set_global(name, Value::Str(value.into()));
        }
        for (name, n) in [
            ("NR", 0.0),
            ("FNR", 0.0),
            ("RSTART", 0.0),
            ("RLENGTH", -1.0),
        ] {
            it.set_global(name, Value::Num(n));
        }
        let env: BTreeMap<String, Value> = std::env::vars()
            .map(|(k, v)| (k, Value::input(v)))
            .collect();
        it.globals
            .insert("ENVIRON".into(), Cell::Arr(Rc::new(RefCell::new(env))));
        Ok(it)
    }

    pub fn set_argv(&mut self, args: &[String]) {
        let mut argv = BTreeMap::new();
        argv.insert("0".to_string(), Value::Str("awk".into()));
        for (i, a) in args.iter().enumerate() {
            argv.insert((i + 1).to_string(), Value::input(a.clone()));
        }
        self.globals
            .insert("ARGV".into(), Cell::Arr(Rc::new(RefCell::new(argv))));
        self.set_global("ARGC", Value::Num((args.len() + 1) as f64));
    }

    pub fn set_global(&mut self, name: &str, v: Value) {
        self.globals.insert(name.to_owned(), Cell::Val(v));
    }

    pub(super) fn global_str(&self, name: &str) -> String {
        match self.globals.get(name) {
            Some(Cell::Val(v)) => v.str(&self.convfmt()),
            _ => String::new(),
        }
    }

    pub(super) fn global_num(&self, name: &str) -> f64 {
        match self.globals.get(name) {
            Some(Cell::Val(v)) => v.num(),
            _ => 0.0,
        }
    }

    pub(super) fn convfmt(&self) -> String {
        match self.globals.get("CONVFMT") {
            Some(Cell::Val(Value::Str(s))) => s.clone(),
            _ => "%.6g".into(),
        }
    }

    pub(super) fn str_of(&self, v: &Value) -> String {
        v.str(&self.convfmt())
    }

    pub fn flush(&mut self) {
        let _ = self.stdout.flush();
        self.outputs.flush_all();
    }

    // The record and its fields.

    pub fn set_record(&mut self, s: String) {
        self.fields = self.split(&s, None);
        self.record = s;
    }

    pub(super) fn split(&mut self, s: &str, sep: Option<&Regex>) -> Vec<String> {
        if let Some(re) = sep {
            if s.is_empty() {
                return Vec::new();
            }
            return re.split(s).map(String::from).collect();
        }
        let fs = self.global_str("FS");
        let paragraph = self.global_str("RS").is_empty();
        self.split_by(s, &fs, paragraph)
    }

    pub(super) fn split_by(&mut self, s: &str, fs: &str, paragraph: bool) -> Vec<String> {
        if s.is_empty() {
            return Vec::new();
        }
        if fs == " " {
            return s
                .split([' ', '\t', '\n'])
                .filter(|f| !f.is_empty())
                .map(String::from)
                .collect();
        }
        if fs.is_empty() {
            return s.chars().map(String::from).collect();
        }
        let mut chars = fs.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c != '\\' {
                if paragraph && c != '\n' {
                    return s.split([c, '\n']).map(String::from).collect();
                }
                return s.split(c).map(String::from).collect();
            }
        }
        let pattern = if paragraph {
            format!("({fs})|\n")
        } else {
            fs.to_string()
        };
        match self.regex(&pattern) {
            Ok(re) => re.split(s).map(String::from).collect(),
            Err(_) => vec![s.to_string()],
        }
    }

    pub(super) fn field(&self, i: usize) -> Value {
        if i == 0 {
            return Value::input(self.record.clone());
        }
        match self.fields.get(i - 1) {
            Some(f) => Value::input(f.clone()),
            None => Value::Uninit,
        }
    }

    pub(super) fn rebuild(&mut self) {
        let ofs = self.global_str("OFS");
        self.record = self.fields.join(&ofs);
    }

    pub(super) fn set_field(&mut self, i: usize, s: String) -> R<()> {
        if i == 0 {
            self.set_record(s);
            return Ok(());
        }
        if i > 1_000_000 {
            return fail(format!("field index ${i} is too large"));
        }
        if self.fields.len() < i {
            self.fields.resize(i, String::new());
        }
        self.fields[i - 1] = s;
        self.rebuild();
        Ok(())
    }

    pub(super) fn set_nf(&mut self, n: f64) -> R<()> {
        if !(0.0..=1_000_000.0).contains(&n) {
            return fail(format!("NF set to {n}"));
        }
        self.fields.resize(n as usize, String::new());
        self.rebuild();
        Ok(())
    }

    // Input.

    /// The next record of the main input, or None at its end.
    pub fn next_main(&mut self) -> R<Option<String>> {
        loop {
            if self.main.done {
                return Ok(None);
            }
            if self.main.current.is_some() {
                let rs = self.global_str("RS");
                let re = if rs.chars().count() > 1 {
                    Some(self.regex(&rs)?)
                } else {
                    None
                };
                let Some(r) = self.main.current.as_mut() else {
                    continue;
                };
                match r.record(&rs, re.as_ref()) {
                    Ok(Some(rec)) => return Ok(Some(rec)),
                    Ok(None) => self.main.current = None,
                    Err(e) => return fail(format!("read error ({e})")),
                }
                continue;
            }
            let argc = self.global_num("ARGC").max(0.0) as usize;
            let mut opened = false;
            while self.main.next_arg < argc {
                let i = self.main.next_arg;
                self.main.next_arg += 1;
                let arg = self
                    .array(&Var::Global("ARGV".into()))?
                    .borrow()
                    .get(&i.to_string())
                    .map(|v| v.str("%.6g"))
                    .unwrap_or_default();
                if arg.is_empty() {
                    continue;
                }
                if let Some((name, value)) = assignment(&arg) {
                    self.assign_name(&name, Value::input(super::lexer::unescape(&value)))?;
                    continue;
                }
                self.main.opened_any = true;
                match Reader::open(&arg) {
                    Ok(r) => {
                        self.main.current = Some(r);
                        self.set_global("FILENAME", Value::Str(arg));
                        self.set_global("FNR", Value::Num(0.0));
                        opened = true;
                        break;
                    }
                    Err(e) => return fail(format!("cannot open {arg} ({})", describe(&e))),
                }
            }
            if opened {
                continue;
            }
            if !self.main.opened_any {
                self.main.opened_any = true;
                self.main.current = Reader::open("-").ok();
                continue;
            }
            self.main.done = true;
        }
    }

    pub fn skip_file(&mut self) {
        self.main.current = None;
    }

    pub fn count_record(&mut self) {
        let nr = self.global_num("NR") + 1.0;
        let fnr = self.global_num("FNR") + 1.0;
        self.set_global("NR", Value::Num(nr));
        self.set_global("FNR", Value::Num(fnr));
    }

    // Variables and arrays.

    pub(super) fn assign_name(&mut self, name: &str, v: Value) -> R<()> {
        if name == "NF" {
            return self.set_nf(v.num());
        }
        if let Some(Cell::Arr(_)) = self.globals.get(name) {
            return fail(format!("can't assign to {name}; it's an array name."));
        }
        self.globals.insert(name.to_owned(), Cell::Val(v));
        Ok(())
    }

    pub(super) fn cell_mut(&mut self, var: &Var) -> &mut Cell {
        match var {
            Var::Global(name) => self
                .globals
                .entry(name.clone())
                .or_insert(Cell::Val(Value::Uninit)),
            Var::Local(i) => {
                let frame = self
                    .frames
                    .last_mut()
                    .expect("locals only inside a function");
                if frame.len() <= *i {
                    frame.resize(*i + 1, Cell::Val(Value::Uninit));
                }
                &mut frame[*i]
            }
        }
    }

    pub(super) fn array(&mut self, var: &Var) -> R<Array> {
        let cell = self.cell_mut(var);
        match cell {
            Cell::Arr(a) => Ok(a.clone()),
            Cell::Val(Value::Uninit) => {
                let a: Array = Rc::default();
                *cell = Cell::Arr(a.clone());
                Ok(a)
            }
            Cell::Val(_) => fail(format!("can't use scalar {} as array", var_name(var))),
        }
    }

    pub(super) fn subscript(&mut self, subs: &[Expr]) -> R<String> {
        if subs.len() == 1 {
            let v = self.eval(&subs[0])?;
            return Ok(self.str_of(&v));
        }
        let sep = self.global_str("SUBSEP");
        let mut parts = Vec::new();
        for s in subs {
            let v = self.eval(s)?;
            parts.push(self.str_of(&v));
        }
        Ok(parts.join(&sep))
    }

    pub(super) fn assign(&mut self, lv: &Expr, v: Value) -> R<()> {
        match lv {
            Expr::Var(Var::Global(name)) => self.assign_name(name, v),
            Expr::Var(var @ Var::Local(_)) => {
                let cell = self.cell_mut(var);
                if let Cell::Arr(_) = cell {
                    return fail("can't assign to an array");
                }
                *cell = Cell::Val(v);
                Ok(())
            }
            Expr::Index(var, subs) => {
                let key = self.subscript(subs)?;
                self.array(var)?.borrow_mut().insert(key, v);
                Ok(())
            }
            Expr::Field(e) => {
                let i = self.field_index(e)?;
                let s = self.str_of(&v);
                self.set_field(i, s)
            }
            _ => fail("assignment to a value that is not a variable"),
        }
    }

    pub(super) fn field_index(&mut self, e: &Expr) -> R<usize> {
        let n = self.eval(e)?.num();
        if n < 0.0 || n.is_nan() {
            return fail(format!("negative field index ${n}"));
        }
        Ok(n as usize)
    }

    // Regexes.

    pub(super) fn regex(&mut self, s: &str) -> R<Regex> {
        if let Some(re) = self.cache.get(s) {
            return Ok(re.clone());
        }
        let re = compile(s).map_err(Jump::Error)?;
        if self.cache.len() > 500 {
            self.cache.clear();
        }
        self.cache.insert(s.to_owned(), re.clone());
        Ok(re)
    }

    pub(super) fn regex_of(&mut self, e: &Expr) -> R<Regex> {
        if let Expr::Regex(i) = e {
            return Ok(self.literals[*i].clone());
        }
        let v = self.eval(e)?;
        let s = self.str_of(&v);
        self.regex(&s)
    }

    // Statements.

    /// Runs a rule's action or a BEGIN/END block.
    pub fn run_block(&mut self, block: &[Stmt]) -> R<()> {
        for s in block {
            self.exec(s)?;
        }
        Ok(())
    }

    pub fn pattern_matches(&mut self, e: &Expr) -> R<bool> {
        Ok(self.eval(e)?.truthy())
    }

    pub fn print_record(&mut self) -> R<()> {
        let text = self.record.clone() + &self.global_str("ORS");
        self.write(None, &text)
    }

    fn exec_all(&mut self, block: &[Stmt]) -> R<Flow> {
        for s in block {
            match self.exec(s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, s: &Stmt) -> R<Flow> {
        match s {
            Stmt::Expr(e) => {
                self.eval(e)?;
            }
            Stmt::Print(args, dest) => {
                let text = if args.is_empty() {
                    self.record.clone()
                } else {
                    let ofs = self.global_str("OFS");
                    let ofmt = self.global_str("OFMT");
                    let mut parts = Vec::with_capacity(args.len());
                    for a in args {
                        let v = self.eval(a)?;
                        parts.push(match v {
                            Value::Num(n) => num_to_str(n, &ofmt),
                            other => self.str_of(&other),
                        });
                    }
                    parts.join(&ofs)
                } + &self.global_str("ORS");
                let dest = self.destination(dest)?;
                self.write(dest, &text)?;
            }
            Stmt::Printf(args, dest) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a)?);
                }
                let fmt = self.str_of(&values[0]);
                let text = sprintf(&fmt, &values[1..], &self.convfmt());
                let dest = self.destination(dest)?;
                self.write(dest, &text)?;
            }
            Stmt::If(c, then, other) => {
                if self.eval(c)?.truthy() {
                    return self.exec(then);
                } else if let Some(o) = other {
                    return self.exec(o);
                }
            }
            Stmt::While(c, body) => {
                while self.eval(c)?.truthy() {
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
            }
            Stmt::Do(body, c) => loop {
                match self.exec(body)? {
                    Flow::Break => break,
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                }
                if !self.eval(c)?.truthy() {
                    break;
                }
            },
            Stmt::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.eval(i)?;
                }
                loop {
                    if let Some(c) = cond {
                        if !self.eval(c)?.truthy() {
                            break;
                        }
                    }
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                    if let Some(s) = step {
                        self.eval(s)?;
                    }
                }
            }
            Stmt::ForIn(k, var, body) => {
                let keys: Vec<String> = self.array(var)?.borrow().keys().cloned().collect();
                let arr = self.array(var)?;
                for key in keys {
                    // An element deleted by the body is not visited.
                    if !arr.borrow().contains_key(&key) {
                        continue;
                    }
                    self.assign(k, Value::input(key))?;
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
            }
            Stmt::Block(b) => return self.exec_all(b),
            Stmt::Next => return Err(Jump::Next),
            Stmt::NextFile => return Err(Jump::NextFile),
            Stmt::Exit(code) => {
                if let Some(c) = code {
                    self.exit_code = self.eval(c)?.num() as i32;
                }
                return Err(Jump::Exit);
            }
            Stmt::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e)?,
                    None => Value::Uninit,
                };
                return Ok(Flow::Return(v));
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Delete(var, subs) => {
                let arr = self.array(var)?;
                match subs {
                    Some(subs) => {
                        let key = self.subscript(subs)?;
                        arr.borrow_mut().remove(&key);
                    }
                    None => arr.borrow_mut().clear(),
                }
            }
        }
        Ok(Flow::Normal)
    }

    pub(super) fn destination(
        &mut self,
        dest: &Option<(Redirect, Expr)>,
    ) -> R<Option<(String, bool)>> {
        match dest {
            None => Ok(None),
            Some((kind, e)) => {
                let v = self.eval(e)?;
                Ok(Some((self.str_of(&v), *kind == Redirect::Append)))
            }
        }
    }

    pub(super) fn write(&mut self, dest: Option<(String, bool)>, text: &str) -> R<()> {
        let result = match dest {
            None => self.stdout.write_all(text.as_bytes()),
            Some((name, _)) if name == "/dev/stdout" || name == "-" => {
                self.stdout.write_all(text.as_bytes())
            }
            Some((name, append)) => {
                if name == "/dev/stderr" {
                    let _ = self.stdout.flush();
                }
                match self.outputs.get(&name, append) {
                    Ok(w) => w.write_all(text.as_bytes()),
                    Err(e) => {
                        return fail(format!(
                            "cannot open \"{name}\" for output ({})",
                            describe(&e)
                        ));
                    }
                }
            }
        };
        result.or_else(|e| fail(format!("write failure ({})", describe(&e))))
    }

    // Expressions.

    pub fn eval(&mut self, e: &Expr) -> R<Value> {
        Ok(match e {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(i) => {
                let m = self.literals[*i].is_match(&self.record);
                Value::Num(f64::from(u8::from(m)))
            }
            Expr::Group(e) => self.eval(e)?,
            Expr::Var(Var::Global(name)) if name == "NF" => Value::Num(self.fields.len() as f64),
            Expr::Var(var) => match self.cell_mut(var) {
                Cell::Val(v) => v.clone(),
                Cell::Arr(_) => {
                    return fail(format!(
                        "can't use array {} in scalar context",
                        var_name(var)
                    ));
                }
            },
            Expr::Index(var, subs) => {
                let key = self.subscript(subs)?;
                let arr = self.array(var)?;
                let mut arr = arr.borrow_mut();
                arr.entry(key).or_default().clone()
            }
            Expr::Field(i) => {
                let i = self.field_index(i)?;
                self.field(i)
            }
            Expr::Assign(op, lv, rhs) => {
                let r = self.eval(rhs)?;
                let v = match op {
                    None => r,
                    Some(op) => {
                        let l = self.eval(lv)?;
                        Value::Num(arith(op, l.num(), r.num())?)
                    }
                };
                self.assign(lv, v.clone())?;
                v
            }
            Expr::Cond(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::And(a, b) => bool_value(self.eval(a)?.truthy() && self.eval(b)?.truthy()),
            Expr::Or(a, b) => bool_value(self.eval(a)?.truthy() || self.eval(b)?.truthy()),
            Expr::Not(a) => bool_value(!self.eval(a)?.truthy()),
            Expr::Neg(a) => Value::Num(-self.eval(a)?.num()),
            Expr::Plus(a) => Value::Num(self.eval(a)?.num()),
            Expr::Binary(op, a, b) => {
                let x = self.eval(a)?.num();
                let y = self.eval(b)?.num();
                Value::Num(arith(op, x, y)?)
            }
            Expr::Cmp(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let ord = if x.numeric() && y.numeric() {
                    x.num().partial_cmp(&y.num())
                } else {
                    Some(self.str_of(&x).cmp(&self.str_of(&y)))
                };
                use std::cmp::Ordering::*;
                bool_value(match (*op, ord) {
                    ("<", Some(o)) => o == Less,
                    ("<=", Some(o)) => o != Greater,
                    (">", Some(o)) => o == Greater,
                    (">=", Some(o)) => o != Less,
                    ("==", Some(o)) => o == Equal,
                    ("!=", o) => o != Some(Equal),
                    _ => false,
                })
            }
            Expr::Match(negate, a, re) => {
                let v = self.eval(a)?;
                let s = self.str_of(&v);
                let re = self.regex_of(re)?;
                bool_value(re.is_match(&s) != *negate)
            }
            Expr::Concat(a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                Value::Str(self.str_of(&x) + &self.str_of(&y))
            }
            Expr::In(subs, var) => {
                let key = self.subscript(subs)?;
                bool_value(self.array(var)?.borrow().contains_key(&key))
            }
            Expr::Incr(pre, d, lv) => {
                let old = self.eval(lv)?.num();
                self.assign(lv, Value::Num(old + d))?;
                Value::Num(if *pre { old + d } else { old })
            }
            Expr::Call(f, args) => self.call(*f, args)?,
            Expr::Builtin(name, args) => self.builtin(name, args)?,
            Expr::Getline(var, file) => self.getline(var.as_deref(), file.as_deref())?,
        })
    }

    pub(super) fn call(&mut self, f: usize, args: &[Expr]) -> R<Value> {
        let func = &self.prog.functions[f];
        if self.frames.len() >= MAX_CALL_DEPTH {
            return fail(format!(
                "function {} calls nest deeper than {MAX_CALL_DEPTH} levels (runaway recursion?)",
                func.name
            ));
        }
        let mut frame = Vec::with_capacity(func.params);
        for (i, a) in args.iter().enumerate() {
            let as_array = func.arrays.get(i).copied().unwrap_or(false);
            let cell = match a {
                Expr::Var(var) if !matches!(var, Var::Global(n) if n == "NF") => {
                    match self.cell_mut(var).clone() {
                        Cell::Arr(arr) => Cell::Arr(arr),
                        Cell::Val(Value::Uninit) if as_array => Cell::Arr(self.array(var)?),
                        Cell::Val(v) => Cell::Val(v),
                    }
                }
                other => Cell::Val(self.eval(other)?),
            };
            if i < func.params {
                frame.push(cell);
            }
        }
        frame.resize(func.params, Cell::Val(Value::Uninit));
        self.frames.push(frame);
        let result = self.exec_all(&func.body);
        self.frames.pop();
        Ok(match result? {
            Flow::Return(v) => v,
            _ => Value::Uninit,
        })
    }
}

fn bool_value(b: bool) -> Value {
    Value::Num(f64::from(u8::from(b)))
}

fn arith(op: &str, x: f64, y: f64) -> R<f64> {
    Ok(match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => {
            if y == 0.0 {
                return fail("division by zero");
            }
            x / y
        }
        "%" => {
            if y == 0.0 {
                return fail("division by zero in %");
            }
            x % y
        }
        _ => x.powf(y),
    })
}

/// An ERE of awk compiled for the `regex` crate (through [`crate::posix`]).
pub fn compile(r: &str) -> Result<Regex, String> {
    let translated = crate::posix::translate(r, false, true)?;
    RegexBuilder::new(&translated)
        .size_limit(16 << 20)
        .build()
        .map_err(|e| {
            format!(
                "regular expression compile failed ({})",
                e.to_string().lines().last().unwrap_or("").trim()
            )
        })
}

/// `NAME=VALUE` as an operand: an assignment when NAME is an identifier.
pub fn assignment(arg: &str) -> Option<(String, String)> {
    let (name, value) = arg.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| (name.to_owned(), value.to_owned()))
}

fn var_name(var: &Var) -> String {
    match var {
        Var::Global(n) => n.clone(),
        Var::Local(i) => format!("parameter {}", i + 1),
    }
}

pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "No such file or directory".into(),
        io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}
