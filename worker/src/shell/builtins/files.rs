//! File built-ins: `ls`, `mkdir`, `rm`, `rmdir`, `touch`, `chmod`.
//!
//! Every path goes through [`Fs`](crate::shell::path::Fs): arguments are resolved with the
//! checks of confinement and every operation runs through the mount's root handle. `rm -r`
//! removes with the confined layer's `remove_tree`, which never follows a link. A mount point
//! itself is never removed: `rm -rf /app` empties it, and `rm -rf /` is refused like coreutils'
//! `--preserve-root`.

use std::time::SystemTime;

use chrono::DateTime;
use rustix::io::Errno;

use super::args::opts;
use super::io::{Fail, each_operand, human, say};
use super::session::parse_date;
use super::walk::{Event, Node, Order, Step, walk};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::path::{Access, Entry, FsError, Kind, Meta, Resolved, errno, join, normalize};

/// The last component of a path argument (`a/b/` → `b`).
pub(crate) fn base_name(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.is_empty() { "" } else { "/" };
    }
    t.rsplit('/').next().unwrap_or(t)
}

/// `drwxr-xr-x`.
fn mode_string(m: &Meta) -> String {
    let mut s = String::from(match m.kind {
        Kind::Dir => 'd',
        Kind::Symlink => 'l',
        Kind::File => '-',
        Kind::Fifo => 'p',
        Kind::CharDevice => 'c',
        Kind::BlockDevice => 'b',
        Kind::Socket => 's',
    });
    for (shift, special, set, unset) in [
        (6, 0o4000, 's', 'S'),
        (3, 0o2000, 's', 'S'),
        (0, 0o1000, 't', 'T'),
    ] {
        let p = (m.mode >> shift) & 7;
        s.push(if p & 4 != 0 { 'r' } else { '-' });
        s.push(if p & 2 != 0 { 'w' } else { '-' });
        s.push(match (p & 1 != 0, m.mode & special != 0) {
            (true, true) => set,
            (false, true) => unset,
            (true, false) => 'x',
            (false, false) => '-',
        });
    }
    s
}

/// `Mar  5 14:03` for recent files, `Mar  5  2023` for older (or future) ones, like ls.
fn ls_time(mtime: i64, now: i64) -> String {
    const SIX_MONTHS: i64 = 15_778_476;
    let recent = now - mtime < SIX_MONTHS && mtime <= now + 60;
    let format = if recent { "%b %e %H:%M" } else { "%b %e  %Y" };
    DateTime::from_timestamp(mtime, 0).map_or_else(|| "?".into(), |t| t.format(format).to_string())
}

/// One line of `ls`: its name (as shown) and what it is.
struct Item {
    name: String,
    meta: Meta,
    node: Resolved,
}

/// The flags of `ls` that decide what is listed and how.
struct LsOpts {
    long: bool,
    all: bool,
    almost: bool,
    recursive: bool,
    human: bool,
    dirs_as_files: bool,
    reverse: bool,
    by_time: bool,
    by_size: bool,
}

impl LsOpts {
    fn sort(&self, items: &mut [Item]) {
        items.sort_by(|a, b| {
            let ord = if self.by_time {
                b.meta.mtime.cmp(&a.meta.mtime)
            } else if self.by_size {
                b.meta.len.cmp(&a.meta.len)
            } else {
                std::cmp::Ordering::Equal
            };
            let ord = ord.then_with(|| a.name.cmp(&b.name));
            if self.reverse { ord.reverse() } else { ord }
        });
    }

    fn size(&self, m: &Meta) -> String {
        if self.human {
            human(m.len)
        } else {
            m.len.to_string()
        }
    }
}

/// Prints items as `ls` does (one per line, or `-l` lines with a `total` for directories).
fn ls_lines(ctx: &mut Ctx<'_, '_>, items: &[Item], o: &LsOpts, total: bool) -> bool {
    let mut text = String::new();
    if !o.long {
        for it in items {
            text.push_str(&it.name);
            text.push('\n');
        }
        return ctx.outs(&text);
    }
    let now = chrono::Utc::now().timestamp();
    let w_links = items
        .iter()
        .map(|i| i.meta.nlink.to_string().len())
        .max()
        .unwrap_or(1);
    let w_size = items
        .iter()
        .map(|i| o.size(&i.meta).len())
        .max()
        .unwrap_or(1);
    if total {
        let blocks: u64 = items.iter().map(|i| i.meta.blocks).sum();
        let t = if o.human {
            human(blocks * 512)
        } else {
            blocks.div_ceil(2).to_string()
        };
        text.push_str(&format!("total {t}\n"));
    }
    for it in items {
        let m = &it.meta;
        text.push_str(&format!(
            "{} {:>w_links$} user user {:>w_size$} {} {}",
            mode_string(m),
            m.nlink,
            o.size(m),
            ls_time(m.mtime, now),
            it.name
        ));
        if m.kind == Kind::Symlink
            && let Some(target) = ctx.fs().link_text(&it.node)
        {
            text.push_str(&format!(" -> {target}"));
        }
        text.push('\n');
    }
    ctx.outs(&text)
}

