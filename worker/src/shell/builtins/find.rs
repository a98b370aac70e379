//! `find` (names, paths, types, depths, `-empty`, `-delete`, `!` and `-o`) and `du`, both over
//! [`walk`](super::walk::walk): symlinks below an operand are listed, never entered.

use rustix::io::Errno;

use super::args::{count_option, opts, parse_count};
use super::files::base_name;
use super::io::human;
use super::walk::{Event, Node, Order, Step, walk};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::glob::Glob;
use crate::shell::path::{Access, Kind, Resolved, errno};

/// One `find` test.
#[derive(Debug)]
enum Test {
    /// `-name`/`-iname`: the last component.
    Name(Glob),
    /// `-path`: the whole path as shown.
    Path(Glob),
    Type(Kind),
    Empty,
}

/// A parsed `find` command line: an OR of ANDs of possibly negated tests (no parentheses).
#[derive(Debug, Default)]
struct FindExpr {
    starts: Vec<String>,
    any_of: Vec<Vec<(bool, Test)>>,
    delete: bool,
    max_depth: Option<u64>,
    min_depth: u64,
}

impl FindExpr {
    /// Parses the arguments; `None` after the message.
    fn parse(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Option<Self> {
        let mut expr = FindExpr::default();
        let split = args
            .iter()
            .position(|a| a.starts_with('-') || a == "!" || a == "(");
        let (starts, mut rest) = args.split_at(split.unwrap_or(args.len()));
        expr.starts = if starts.is_empty() {
            vec![".".into()]
        } else {
            starts.to_vec()
        };
        let (mut group, mut negate) = (Vec::new(), false);
        while let Some((a, tail)) = rest.split_first() {
            rest = tail;
            let a = a.as_str();
            let mut value = "";
            if [
                "-name",
                "-iname",
                "-path",
                "-wholename",
                "-type",
                "-maxdepth",
                "-mindepth",
            ]
            .contains(&a)
            {
                let Some((v, tail)) = rest.split_first() else {
                    ctx.warn(format_args!("missing argument to '{a}'"));
                    return None;
                };
                (value, rest) = (v, tail);
            }
            match a {
                "!" | "-not" => negate = !negate,
                "-o" | "-or" => expr.any_of.push(std::mem::take(&mut group)),
                "-a" | "-and" | "-print" => {}
                "-maxdepth" => expr.max_depth = Some(parse_count(ctx, "depth", value)?),
                "-mindepth" => expr.min_depth = parse_count(ctx, "depth", value)?,
                "-delete" => expr.delete = true,
                _ => group.push((std::mem::take(&mut negate), predicate(ctx, a, value)?)),
            }
        }
        expr.any_of.push(group);
        Some(expr)
    }

    fn matches(&self, ctx: &Ctx<'_, '_>, n: &Node) -> bool {
        self.any_of.iter().any(|group| {
            group.iter().all(|(negated, test)| {
                let hit = match test {
                    Test::Name(p) => p.matches(base_name(&n.shown)),
                    Test::Path(p) => p.matches(&n.shown),
                    Test::Type(kind) => n.meta.kind == *kind,
                    Test::Empty => match n.meta.kind {
                        Kind::File => n.meta.len == 0,
                        Kind::Dir => ctx.fs().list(&n.node).is_ok_and(|c| c.is_empty()),
                        _ => false,
                    },
                };
                hit != *negated
            })
        })
    }
}

/// A test of the expression, with its value; `None` after the message.
fn predicate(ctx: &mut Ctx<'_, '_>, a: &str, value: &str) -> Option<Test> {
    let glob = |ctx: &mut Ctx<'_, '_>| match Glob::new(value, a == "-iname") {
        Ok(g) => Some(g),
        Err(e) => {
            ctx.warn(format_args!("invalid pattern '{value}': {e}"));
            None
        }
    };
    let kind = match value {
        "f" => Kind::File,
        "d" => Kind::Dir,
        _ => Kind::Symlink,
    };
    match a {
        "-name" | "-iname" => glob(ctx).map(Test::Name),
        "-path" | "-wholename" => glob(ctx).map(Test::Path),
        "-type" if matches!(value, "f" | "d" | "l") => Some(Test::Type(kind)),
        "-type" => {
            ctx.warn(format_args!("unknown argument to -type: {value}"));
            None
        }
        "-empty" => Some(Test::Empty),
        "-exec" | "-execdir" | "-ok" => {
            ctx.warn(format_args!(
                "{a} is not supported; pipe the names into xargs instead (find ... | xargs CMD)"
            ));
            None
        }
        "(" | ")" => {
            ctx.warn("parentheses are not supported; use -o between simple tests");
            None
        }
        other => {
            ctx.warn(format_args!("unknown predicate '{other}'"));
            None
        }
    }
}

pub(super) fn find(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(expr) = FindExpr::parse(ctx, args) else {
        return Ok(1);
    };
    let mut status = 0;
    let mut doomed: Vec<(Resolved, String)> = Vec::new();
    for start in &expr.starts {
        let node = match Node::start(ctx, start, false) {
            Ok(n) => n,
            Err(e) => {
                ctx.fail(format_args!("'{start}'"), &e);
                status = 1;
                continue;
            }
        };
        let finished = walk(ctx, node, Order::ByName, |ctx, event| {
            let n = match event {
                Event::Enter(n) => n,
                Event::Leave(_) => return Ok(Step::Into),
                Event::Unlistable(n, e) => {
                    ctx.fail(format_args!("'{}'", n.shown), &e);
                    status = 1;
                    return Ok(Step::Into);
                }
            };
            let depth = n.depth as u64;
            if depth >= expr.min_depth && expr.matches(ctx, n) {
                if expr.delete {
                    doomed.push((n.node.clone(), n.shown.clone()));
                } else if !ctx.outs(&format!("{}\n", n.shown)) {
                    return Ok(Step::Stop);
                }
            }
            Ok(if expr.max_depth.is_some_and(|m| depth >= m) {
                Step::Over
            } else {
                Step::Into
            })
        })?;
        if !finished {
            return Ok(status);
        }
    }
    // -delete: deepest first, so directories are empty when their turn comes.
    for (node, shown) in doomed.into_iter().rev() {
        ctx.check()?;
        let removed = ctx
            .fs()
            .resolve_guest(node.guest, Access::Write, false)
            .and_then(|w| {
                if w.mount_root || w.is_virtual() {
                    Err(errno(Errno::BUSY))
                } else if ctx.fs().lstat(&w)?.is_dir() {
                    ctx.fs().remove_dir(&w)
                } else {
                    ctx.fs().remove_file(&w)
                }
            });
        if let Err(e) = removed {
            ctx.fail(format_args!("cannot delete '{shown}'"), &e);
            status = 1;
        }
    }
    Ok(status)
}

/// What `du` prints, and how.
struct DuOpts {
    summarize: bool,
    all: bool,
    human: bool,
    bytes: bool,
    max_depth: Option<u64>,
}

impl DuOpts {
    /// One line of output: `SIZE\tPATH`.
    fn line(&self, size: u64, path: &str) -> String {
        let size = if self.human {
            human(size)
        } else if self.bytes {
            size.to_string()
        } else {
            size.div_ceil(1024).to_string()
        };
        format!("{size}\t{path}\n")
    }

