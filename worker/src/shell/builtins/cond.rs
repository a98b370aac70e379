//! `test` and `[`: conditions on strings, integers and files (POSIX precedence: `!`, then `-a`,
//! then `-o`, with parentheses). The operators of `[[ ... ]]` are these same tests
//! ([`unary_test`], [`binary_test`]). File probes go through the confined filesystem; a probe of a
//! path outside the sandbox is simply false.

use crate::shell::exec::{Abort, Ctx};
use crate::shell::guest_fs::Kind;

/// Evaluates a `test` expression by recursive descent, one precedence level per method.
struct TestEval<'t, 'c, 'a> {
    args: &'t [String],
    i: usize,
    ctx: &'t mut Ctx<'c, 'a>,
    error: Option<String>,
    /// Recursion depth of `!` and `(`: bounded so `[ ! ! ! ... ]` cannot overflow the stack.
    depth: usize,
}

/// Deepest nesting of `!` and `(` in a `test` expression.
const MAX_TEST_DEPTH: usize = 128;

const UNARY: [&str; 15] = [
    "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-z", "-n", "-p", "-S", "-b", "-c",
];
const BINARY: [&str; 14] = [
    "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
];

impl TestEval<'_, '_, '_> {
    fn next(&mut self) -> Option<&String> {
        let a = self.args.get(self.i);
        self.i += 1;
        a
    }

    fn or(&mut self) -> bool {
        let mut v = self.and();
        while self.args.get(self.i).is_some_and(|a| a == "-o") {
            self.i += 1;
            let r = self.and();
            v = v || r;
        }
        v
    }

    fn and(&mut self) -> bool {
        let mut v = self.not();
        while self.args.get(self.i).is_some_and(|a| a == "-a") {
            self.i += 1;
            let r = self.not();
            v = v && r;
        }
        v
    }

    fn not(&mut self) -> bool {
        if self.depth > MAX_TEST_DEPTH {
            self.error = Some("expression nested too deeply".into());
            self.i = self.args.len();
            return false;
        }
        if self.args.get(self.i).is_some_and(|a| a == "!") && self.i + 1 < self.args.len() {
            self.i += 1;
            self.depth += 1;
            let v = !self.not();
            self.depth -= 1;
            return v;
        }
        self.primary()
    }

    fn primary(&mut self) -> bool {
        let rest = self.args.len().saturating_sub(self.i);
        let Some(a) = self.next().cloned() else {
            self.error = Some("argument expected".into());
            return false;
        };
        if a == "(" && rest >= 3 {
            self.depth += 1;
            let v = self.or();
            self.depth -= 1;
            if self.next().is_none_or(|c| c != ")") {
                self.error = Some("')' expected".into());
            }
            return v;
        }
        if rest >= 3 && BINARY.contains(&self.args[self.i].as_str()) {
            let op = self.next().cloned().unwrap_or_default();
            let b = self.next().cloned().unwrap_or_default();
            return self.binary(&a, &op, &b);
        }
        if rest >= 2 && UNARY.contains(&a.as_str()) {
            let b = self.next().cloned().unwrap_or_default();
            return self.unary(&a, &b);
        }
        !a.is_empty()
    }

    fn unary(&mut self, op: &str, arg: &str) -> bool {
        match op {
            "-z" => return arg.is_empty(),
            "-n" => return !arg.is_empty(),
            _ => {}
        }
        // Asked inside the sandbox: a path outside it is simply not there (no refusal to
        // report).
        let follow = !matches!(op, "-L" | "-h");
        let Some(m) = self.ctx.sh.file_info(arg, follow) else {
            return false;
        };
        match op {
            "-e" | "-r" | "-a" => true,
            "-f" => m.kind == Kind::File,
            "-d" => m.kind == Kind::Dir,
            "-s" => m.len > 0,
            "-w" => self.ctx.fs().writable_at(self.ctx.cwd(), arg) && m.mode & 0o222 != 0,
            "-x" => m.mode & 0o111 != 0,
            "-L" | "-h" => m.kind == Kind::Symlink,
            "-p" => m.kind == Kind::Fifo,
            "-S" => m.kind == Kind::Socket,
            "-b" => m.kind == Kind::BlockDevice,
            "-c" => m.kind == Kind::CharDevice,
            _ => false,
        }
    }

    fn int(&mut self, s: &str) -> i64 {
        match s.trim().parse() {
            Ok(v) => v,
            Err(_) => {
                self.error = Some(format!("{s}: integer expression expected"));
                0
            }
        }
    }

    fn binary(&mut self, a: &str, op: &str, b: &str) -> bool {
        match op {
            "=" | "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            ">" => a > b,
            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                let (x, y) = (self.int(a), self.int(b));
                match op {
                    "-eq" => x == y,
                    "-ne" => x != y,
                    "-lt" => x < y,
                    "-le" => x <= y,
                    "-gt" => x > y,
                    _ => x >= y,
                }
            }
            _ => {
                if op == "-ef" {
                    return self.ctx.sh.same_file(a, b);
                }
                // bash: newer, or `a` exists and `b` does not (`None` orders below any time);
                // `-ot` is `-nt` with the operands swapped.
                let times = self.ctx.sh.file_infos(&[a, b], true);
                let [x, y] = [0, 1].map(|i| times[i].as_ref().map(|m| m.mtime));
                if op == "-nt" { x > y } else { y > x }
            }
        }
    }
}