/// The entries of a directory as ls shows them (with `.` and `..` for `-a`).
fn ls_entries(ctx: &Ctx<'_, '_>, dir: &Resolved, o: &LsOpts) -> Result<Vec<Item>, FsError> {
    let fs = ctx.fs();
    let mut items = Vec::new();
    if o.all {
        items.push(Item {
            name: ".".into(),
            meta: fs.stat(dir)?,
            node: dir.clone(),
        });
        if let Ok(p) = fs.resolve(&dir.guest, "..", Access::Read, true)
            && let Ok(meta) = fs.stat(&p)
        {
            items.push(Item {
                name: "..".into(),
                meta,
                node: p,
            });
        }
    }
    for Entry { name, node } in fs.list(dir)? {
        if name.starts_with('.') && !o.all && !o.almost {
            continue;
        }
        if let Ok(meta) = fs.lstat(&node) {
            items.push(Item { name, meta, node });
        }
    }
    Ok(items)
}

/// An `ls` operand: a symlink is followed unless it is to be shown itself (`-l`, `-d`), and a
/// trailing slash asks for what it points to even with `-l`.
fn ls_operand(ctx: &Ctx<'_, '_>, arg: &str, o: &LsOpts) -> Result<Item, FsError> {
    let fs = ctx.fs();
    let node = ctx.resolve(arg, Access::Read, false)?;
    let meta = fs.lstat(&node)?;
    let (node, meta) =
        if meta.kind == Kind::Symlink && !o.dirs_as_files && (!o.long || arg.ends_with('/')) {
            let target = fs.follow(&node)?;
            let meta = fs.lstat(&target)?;
            (target, meta)
        } else {
            (node, meta)
        };
    Ok(Item {
        name: arg.to_string(),
        meta,
        node,
    })
}

pub(super) fn ls(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(opt) = opts(
        ctx,
        args,
        "laA1RhdrtSFCx",
        "all=a almost-all=A recursive=R human-readable=h directory=d reverse=r",
    ) else {
        return Ok(2);
    };
    let o = LsOpts {
        long: opt.has('l'),
        all: opt.has('a'),
        almost: opt.has('A'),
        recursive: opt.has('R'),
        human: opt.has('h'),
        dirs_as_files: opt.has('d'),
        reverse: opt.has('r'),
        by_time: opt.has('t'),
        by_size: opt.has('S'),
    };
    let operands = opt.operands_or(".");
    let mut status = 0;
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for arg in &operands {
        match ls_operand(ctx, arg, &o) {
            Ok(item) if item.meta.is_dir() && !o.dirs_as_files => dirs.push(item),
            Ok(item) => files.push(item),
            Err(e) => {
                ctx.fail(format_args!("cannot access '{arg}'"), &e);
                status = 2;
            }
        }
    }
    o.sort(&mut files);
    o.sort(&mut dirs);
    let printed = !files.is_empty();
    if printed && !ls_lines(ctx, &files, &o, false) {
        return Ok(status);
    }
    let headers = operands.len() > 1 || o.recursive;
    Ok(status.max(ls_dirs(ctx, dirs, &o, printed, headers)?))
}