    /// Whether a node at `depth` gets a line (directories; files too with `-a`).
    fn shows(&self, n: &Node) -> bool {
        let within = !self.summarize && self.max_depth.is_none_or(|m| n.depth as u64 <= m);
        n.depth == 0 || (within && (self.all || n.is_dir()))
    }
}

/// Sums the tree below `start` (post-order), printing what [`DuOpts::shows`]; `None` when the
/// output closed.
fn du_tree(ctx: &mut Ctx<'_, '_>, start: Node, o: &DuOpts) -> Result<Option<u64>, Abort> {
    // The totals of the directories being summed, innermost last.
    let mut totals: Vec<u64> = Vec::new();
    let mut grand = 0;
    let finished = walk(ctx, start, Order::ByName, |ctx, event| {
        let (n, size) = match event {
            Event::Enter(n) => {
                let own = if o.bytes {
                    n.meta.len
                } else {
                    n.meta.blocks * 512
                };
                if n.is_dir() {
                    totals.push(own);
                    return Ok(Step::Into);
                }
                (n, own)
            }
            Event::Leave(n) => (n, totals.pop().unwrap_or(0)),
            Event::Unlistable(n, e) => {
                ctx.fail(format_args!("cannot read directory '{}'", n.shown), &e);
                return Ok(Step::Into);
            }
        };
        *totals.last_mut().unwrap_or(&mut grand) += size;
        if o.shows(n) && !ctx.outs(&o.line(size, &n.shown)) {
            return Ok(Step::Stop);
        }
        Ok(Step::Into)
    })?;
    Ok(finished.then_some(grand))
}

pub(super) fn du(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(opt) = opts(
        ctx,
        args,
        "shacbkd:",
        "summarize=s human-readable=h all=a total=c bytes=b max-depth=d",
    ) else {
        return Ok(1);
    };
    let Ok(max_depth) = count_option(ctx, &opt, 'd', "maximum depth") else {
        return Ok(1);
    };
    let o = DuOpts {
        summarize: opt.has('s'),
        all: opt.has('a'),
        human: opt.has('h'),
        bytes: opt.has('b'),
        max_depth,
    };
    let mut status = 0;
    let mut grand = 0;
    for arg in opt.operands_or(".") {
        let node = match Node::start(ctx, &arg, true) {
            Ok(n) => n,
            Err(e) => {
                ctx.fail(format_args!("cannot access '{arg}'"), &e);
                status = 1;
                continue;
            }
        };
        match du_tree(ctx, node, &o)? {
            Some(n) => grand += n,
            None => return Ok(status),
        }
    }
    if opt.has('c') {
        ctx.outs(&o.line(grand, "total"));
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    #[test]
    fn du_and_find() {
        let mut s = Sandbox::new();
        s.write("d/a.txt", &"x".repeat(3000));
        s.write("d/sub/b.py", "print()\n");
        s.write("d/sub/c.txt", "");
        s.write("d/empty_dir/.keep", "");
        s.ok("rm d/empty_dir/.keep");
        let du = s.ok("du d");
        assert!(du.ends_with("\td\n") && du.contains("\td/sub\n"), "{du}");
        let sum = s.ok("du -s d");
        assert_eq!(sum.lines().count(), 1);
        assert!(s.ok("du -sh d").ends_with("K\td\n"));
        assert_eq!(s.ok("du -sb d/a.txt"), "3000\td/a.txt\n");
        assert!(s.ok("du -a d").contains("\td/sub/b.py\n"));
        assert!(s.ok("du -sc d d/sub").ends_with("\ttotal\n"));
        assert_eq!(s.ok("find d -name '*.txt'"), "d/a.txt\nd/sub/c.txt\n");
        assert_eq!(
            s.ok("cd d; find . -type d; cd .."),
            ".\n./empty_dir\n./sub\n"
        );
        assert_eq!(s.ok("find d -maxdepth 1 -type f"), "d/a.txt\n");
        assert_eq!(s.ok("find d -mindepth 2"), "d/sub/b.py\nd/sub/c.txt\n");
        assert_eq!(
            s.ok("find d -name '*.py' -o -name 'c*'"),
            "d/sub/b.py\nd/sub/c.txt\n"
        );
        assert_eq!(s.ok("find d -type f ! -name '*.txt'"), "d/sub/b.py\n");
        assert_eq!(s.ok("find d -empty"), "d/empty_dir\nd/sub/c.txt\n");
        assert_eq!(s.ok("find d -iname 'A.TXT'"), "d/a.txt\n");
        assert_eq!(s.ok("find d -path '*sub/*.py'"), "d/sub/b.py\n");
        assert_eq!(s.ok("find /app/d/sub | head -n 1"), "/app/d/sub\n");
        assert_eq!(
            s.ok("find d -name '*.txt' -delete; find d -type f"),
            "d/sub/b.py\n"
        );
        assert_eq!(
            s.sh("find nope").1,
            "find: 'nope': No such file or directory\n"
        );
        assert!(s.sh("find . -exec rm {} ;").1.contains("not supported"));
        assert_eq!(
            s.sh("find . -bogus").1,
            "find: unknown predicate '-bogus'\n"
        );
    }

    #[test]
    fn du_sums_directories_after_their_contents() {
        let mut s = Sandbox::new();
        s.write("d/x/f", &"x".repeat(10));
        s.write("d/y", &"y".repeat(5));
        let out = s.ok("du -ab d");
        let rows: Vec<(u64, &str)> = out
            .lines()
            .map(|l| l.split_once('\t').unwrap())
            .map(|(n, p)| (n.parse().unwrap(), p))
            .collect();
        let paths: Vec<&str> = rows.iter().map(|r| r.1).collect();
        assert_eq!(paths, ["d/x/f", "d/x", "d/y", "d"]);
        assert_eq!((rows[0].0, rows[2].0), (10, 5));
        assert!(rows[1].0 > 10 && rows[3].0 > rows[1].0 + 5, "{out}");
        assert_eq!(s.ok("du -ab --max-depth=0 d/x/f"), "10\td/x/f\n");
        assert_eq!(s.ok("find d -maxdepth 0"), "d\n");
    }
}
