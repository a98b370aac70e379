//! Running what the parser read: variables and arrays with GNU bc's dynamic scope (a
//! function's parameters and `auto`s hide the caller's names for every function it calls),
//! arrays by value and by reference (`*a[]`), `scale`/`ibase`/`obase`/`last`, the output with
//! GNU's line wrapping, and its runtime errors and warnings (`func=`, `adr=`).

use super::math;
use super::num::Num;
use super::parse::{Arg, Expr, Func, Lv, Op, ParamKind, PrintItem, Rel, Stmt};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::rc::Rc;

/// GNU's largest array index (BC_DIM_MAX).
const DIM_MAX: i64 = 16_777_215;
/// GNU's largest scale and obase (INT_MAX).
const INT_MAX: i64 = 2_147_483_647;
/// The stack that calls may use: WebAssembly's is 1 MiB, and a runaway recursion would
/// otherwise crash the program instead of saying so (GNU's has no limit but memory).
const MAX_STACK: usize = 640 * 1024;

/// The address of a local: how far down the stack this call is.
#[inline(never)]
fn stack_here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

type Array = Rc<RefCell<BTreeMap<i64, Num>>>;

/// Why running stopped: an error (said already) ends the current item; `halt` ends bc.
pub enum Stop {
    Error,
    Halt,
}

enum Flow {
    Next,
    Break,
    Continue,
    Return(Num),
}

/// Where a value goes: a named expression with its index worked out.
enum Place {
    Var(String),
    Elem(Array, i64),
    Scale,
    Ibase,
    Obase,
    Last,
}

/// The standard output, buffered, and the column GNU counts to wrap long numbers at.
pub struct Out {
    buf: Vec<u8>,
    col: usize,
    /// BC_LINE_LENGTH: 0 never wraps.
    width: usize,
}

impl Out {
    pub fn new(width: usize) -> Out {
        Out {
            buf: Vec::new(),
            col: 0,
            width,
        }
    }

    /// A character of a number: at the last column a backslash and a newline come first.
    fn num_char(&mut self, c: char) {
        if c == '\n' {
            self.col = 0;
        } else {
            self.col += 1;
            if self.width != 0 && self.col == self.width - 1 {
                self.buf.extend_from_slice(b"\\\n");
                self.col = 1;
            }
        }
        self.push(c);
    }

    /// A character of a string: counted, never wrapped.
    fn str_char(&mut self, c: char) {
        if c == '\n' {
            self.col = 0;
        } else {
            self.col += 1;
        }
        self.push(c);
    }

    /// Text printed as it is, outside GNU's column count.
    pub fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    fn push(&mut self, c: char) {
        let mut b = [0; 4];
        self.buf.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        if self.buf.len() >= 1 << 16 {
            self.flush();
        }
    }

    /// What is waiting to be written (for the tests).
    #[cfg(test)]
    pub fn take(&mut self) -> String {
        String::from_utf8(std::mem::take(&mut self.buf)).unwrap_or_default()
    }

    pub fn flush(&mut self) -> bool {
        let mut out = std::io::stdout();
        let ok = out.write_all(&self.buf).is_ok() && out.flush().is_ok();
        self.buf.clear();
        ok
    }
}

pub struct Interp {
    scale: usize,
    ibase: u32,
    obase: u64,
    last: Num,
    vars: HashMap<String, Vec<Num>>,
    arrays: HashMap<String, Vec<Array>>,
    funcs: HashMap<String, Rc<Func>>,
    mathlib: bool,
    /// The functions being run, innermost last.
    frames: Vec<String>,
    /// Where the stack was when bc started, to measure how deep calls go.
    stack_base: usize,
    pub out: Out,
}

impl Interp {
    pub fn new(mathlib: bool, width: usize) -> Interp {
        Interp {
            scale: if mathlib { 20 } else { 0 },
            ibase: 10,
            obase: 10,
            last: Num::zero(),
            vars: HashMap::new(),
            arrays: HashMap::new(),
            funcs: HashMap::new(),
            mathlib,
            frames: Vec::new(),
            stack_base: stack_here(),
            out: Out::new(width),
        }
    }

    pub fn define(&mut self, f: Func) {
        self.funcs.insert(f.name.clone(), Rc::new(f));
    }

    /// Runs an item's statements; the first error ends them.
    pub fn run(&mut self, stmts: &[Stmt]) -> Result<(), Stop> {
        for s in stmts {
            self.exec(s)?;
        }
        Ok(())
    }

    #[inline(never)]
    fn report(&mut self, kind: &str, adr: usize, msg: &str) {
        // GNU empties stdout first: the message follows what was printed before it.
        self.out.flush();
        let func = self.frames.last().map_or("(main)", String::as_str);
        eprintln!("Runtime {kind} (func={func}, adr={adr}): {msg}");
    }