/// Lists directories (and, with `-R`, the directories below them), each under a `DIR:`
/// header when `headers`; the status is 2 when one could not be read.
fn ls_dirs(
    ctx: &mut Ctx<'_, '_>,
    dirs: Vec<Item>,
    o: &LsOpts,
    mut printed: bool,
    headers: bool,
) -> Result<i32, Abort> {
    let mut status = 0;
    let mut stack: Vec<(String, Resolved)> =
        dirs.into_iter().rev().map(|d| (d.name, d.node)).collect();
    while let Some((label, node)) = stack.pop() {
        ctx.check()?;
        let mut items = match ls_entries(ctx, &node, o) {
            Ok(items) => items,
            Err(e) => {
                ctx.fail(format_args!("cannot open directory '{label}'"), &e);
                status = 2;
                continue;
            }
        };
        o.sort(&mut items);
        let gap = if printed { "\n" } else { "" };
        let header = if headers {
            format!("{gap}{label}:\n")
        } else {
            gap.to_string()
        };
        if !ctx.outs(&header) || !ls_lines(ctx, &items, o, true) {
            return Ok(status);
        }
        printed = true;
        if o.recursive {
            let subdirs = items
                .iter()
                .rev()
                .filter(|i| i.meta.is_dir() && i.name != "." && i.name != "..");
            stack.extend(subdirs.map(|i| (join(&label, &i.name), i.node.clone())));
        }
    }
    Ok(status)
}

pub(super) fn mkdir(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "pvm:", "parents=p verbose=v mode=m") else {
        return Ok(1);
    };
    if o.operands.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    let parents = o.has('p');
    each_operand(
        ctx,
        &o.operands,
        "cannot create directory '{}'",
        |ctx, arg| {
            let exists = || {
                ctx.resolve(arg, Access::Read, true)
                    .and_then(|r| ctx.fs().stat(&r))
            };
            if parents && exists().is_ok_and(|m| m.is_dir()) {
                return Ok(());
            }
            let r = ctx.resolve(arg, Access::Write, true)?;
            ctx.fs().create_dir(&r, parents)?;
            if o.has('v') {
                ctx.outs(&format!("mkdir: created directory '{arg}'\n"));
            }
            Ok(())
        },
    )
}

/// `rm` of `/`, which holds the mounts: never removable (coreutils' --preserve-root, always on).
fn refuse_root(ctx: &mut Ctx<'_, '_>, arg: &str, recursive: bool) -> Fail {
    let refusal = FsError::ReadOnly {
        guest: "/".into(),
        mount: "/".into(),
    };
    ctx.sh.record(&refusal);
    if !recursive {
        return say(ctx, format_args!("cannot remove '{arg}': Is a directory"));
    }
    ctx.warn(format_args!(
        "it is dangerous to operate recursively on '{arg}'"
    ));
    say(
        ctx,
        format_args!("{refusal} (it holds the mounts; --no-preserve-root is not available)"),
    )
}

/// Empties a mount point entry by entry (the deadline checked per entry), without following
/// symlinks: the mount point itself stays.
fn remove_contents(ctx: &mut Ctx<'_, '_>, dir: &Resolved) -> Result<(), Fail> {
    for e in ctx.fs().list(dir)? {
        ctx.check()?;
        ctx.fs().remove_tree(&e.node)?;
    }
    Ok(())
}

pub(super) fn rm(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "rRfdivIpP",
        "recursive=r force=f dir=d verbose=v no-preserve-root=P preserve-root=p",
    ) else {
        return Ok(1);
    };
    let (recursive, force) = (o.has('r') || o.has('R'), o.has('f'));
    if o.operands.is_empty() {
        if !force {
            ctx.warn("missing operand");
        }
        return Ok(i32::from(!force));
    }
    each_operand(ctx, &o.operands, "cannot remove '{}'", |ctx, arg| {
        if matches!(base_name(arg), "." | "..") {
            return Err(say(
                ctx,
                format_args!("refusing to remove '.' or '..' directory: skipping '{arg}'"),
            ));
        }
        if normalize(ctx.cwd(), arg) == "/" {
            return Err(refuse_root(ctx, arg, recursive));
        }
        let found = ctx
            .resolve(arg, Access::Write, false)
            .and_then(|node| Ok((ctx.fs().lstat(&node)?, node)));
        let (meta, node) = match found {
            Err(e) if force && e.io_kind() == Some(std::io::ErrorKind::NotFound) => return Ok(()),
            found => found?,
        };
        if !meta.is_dir() {
            ctx.fs().remove_file(&node)?;
        } else if node.mount_root && recursive {
            remove_contents(ctx, &node)?;
            ctx.warn(format_args!(
                "'{arg}' is a mount point: removed its contents, kept the directory"
            ));
        } else if node.mount_root {
            return Err(errno(if o.has('d') {
                Errno::BUSY
            } else {
                Errno::ISDIR
            })
            .into());
        } else if recursive {
            ctx.fs().remove_tree(&node)?;
        } else if o.has('d') {
            ctx.fs().remove_dir(&node)?;
        } else {
            return Err(errno(Errno::ISDIR).into());
        }
        if o.has('v') {
            let what = if meta.is_dir() {
                "removed directory"
            } else {
                "removed"
            };
            ctx.outs(&format!("{what} '{arg}'\n"));
        }
        Ok(())
    })
}