/// A unary file or string test of `[[ ... ]]` (`-f path`, `-z text`...).
pub(crate) fn unary_test(ctx: &mut Ctx<'_, '_>, op: &str, arg: &str) -> bool {
    let mut e = TestEval {
        args: &[],
        i: 0,
        ctx,
        error: None,
        depth: 0,
    };
    e.unary(op, arg)
}

/// A binary test of `[[ ... ]]` other than pattern and regex matching (`-lt`, `<`, `-nt`...).
///
/// # Errors
/// An operand that is not an integer where one is needed.
pub(crate) fn binary_test(
    ctx: &mut Ctx<'_, '_>,
    a: &str,
    op: &str,
    b: &str,
) -> Result<bool, String> {
    let mut e = TestEval {
        args: &[],
        i: 0,
        ctx,
        error: None,
        depth: 0,
    };
    let v = e.binary(a, op, b);
    match e.error {
        Some(msg) => Err(format!("[[: {msg}")),
        None => Ok(v),
    }
}

pub(super) fn test(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let args = if ctx.name == "[" {
        match args.split_last() {
            Some((last, rest)) if last == "]" => rest,
            _ => {
                ctx.warn("missing `]'");
                return Ok(2);
            }
        }
    } else {
        args
    };
    if args.is_empty() {
        return Ok(1);
    }
    let mut e = TestEval {
        args,
        i: 0,
        ctx,
        error: None,
        depth: 0,
    };
    let v = e.or();
    if e.error.is_none() && e.i < args.len() {
        e.error = Some(format!("{}: unexpected operator", args[e.i]));
    }
    if let Some(msg) = e.error {
        ctx.warn(msg);
        return Ok(2);
    }
    Ok(i32::from(!v))
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    #[test]
    fn test_expressions() {
        let mut s = Sandbox::new();
        s.write("f", "x");
        s.write("empty", "");
        s.write("d/x", "");
        for (expr, want) in [
            ("-f f", 0),
            ("-f d", 1),
            ("-d d", 0),
            ("-e nope", 1),
            ("-s f", 0),
            ("-s empty", 1),
            ("-z ''", 0),
            ("-n ''", 1),
            ("abc", 0),
            ("''", 1),
            ("a = a", 0),
            ("a != a", 1),
            ("3 -gt 2", 0),
            ("3 -le 2", 1),
            ("! -f f", 1),
            ("-f f -a -d d", 0),
            ("-f nope -o -d d", 0),
            ("\\( -f f \\)", 0),
            ("-w f", 0),
            ("-w /data/d.txt", 1),
            ("-r /data/d.txt", 0),
            ("-f /etc/passwd", 1),
        ] {
            assert_eq!(s.sh(&format!("[ {expr} ]")).2, want, "[ {expr} ]");
            assert_eq!(s.sh(&format!("test {expr}")).2, want, "test {expr}");
        }
        assert_eq!(s.run("[ -f /etc/passwd ]").error, None);
        assert_eq!(s.sh("[ -f f").2, 2);
        assert_eq!(s.sh("[ x -eq 1 ]").1, "[: x: integer expression expected\n");
        assert_eq!(s.ok("[ -d d ] && echo dir || echo no"), "dir\n");
        assert_eq!(
            s.sh(&format!("[ {}x ]", "! ".repeat(100_000))).1,
            "[: expression nested too deeply\n"
        );
        assert_eq!(s.sh(&format!("[ {}x ]", "\\( ".repeat(100_000))).2, 2);
    }
}