    fn fail<X>(&mut self, adr: usize, msg: &str) -> Result<X, Stop> {
        self.report("error", adr, msg);
        Err(Stop::Error)
    }

    fn warn(&mut self, adr: usize, msg: &str) {
        self.report("warning", adr, msg);
    }

    #[inline(never)]
    fn print_num(&mut self, n: &Num) {
        for c in n.format(self.obase).chars() {
            self.out.num_char(c);
        }
    }

    fn exec(&mut self, s: &Stmt) -> Result<Flow, Stop> {
        match s {
            Stmt::Expr(e, print) => {
                if let Expr::Call(name, ..) = e
                    && self.funcs.get(name).is_some_and(|f| f.void)
                {
                    self.eval(e)?;
                } else if *print {
                    let v = self.eval(e)?;
                    self.print_num(&v);
                    self.out.num_char('\n');
                    self.last = v;
                } else {
                    self.eval(e)?;
                }
            }
            Stmt::Str(text) => text.chars().for_each(|c| self.out.str_char(c)),
            Stmt::Print(items) => {
                for item in items {
                    match item {
                        PrintItem::Str(text) => self.print_escaped(text),
                        PrintItem::Expr(e) => {
                            let v = self.eval(e)?;
                            self.print_num(&v);
                            self.last = v;
                        }
                    }
                }
            }
            Stmt::If(cond, then, els) => {
                if !self.eval(cond)?.is_zero() {
                    return self.exec(then);
                } else if let Some(els) = els {
                    return self.exec(els);
                }
            }
            Stmt::While(cond, body) => {
                while !self.eval(cond)?.is_zero() {
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                }
            }
            Stmt::For(init, cond, step, body) => {
                if let Some(init) = init {
                    self.eval(init)?;
                }
                loop {
                    if let Some(cond) = cond
                        && self.eval(cond)?.is_zero()
                    {
                        break;
                    }
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                    if let Some(step) = step {
                        self.eval(step)?;
                    }
                }
            }
            Stmt::Block(stmts) => {
                for s in stmts {
                    match self.exec(s)? {
                        Flow::Next => {}
                        flow => return Ok(flow),
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(e)?,
                    None => Num::zero(),
                };
                return Ok(Flow::Return(v));
            }
            Stmt::Halt => return Err(Stop::Halt),
        }
        Ok(Flow::Next)
    }

    /// `print`'s strings: `\n`, `\t`, `\q` (a quote) and the others GNU knows; an unknown
    /// escape prints nothing.
    #[inline(never)]
    fn print_escaped(&mut self, text: &str) {
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                self.out.str_char(c);
                continue;
            }
            let Some(e) = chars.next() else { break };
            let out = match e {
                'a' => '\x07',
                'b' => '\x08',
                'f' => '\x0c',
                'n' => '\n',
                'q' => '"',
                'r' => '\r',
                't' => '\t',
                '\\' => '\\',
                _ => continue,
            };
            self.out.str_char(out);
        }
    }

    fn eval(&mut self, e: &Expr) -> Result<Num, Stop> {
        Ok(match e {
            Expr::Const(text, cache) => {
                if let Some((base, n)) = &*cache.borrow()
                    && *base == self.ibase
                {
                    return Ok(n.clone());
                }
                let n = Num::parse(text, self.ibase);
                *cache.borrow_mut() = Some((self.ibase, n.clone()));
                n
            }
            Expr::Load(lv, adr) => {
                let place = self.place(lv, *adr)?;
                self.load(&place)
            }
            Expr::Assign(lv, op, rhs, op_adr, adr) => {
                let place = self.place(lv, *adr)?;
                let v = match op {
                    None => self.eval(rhs)?,
                    Some(op) => {
                        let cur = self.load(&place);
                        let r = self.eval(rhs)?;
                        self.binary(*op, &cur, &r, *op_adr)?
                    }
                };
                self.store(place, v.clone(), *adr);
                v
            }
            Expr::Bin(op, a, b, adr) => {
                let a = self.eval(a)?;
                let b = self.eval(b)?;
                self.binary(*op, &a, &b, *adr)?
            }
            Expr::Rel(rel, a, b) => {
                let o = self.eval(a)?.cmp(&self.eval(b)?);
                let t = match rel {
                    Rel::Lt => o.is_lt(),
                    Rel::Le => o.is_le(),
                    Rel::Gt => o.is_gt(),
                    Rel::Ge => o.is_ge(),
                    Rel::Eq => o.is_eq(),
                    Rel::Ne => o.is_ne(),
                };
                Num::int(t.into())
            }
            Expr::Neg(a) => self.eval(a)?.neg(),
            Expr::Not(a) => Num::int(self.eval(a)?.is_zero().into()),
            Expr::And(a, b) => {
                Num::int((!self.eval(a)?.is_zero() && !self.eval(b)?.is_zero()).into())
            }
            Expr::Or(a, b) => {
                Num::int((!self.eval(a)?.is_zero() || !self.eval(b)?.is_zero()).into())
            }
            Expr::IncDec(lv, delta, pre, adr) => {
                let place = self.place(lv, *adr)?;
                let cur = self.load(&place);
                let new = cur.add(&Num::int(*delta));
                self.store(place, new.clone(), *adr);
                if *pre { new } else { cur }
            }
            Expr::Call(name, args, adr, padr) => self.call(name, args, *adr, *padr)?,
            Expr::Length(a) => Num::int(self.eval(a)?.length() as i64),
            Expr::ScaleOf(a) => Num::int(self.eval(a)?.scale as i64),
            Expr::Sqrt(a, adr) => {
                let v = self.eval(a)?;
                match v.sqrt(self.scale) {
                    Ok(Some(r)) => r,
                    Ok(None) => return self.fail(*adr, "Square root of a negative number"),
                    Err(e) => return self.fail(*adr, e),
                }
            }
            Expr::Read(adr) => {
                return self.fail(
                    *adr,
                    "read() is not supported by this bc (put the numbers in the program)",
                );
            }
            Expr::Paren(a) => self.eval(a)?,
        })
    }

    #[inline(never)]
    fn binary(&mut self, op: Op, a: &Num, b: &Num, adr: usize) -> Result<Num, Stop> {
        let r = match op {
            Op::Add => return Ok(a.add(b)),
            Op::Sub => return Ok(a.sub(b)),
            Op::Mul => a.mul(b, self.scale),
            Op::Div => match a.div(b, self.scale) {
                Ok(None) => return self.fail(adr, "Divide by zero"),
                r => r.map(Option::unwrap_or_default),
            },
            Op::Rem => match a.rem(b, self.scale) {
                Ok(None) => return self.fail(adr, "Modulo by zero"),
                r => r.map(Option::unwrap_or_default),
            },
            Op::Pow => {
                if b.scale != 0 {
                    self.warn(adr, "non-zero scale in exponent");
                }
                let Some(e) = b.to_i64() else {
                    return self.fail(adr, "exponent too large in raise");
                };
                a.pow(e, self.scale)
            }
        };
        r.or_else(|msg| self.fail(adr, msg))
    }

    /// The current (innermost) array of that name, made if there is none.
    #[inline(never)]
    fn array(&mut self, name: &str) -> Array {
        let stack = self.arrays.entry(name.to_owned()).or_default();
        if stack.is_empty() {
            stack.push(Array::default());
        }
        stack.last().cloned().unwrap_or_default()
    }

    #[inline(never)]
    fn place(&mut self, lv: &Lv, adr: usize) -> Result<Place, Stop> {
        Ok(match lv {
            Lv::Var(n) => Place::Var(n.clone()),
            Lv::Elem(name, index) => {
                let i = self.eval(index)?;
                match i.to_i64() {
                    Some(i) if (0..=DIM_MAX).contains(&i) => Place::Elem(self.array(name), i),
                    _ => return self.fail(adr, &format!("Array {name} subscript out of bounds.")),
                }
            }
            Lv::Scale => Place::Scale,
            Lv::Ibase => Place::Ibase,
            Lv::Obase => Place::Obase,
            Lv::Last => Place::Last,
        })
    }

    #[inline(never)]
    fn load(&self, place: &Place) -> Num {
        match place {
            Place::Var(n) => (self.vars.get(n))
                .and_then(|stack| stack.last())
                .cloned()
                .unwrap_or_default(),
            Place::Elem(a, i) => a.borrow().get(i).cloned().unwrap_or_default(),
            Place::Scale => Num::int(self.scale as i64),
            Place::Ibase => Num::int(i64::from(self.ibase)),
            Place::Obase => Num::int(self.obase as i64),
            Place::Last => self.last.clone(),
        }
    }

    /// Stores `v`; `scale`, `ibase` and `obase` out of range are set to the nearest value
    /// with GNU's warning.
    #[inline(never)]
    fn store(&mut self, place: Place, v: Num, adr: usize) {
        let int = v.to_i64();
        match place {
            Place::Var(n) => {
                let stack = self.vars.entry(n).or_default();
                match stack.last_mut() {
                    Some(top) => *top = v,
                    None => stack.push(v),
                }
            }
            Place::Elem(a, i) => {
                a.borrow_mut().insert(i, v);
            }
            Place::Scale => {
                let n = self.clamp(int, 0, INT_MAX, "negative scale", "scale too large", adr);
                self.scale = n as usize;
            }
            Place::Ibase => {
                let n = self.clamp(int, 2, 36, "ibase too small", "ibase too large", adr);
                self.ibase = n as u32;
            }
            Place::Obase => {
                let n = self.clamp(int, 2, INT_MAX, "obase too small", "obase too large", adr);
                self.obase = n as u64;
            }
            Place::Last => self.last = v,
        }
    }

    #[inline(never)]
    fn clamp(
        &mut self,
        n: Option<i64>,
        low: i64,
        high: i64,
        small: &str,
        large: &str,
        adr: usize,
    ) -> i64 {
        match n {
            Some(n) if n < low => {
                self.warn(adr, &format!("{small}, set to {low}"));
                low
            }
            Some(n) if n <= high => n,
            _ => {
                self.warn(adr, &format!("{large}, set to {high}"));
                high
            }
        }
    }

    fn call(&mut self, name: &str, args: &[Arg], adr: usize, padr: usize) -> Result<Num, Stop> {
        let Some(f) = self.funcs.get(name).cloned() else {
            return self.call_library(name, args, adr, padr);
        };
        if args.len() != f.params.len() {
            return self.fail(padr, "Parameter number mismatch");
        }
        if self.stack_base.abs_diff(stack_here()) > MAX_STACK {
            let depth = self.frames.len();
            return self.fail(
                adr,
                &format!("function calls nested too deep ({depth}: the stack is full)"),
            );
        }
        let (scalars, arrays) = self.bind(&f, args, padr)?;
        self.frames.push(f.name.clone());
        let result = self.body(&f.body);
        self.frames.pop();
        for n in &scalars {
            if let Some(stack) = self.vars.get_mut(n) {
                stack.pop();
            }
        }
        for n in &arrays {
            if let Some(stack) = self.arrays.get_mut(n) {
                stack.pop();
            }
        }
        result
    }

    /// A function's statements, to its `return` (0 without one).
    fn body(&mut self, body: &[Stmt]) -> Result<Num, Stop> {
        for s in body {
            if let Flow::Return(v) = self.exec(s)? {
                return Ok(v);
            }
        }
        Ok(Num::zero())
    }

    /// Gives the parameters their arguments (worked out in the caller's scope) and the
    /// `auto`s their zeros, hiding the names' outer values; the names given, to take back.
    #[inline(never)]
    fn bind(
        &mut self,
        f: &Func,
        args: &[Arg],
        padr: usize,
    ) -> Result<(Vec<String>, Vec<String>), Stop> {
        let mut scalars = Vec::new();
        let mut arrays = Vec::new();
        for (at, (arg, (p, kind))) in args.iter().zip(&f.params).enumerate() {
            match (arg, kind) {
                (Arg::Value(e), ParamKind::Scalar) => scalars.push((p.clone(), self.eval(e)?)),
                (Arg::Array(a), ParamKind::Array) => {
                    let copy = self.array(a).borrow().clone();
                    arrays.push((p.clone(), Rc::new(RefCell::new(copy))));
                }
                (Arg::Array(a), ParamKind::ArrayRef) => arrays.push((p.clone(), self.array(a))),
                _ => {
                    return self.fail(
                        padr - args.len() + at,
                        &format!("Parameter type mismatch parameter {p}."),
                    );
                }
            }
        }
        for (a, is_array) in &f.autos {
            if *is_array {
                arrays.push((a.clone(), Array::default()));
            } else {
                scalars.push((a.clone(), Num::zero()));
            }
        }
        let mut names = (Vec::new(), Vec::new());
        for (n, v) in scalars {
            self.vars.entry(n.clone()).or_default().push(v);
            names.0.push(n);
        }
        for (n, a) in arrays {
            self.arrays.entry(n.clone()).or_default().push(a);
            names.1.push(n);
        }
        Ok(names)
    }

    /// `-l`'s functions, when the program has not defined one of that name.
    #[inline(never)]
    fn call_library(
        &mut self,
        name: &str,
        args: &[Arg],
        adr: usize,
        padr: usize,
    ) -> Result<Num, Stop> {
        let Some(arity) = math::arity(name).filter(|_| self.mathlib) else {
            return self.fail(adr, &format!("Function {name} not defined."));
        };
        if args.len() != arity {
            return self.fail(padr, "Parameter number mismatch");
        }
        let mut values = Vec::new();
        for a in args {
            match a {
                Arg::Value(e) => values.push(self.eval(e)?),
                Arg::Array(_) => {
                    return self.fail(padr, "Parameter type mismatch parameter x.");
                }
            }
        }
        math::call(name, &values, self.scale).or_else(|m| self.fail(adr, m))
    }
}