pub(super) fn rmdir(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "pv", "parents=p verbose=v") else {
        return Ok(1);
    };
    if o.operands.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    each_operand(ctx, &o.operands, "", |ctx, arg| {
        let mut path = arg.trim_end_matches('/').to_string();
        loop {
            let removed = ctx.resolve(&path, Access::Write, false).and_then(|r| {
                if r.mount_root || r.is_virtual() {
                    return Err(errno(Errno::BUSY));
                }
                if ctx.fs().lstat(&r).is_ok_and(|m| m.kind == Kind::Symlink) {
                    return Err(errno(Errno::NOTDIR));
                }
                ctx.fs().remove_dir(&r)
            });
            if let Err(e) = removed {
                ctx.fail(format_args!("failed to remove '{path}'"), &e);
                return Err(Fail::Said);
            }
            if o.has('v') {
                ctx.outs(&format!("rmdir: removing directory, '{path}'\n"));
            }
            match path.rsplit_once('/') {
                Some((parent, _)) if o.has('p') && !parent.is_empty() => path = parent.to_string(),
                _ => return Ok(()),
            }
        }
    })
}

pub(super) fn touch(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "camd:", "no-create=c date=d") else {
        return Ok(1);
    };
    let time = |d: &str| {
        Some(SystemTime::from(DateTime::from_timestamp(
            parse_date(d)?,
            0,
        )?))
    };
    let at = match o.value('d').map(|d| (d, time(d))) {
        None => None,
        Some((_, Some(at))) => Some(at),
        Some((d, None)) => {
            ctx.warn(format_args!("invalid date format '{d}'"));
            return Ok(1);
        }
    };
    if o.operands.is_empty() {
        ctx.warn("missing file operand");
        return Ok(1);
    }
    each_operand(ctx, &o.operands, "cannot touch '{}'", |ctx, arg| {
        let r = ctx.resolve(arg, Access::Write, true)?;
        Ok(ctx.fs().touch(&r, !o.has('c'), at)?)
    })
}

/// Applies a chmod mode (`755`, `u+x`, `go-w`, `a=r,u+w`) to `old`.
fn chmod_mode(spec: &str, old: u32, is_dir: bool) -> Option<u32> {
    if !spec.is_empty() && spec.chars().all(|c| ('0'..='7').contains(&c)) {
        return u32::from_str_radix(spec, 8).ok().filter(|m| *m <= 0o7777);
    }
    let mut mode = old & 0o7777;
    for clause in spec.split(',') {
        let who_end = clause.find(['+', '-', '='])?;
        let who = &clause[..who_end];
        let mut mask = 0;
        for c in who.chars() {
            mask |= match c {
                'u' => 0o700,
                'g' => 0o070,
                'o' => 0o007,
                'a' => 0o777,
                _ => return None,
            };
        }
        if mask == 0 {
            mask = 0o777;
        }
        // Each operator with the permission letters up to the next one: `u+x-w`.
        let ops = &clause[who_end..];
        let starts: Vec<usize> = ops.match_indices(['+', '-', '=']).map(|(i, _)| i).collect();
        for (k, &at) in starts.iter().enumerate() {
            let perms = &ops[at + 1..starts.get(k + 1).copied().unwrap_or(ops.len())];
            let mut bits = 0;
            for p in perms.chars() {
                bits |= match p {
                    'r' => 0o444,
                    'w' => 0o222,
                    'x' => 0o111,
                    'X' if is_dir || old & 0o111 != 0 => 0o111,
                    'X' => 0,
                    _ => return None,
                };
            }
            let bits = bits & mask;
            match &ops[at..=at] {
                "+" => mode |= bits,
                "-" => mode &= !bits,
                _ => mode = (mode & !mask) | bits,
            }
        }
    }
    Some(mode)
}

pub(super) fn chmod(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // Modes like `-w` look like options: only -R is one, and the first other word is the mode.
    let recursive = args.iter().any(|a| a == "-R" || a == "--recursive");
    let rest: Vec<String> = args
        .iter()
        .filter(|a| *a != "-R" && *a != "--recursive")
        .cloned()
        .collect();
    let Some((mode, files)) = rest.split_first() else {
        ctx.warn("missing operand");
        return Ok(1);
    };
    if files.is_empty() {
        ctx.warn(format_args!("missing operand after '{mode}'"));
        return Ok(1);
    }
    if chmod_mode(mode, 0, false).is_none() {
        ctx.warn(format_args!("invalid mode: '{mode}'"));
        return Ok(1);
    }
    each_operand(ctx, files, "cannot access '{}'", |ctx, arg| {
        let node = ctx.resolve(arg, Access::Write, true)?;
        let mut failed = false;
        walk(
            ctx,
            Node::at(ctx, node, arg)?,
            Order::ByName,
            |ctx, event| {
                let Event::Enter(n) = event else {
                    return Ok(Step::Into);
                };
                if n.meta.kind == Kind::Symlink {
                    return Ok(Step::Over);
                }
                let new = chmod_mode(mode, n.meta.mode, n.is_dir()).unwrap_or(n.meta.mode);
                if let Err(e) = ctx.fs().set_mode(&n.node, new) {
                    ctx.fail(format_args!("changing permissions of '{}'", n.shown), &e);
                    failed = true;
                }
                Ok(if recursive { Step::Into } else { Step::Over })
            },
        )?;
        if failed { Err(Fail::Said) } else { Ok(()) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::shell::tests::Sandbox;

    #[test]
    fn ls_formats() {
        let mut s = Sandbox::new();
        s.write("b.txt", "12345");
        s.write("a.txt", "");
        s.write(".hidden", "");
        s.write("sub/inner.txt", "x");
        assert_eq!(s.ok("ls"), "a.txt\nb.txt\nsub\n");
        assert_eq!(s.ok("ls -1 sub"), "inner.txt\n");
        assert_eq!(s.ok("ls -a"), ".\n..\n.hidden\na.txt\nb.txt\nsub\n");
        assert_eq!(s.ok("ls -A"), ".hidden\na.txt\nb.txt\nsub\n");
        assert_eq!(s.ok("ls -r"), "sub\nb.txt\na.txt\n");
        assert_eq!(s.ok("ls b.txt sub"), "b.txt\n\nsub:\ninner.txt\n");
        assert_eq!(
            s.ok("ls -R"),
            ".:\na.txt\nb.txt\nsub\n\n./sub:\ninner.txt\n"
        );
        assert_eq!(s.ok("ls -d sub /app"), "/app\nsub\n");
        assert_eq!(s.ok("ls /"), "app\ndata\ntmp\n");
        assert_eq!(s.ok("ls -S a.txt b.txt"), "b.txt\na.txt\n");
        let long = s.ok("ls -l");
        let lines: Vec<&str> = long.lines().collect();
        assert!(lines[0].starts_with("total "), "{long}");
        let re = regex::Regex::new(
            r"^-rw-r--r-- 1 user user +5 [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d b\.txt$",
        )
        .unwrap();
        assert!(re.is_match(lines[2]), "{long}");
        assert!(
            lines[3].starts_with("drwx") && lines[3].ends_with(" sub"),
            "{long}"
        );
        s.write("big", &"x".repeat(5000));
        assert!(
            s.ok("ls -lh big").contains(" 4.9K "),
            "{}",
            s.ok("ls -lh big")
        );
        let (out, err, code) = s.sh("ls nope a.txt");
        assert_eq!(out, "a.txt\n");
        assert_eq!(err, "ls: cannot access 'nope': No such file or directory\n");
        assert_eq!(code, 2);
        assert_eq!(s.sh("ls -z").2, 2);
    }

    #[test]
    fn mkdir_rm_rmdir_touch() {
        let mut s = Sandbox::new();
        assert_eq!(s.ok("mkdir -p a/b/c && mkdir -p a/b && ls a/b"), "c\n");
        assert_eq!(
            s.sh("mkdir a").1,
            "mkdir: cannot create directory 'a': File exists\n"
        );
        assert_eq!(
            s.sh("mkdir x/y").1,
            "mkdir: cannot create directory 'x/y': No such file or directory\n"
        );
        assert_eq!(
            s.ok("mkdir -v m1 m2"),
            "mkdir: created directory 'm1'\nmkdir: created directory 'm2'\n"
        );
        s.ok("touch f1 f2");
        assert!(s.exists("f1"));
        assert_eq!(s.ok("touch -c nope; ls nope 2>/dev/null; echo $?"), "2\n");
        let before = std::fs::metadata(s.app.path().join("f1"))
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.ok("touch f1");
        assert!(
            std::fs::metadata(s.app.path().join("f1"))
                .unwrap()
                .modified()
                .unwrap()
                > before
        );
        assert_eq!(s.sh("rm a").1, "rm: cannot remove 'a': Is a directory\n");
        assert_eq!(
            s.sh("rm nope").1,
            "rm: cannot remove 'nope': No such file or directory\n"
        );
        assert_eq!(s.ok("rm -f nope f1; ls f1 2>/dev/null; echo $?"), "2\n");
        assert_eq!(
            s.sh("rmdir a").1,
            "rmdir: failed to remove 'a': Directory not empty\n"
        );
        s.write("a/keep", "");
        assert_eq!(
            s.sh("rmdir m1 && rmdir -p a/b/c").1,
            "rmdir: failed to remove 'a': Directory not empty\n"
        );
        assert!(!s.exists("m1") && !s.exists("a/b") && s.exists("a/keep"));
        assert_eq!(s.ok("rm -rv a"), "removed directory 'a'\n");
        assert!(!s.exists("a"));
        s.ok("mkdir e; rm -d e");
        assert!(!s.exists("e"));
        assert_eq!(s.sh("rm").2, 1);
        s.ok("touch -d '2001-02-03 04:05:06' old; touch -d @0 f2");
        assert!(s.ok("ls -l old").contains(" Feb  3  2001 old"));
        assert!(s.ok("ls -l f2").contains(" Jan  1  1970 f2"));
        assert_eq!(
            s.sh("touch -d never x").1,
            "touch: invalid date format 'never'\n"
        );
    }

    #[test]
    fn chmod_changes_bits() {
        let mut s = Sandbox::new();
        s.write("d/sub/b.py", "print()\n");
        s.ok("chmod 600 d/sub/b.py");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rw------- "));
        s.ok("chmod u+x,g+r d/sub/b.py");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rwxr----- "));
        s.ok("chmod -R a+r d");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rwxr--r-- "));
        assert_eq!(s.sh("chmod zz d").1, "chmod: invalid mode: 'zz'\n");
        assert_eq!(
            s.sh("chmod 644 nope").1,
            "chmod: cannot access 'nope': No such file or directory\n"
        );
    }

    fn meta(kind: Kind, mode: u32) -> Meta {
        Meta {
            kind,
            len: 0,
            mode,
            nlink: 1,
            mtime: 0,
            blocks: 0,
        }
    }

    #[test]
    fn mode_strings() {
        assert_eq!(mode_string(&meta(Kind::Dir, 0o40755)), "drwxr-xr-x");
        assert_eq!(mode_string(&meta(Kind::File, 0o100644)), "-rw-r--r--");
        assert_eq!(mode_string(&meta(Kind::File, 0o104755)), "-rwsr-xr-x");
        assert_eq!(mode_string(&meta(Kind::Dir, 0o41777)), "drwxrwxrwt");
        assert_eq!(mode_string(&meta(Kind::Symlink, 0o120777)), "lrwxrwxrwx");
        assert_eq!(mode_string(&meta(Kind::Fifo, 0o10644)), "prw-r--r--");
    }

    #[test]
    fn ls_times() {
        let now = 1_709_210_096; // 2024-02-29 12:34:56
        assert_eq!(ls_time(now - 60, now), "Feb 29 12:33");
        assert_eq!(ls_time(0, now), "Jan  1  1970");
    }

    #[test]
    fn chmod_modes() {
        assert_eq!(chmod_mode("755", 0, false), Some(0o755));
        assert_eq!(chmod_mode("+x", 0o644, false), Some(0o755));
        assert_eq!(chmod_mode("u+x,go-r", 0o644, false), Some(0o700));
        assert_eq!(chmod_mode("a=r", 0o777, false), Some(0o444));
        assert_eq!(chmod_mode("u=rw,g=r,o=", 0o777, false), Some(0o640));
        assert_eq!(chmod_mode("+X", 0o644, true), Some(0o755));
        assert_eq!(chmod_mode("u+x-w", 0o644, false), Some(0o544));
        assert_eq!(chmod_mode("9", 0, false), None);
        assert_eq!(chmod_mode("q+x", 0, false), None);
    }

    #[test]
    fn base_names() {
        assert_eq!(base_name("a/b/"), "b");
        assert_eq!(base_name("/"), "/");
        assert_eq!(base_name("x"), "x");
        assert_eq!(base_name(".."), "..");
    }
}
