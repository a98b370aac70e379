//! File built-ins: `ls`, `mkdir`, `rm`, `rmdir`, `cp`, `mv`, `touch`, `du`, `find`, `chmod`.
//!
//! Every path goes through [`Fs`](crate::shell::path::Fs): arguments are resolved with the
//! checks of confinement, every operation runs through the mount's root handle, and recursive
//! walks never follow a symlink (they `lstat` each entry and only descend into real
//! directories), so a tree that contains a symlink out of the mount is walked without ever
//! leaving it. `rm -r` removes with the confined layer's `remove_tree`, which never follows a
//! link either. A mount point itself is never removed or renamed: `rm -rf /app` empties it, and
//! `rm -rf /` is refused like coreutils' `--preserve-root`.

use std::io::{BufRead, Write};
use std::os::unix::fs::PermissionsExt;

use super::{MONTHS, civil, human, now_secs, opts, parse_count};
use crate::shell::exec::{Abort, Ctx, WRITE_BUDGET};
use crate::shell::expand::Pattern;
use crate::shell::path::{
    Access, Entry, FsError, Kind, Meta, Resolved, errno, errnos, join, normalize,
};

/// Deepest directory tree `cp -r` and `du` descend into: their recursion is native stack.
const MAX_TREE_DEPTH: usize = 256;

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
    let t = match m.kind {
        Kind::Dir => 'd',
        Kind::Symlink => 'l',
        Kind::File => '-',
        Kind::Other => match m.mode & 0o170000 {
            0o010000 => 'p',
            0o020000 => 'c',
            0o060000 => 'b',
            0o140000 => 's',
            _ => '?',
        },
    };
    let mut s = String::from(t);
    let bits = m.mode;
    for (shift, special, lower, upper) in [
        (6, 0o4000, 's', 'S'),
        (3, 0o2000, 's', 'S'),
        (0, 0o1000, 't', 'T'),
    ] {
        let p = (bits >> shift) & 7;
        s.push(if p & 4 != 0 { 'r' } else { '-' });
        s.push(if p & 2 != 0 { 'w' } else { '-' });
        s.push(match (p & 1 != 0, bits & special != 0) {
            (true, true) => lower,
            (false, true) => upper,
            (true, false) => 'x',
            (false, false) => '-',
        });
    }
    s
}

/// `Mar  5 14:03` for recent files, `Mar  5  2023` for older (or future) ones, like ls.
fn ls_time(mtime: i64, now: i64) -> String {
    const SIX_MONTHS: i64 = 15_778_476;
    let c = civil(mtime);
    let month = MONTHS[c.month as usize - 1];
    if now - mtime < SIX_MONTHS && mtime <= now + 60 {
        format!("{month} {:>2} {:02}:{:02}", c.day, c.hour, c.minute)
    } else {
        format!("{month} {:>2}  {}", c.day, c.year)
    }
}

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

/// One line to print: its name (as shown) and what it is.
struct Item {
    name: String,
    meta: Meta,
    node: Resolved,
}

fn sort_items(items: &mut [Item], o: &LsOpts) {
    items.sort_by(|a, b| {
        let ord = if o.by_time {
            b.meta
                .mtime
                .cmp(&a.meta.mtime)
                .then_with(|| a.name.cmp(&b.name))
        } else if o.by_size {
            b.meta
                .len
                .cmp(&a.meta.len)
                .then_with(|| a.name.cmp(&b.name))
        } else {
            a.name.cmp(&b.name)
        };
        if o.reverse { ord.reverse() } else { ord }
    });
}

fn ls_lines(ctx: &mut Ctx<'_, '_>, items: &[Item], o: &LsOpts, total: bool) -> bool {
    let mut text = String::new();
    if !o.long {
        for it in items {
            text.push_str(&it.name);
            text.push('\n');
        }
        return ctx.outs(&text);
    }
    let now = now_secs();
    let size = |m: &Meta| {
        if o.human {
            human(m.len)
        } else {
            m.len.to_string()
        }
    };
    let w_links = items
        .iter()
        .map(|i| i.meta.nlink.to_string().len())
        .max()
        .unwrap_or(1);
    let w_size = items.iter().map(|i| size(&i.meta).len()).max().unwrap_or(1);
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
        let mut line = format!(
            "{} {:>w_links$} user user {:>w_size$} {} {}",
            mode_string(&it.meta),
            it.meta.nlink,
            size(&it.meta),
            ls_time(it.meta.mtime, now),
            it.name
        );
        if it.meta.kind == Kind::Symlink
            && let Some(target) = ctx.fs().link_text(&it.node)
        {
            line.push_str(" -> ");
            line.push_str(&target);
        }
        line.push('\n');
        text.push_str(&line);
    }
    ctx.outs(&text)
}

/// The entries of a directory as ls shows them (with `.` and `..` for `-a`).
fn ls_entries(ctx: &mut Ctx<'_, '_>, dir: &Resolved, o: &LsOpts) -> Result<Vec<Item>, FsError> {
    let mut items = Vec::new();
    if o.all {
        let fs = ctx.fs();
        items.push(Item {
            name: ".".into(),
            meta: fs.stat(dir)?,
            node: dir.clone(),
        });
        let parent = fs
            .resolve(&dir.guest, "..", Access::Read, true)
            .ok()
            .and_then(|p| fs.stat(&p).ok().map(|m| (p, m)));
        if let Some((p, m)) = parent {
            items.push(Item {
                name: "..".into(),
                meta: m,
                node: p,
            });
        }
    }
    for Entry { name, node } in ctx.fs().list(dir)? {
        if name.starts_with('.') && !o.all && !o.almost {
            continue;
        }
        let meta = match ctx.fs().lstat(&node) {
            Ok(m) => m,
            Err(_) => continue,
        };
        items.push(Item { name, meta, node });
    }
    Ok(items)
}

pub(super) fn ls(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("all", 'a'),
        ("almost-all", 'A'),
        ("recursive", 'R'),
        ("human-readable", 'h'),
        ("directory", 'd'),
        ("reverse", 'r'),
    ];
    let Some(opt) = opts(ctx, args, "laA1RhdrtSFCx", &longs) else {
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
    let operands = if opt.operands.is_empty() {
        vec![".".to_string()]
    } else {
        opt.operands.clone()
    };
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for arg in &operands {
        let found = ctx.resolve(arg, Access::Read, false).and_then(|r| {
            let meta = ctx.fs().lstat(&r)?;
            // A symlink operand is followed unless it is to be shown itself.
            if meta.kind == Kind::Symlink && !o.long && !o.dirs_as_files {
                let target = ctx.fs().follow(&r)?;
                let m = ctx.fs().lstat(&target)?;
                return Ok((target, m));
            }
            if meta.kind == Kind::Symlink && o.long && !o.dirs_as_files && arg.ends_with('/') {
                let target = ctx.fs().follow(&r)?;
                let m = ctx.fs().lstat(&target)?;
                return Ok((target, m));
            }
            Ok((r, meta))
        });
        match found {
            Ok((node, meta)) => {
                let item = Item {
                    name: arg.clone(),
                    meta,
                    node,
                };
                if item.meta.is_dir() && !o.dirs_as_files {
                    dirs.push(item);
                } else {
                    files.push(item);
                }
            }
            Err(e) => {
                ctx.fail(format_args!("cannot access '{arg}'"), &e);
                status = 2;
            }
        }
    }
    sort_items(&mut files, &o);
    sort_items(&mut dirs, &o);
    let mut printed = false;
    if !files.is_empty() {
        if !ls_lines(ctx, &files, &o, false) {
            return Ok(status);
        }
        printed = true;
    }
    let headers = operands.len() > 1 || o.recursive;
    let mut stack: Vec<(String, Resolved)> =
        dirs.into_iter().rev().map(|d| (d.name, d.node)).collect();
    while let Some((label, node)) = stack.pop() {
        ctx.check()?;
        let mut items = match ls_entries(ctx, &node, &o) {
            Ok(items) => items,
            Err(e) => {
                ctx.fail(format_args!("cannot open directory '{label}'"), &e);
                status = 2;
                continue;
            }
        };
        sort_items(&mut items, &o);
        let mut text = String::new();
        if printed {
            text.push('\n');
        }
        if headers {
            text.push_str(&format!("{label}:\n"));
        }
        if !ctx.outs(&text) || !ls_lines(ctx, &items, &o, true) {
            return Ok(status);
        }
        printed = true;
        if o.recursive {
            let subdirs: Vec<(String, Resolved)> = items
                .iter()
                .filter(|i| i.meta.is_dir() && i.name != "." && i.name != "..")
                .map(|i| (join(&label, &i.name), i.node.clone()))
                .collect();
            stack.extend(subdirs.into_iter().rev());
        }
    }
    Ok(status)
}

pub(super) fn mkdir(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [("parents", 'p'), ("verbose", 'v'), ("mode", 'm')];
    let Some(o) = opts(ctx, args, "pvm:", &longs) else {
        return Ok(1);
    };
    if o.operands.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for arg in &o.operands {
        ctx.check()?;
        if o.has('p')
            && let Ok(r) = ctx.resolve(arg, Access::Read, true)
            && ctx.fs().stat(&r).is_ok_and(|m| m.is_dir())
        {
            continue;
        }
        let made = ctx
            .resolve(arg, Access::Write, true)
            .and_then(|r| ctx.fs().create_dir(&r, o.has('p')));
        match made {
            Ok(()) if o.has('v') => {
                let text = format!("mkdir: created directory '{arg}'\n");
                ctx.outs(&text);
            }
            Ok(()) => {}
            Err(e) => {
                ctx.fail(format_args!("cannot create directory '{arg}'"), &e);
                status = 1;
            }
        }
    }
    Ok(status)
}

/// Empties a mount point without following symlinks: the deadline is checked per entry, and
/// the confined layer's `remove_tree` (links removed, never followed) does each one.
fn remove_contents(ctx: &mut Ctx<'_, '_>, dir: &Resolved) -> Result<Result<(), FsError>, Abort> {
    let entries = match ctx.fs().list(dir) {
        Ok(e) => e,
        Err(e) => return Ok(Err(e)),
    };
    for e in entries {
        ctx.check()?;
        if let Err(err) = ctx.fs().remove_tree(&e.node) {
            return Ok(Err(err));
        }
    }
    Ok(Ok(()))
}

pub(super) fn rm(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("recursive", 'r'),
        ("force", 'f'),
        ("dir", 'd'),
        ("verbose", 'v'),
        ("no-preserve-root", 'P'),
        ("preserve-root", 'p'),
    ];
    let Some(o) = opts(ctx, args, "rRfdivIpP", &longs) else {
        return Ok(1);
    };
    let recursive = o.has('r') || o.has('R');
    let force = o.has('f');
    if o.operands.is_empty() {
        if force {
            return Ok(0);
        }
        ctx.warn("missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for arg in &o.operands {
        ctx.check()?;
        if matches!(base_name(arg), "." | "..") {
            ctx.warn(format_args!(
                "refusing to remove '.' or '..' directory: skipping '{arg}'"
            ));
            status = 1;
            continue;
        }
        if normalize(ctx.cwd(), arg) == "/" {
            // `/` holds the mounts: never removable (coreutils' --preserve-root, always on).
            let refusal = FsError::ReadOnly {
                guest: "/".into(),
                mount: "/".into(),
            };
            ctx.sh.record(&refusal);
            if recursive {
                ctx.warn(format_args!(
                    "it is dangerous to operate recursively on '{arg}'"
                ));
                ctx.warn(format_args!(
                    "{refusal} (it holds the mounts; --no-preserve-root is not available)"
                ));
            } else {
                ctx.warn(format_args!("cannot remove '{arg}': Is a directory"));
            }
            status = 1;
            continue;
        }
        let node = match ctx.resolve(arg, Access::Write, false) {
            Ok(n) => n,
            Err(e) => {
                if !(force && e.io_kind() == Some(std::io::ErrorKind::NotFound)) {
                    ctx.fail(format_args!("cannot remove '{arg}'"), &e);
                    status = 1;
                }
                continue;
            }
        };
        let meta = match ctx.fs().lstat(&node) {
            Ok(m) => m,
            Err(e) => {
                if !(force && e.io_kind() == Some(std::io::ErrorKind::NotFound)) {
                    ctx.fail(format_args!("cannot remove '{arg}'"), &e);
                    status = 1;
                }
                continue;
            }
        };
        let result = if meta.is_dir() {
            if node.mount_root {
                if !recursive {
                    Err(errno(if o.has('d') {
                        errnos::EBUSY
                    } else {
                        errnos::EISDIR
                    }))
                } else {
                    let r = remove_contents(ctx, &node)?;
                    if r.is_ok() {
                        ctx.warn(format_args!(
                            "'{arg}' is a mount point: removed its contents, kept the directory"
                        ));
                    }
                    r
                }
            } else if recursive {
                ctx.check()?;
                ctx.fs().remove_tree(&node)
            } else if o.has('d') {
                ctx.fs().remove_dir(&node)
            } else {
                Err(errno(errnos::EISDIR))
            }
        } else {
            ctx.fs().remove_file(&node)
        };
        match result {
            Ok(()) if o.has('v') => {
                let what = if meta.is_dir() {
                    "removed directory"
                } else {
                    "removed"
                };
                let text = format!("{what} '{arg}'\n");
                ctx.outs(&text);
            }
            Ok(()) => {}
            Err(e) => {
                ctx.fail(format_args!("cannot remove '{arg}'"), &e);
                status = 1;
            }
        }
    }
    Ok(status)
}

pub(super) fn rmdir(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [("parents", 'p'), ("verbose", 'v')];
    let Some(o) = opts(ctx, args, "pv", &longs) else {
        return Ok(1);
    };
    if o.operands.is_empty() {
        ctx.warn("missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for arg in &o.operands {
        let mut path = arg.trim_end_matches('/').to_string();
        loop {
            let removed = ctx.resolve(&path, Access::Write, false).and_then(|r| {
                if r.mount_root || r.is_virtual() {
                    return Err(errno(errnos::EBUSY));
                }
                if ctx.fs().lstat(&r).is_ok_and(|m| m.kind == Kind::Symlink) {
                    return Err(errno(errnos::ENOTDIR));
                }
                ctx.fs().remove_dir(&r)
            });
            if let Err(e) = removed {
                ctx.fail(format_args!("failed to remove '{path}'"), &e);
                status = 1;
                break;
            }
            if o.has('v') {
                let text = format!("rmdir: removing directory, '{path}'\n");
                ctx.outs(&text);
            }
            match path.rsplit_once('/') {
                Some((parent, _)) if o.has('p') && !parent.is_empty() => path = parent.to_string(),
                _ => break,
            }
        }
    }
    Ok(status)
}

/// Copies one regular file's bytes into `dst` (created or truncated), under the deadline and
/// the write budget; keeps the permission bits.
fn copy_file(
    ctx: &mut Ctx<'_, '_>,
    src: &Resolved,
    dst: &Resolved,
) -> Result<Result<(), FsError>, Abort> {
    let mut input = match ctx.fs().open_read(src) {
        Ok(f) => std::io::BufReader::with_capacity(256 << 10, f),
        Err(e) => return Ok(Err(e)),
    };
    let mut output = match ctx.fs().open_write(dst, false) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    // The whole size up front: a copy that does not fit the disk quota writes nothing.
    if let Ok(m) = input.get_ref().metadata()
        && let Err(e) = output.reserve(m.len())
    {
        return Ok(Err(FsError::Io(e)));
    }
    loop {
        ctx.check()?;
        let chunk = match input.fill_buf() {
            Ok([]) => break,
            Ok(c) => c,
            Err(e) => return Ok(Err(FsError::Io(e))),
        };
        let n = chunk.len();
        ctx.sh.io.written += n as u64;
        if ctx.sh.io.written > WRITE_BUDGET {
            return Ok(Err(errno(errnos::EFBIG)));
        }
        if let Err(e) = output.write_all(chunk) {
            return Ok(Err(FsError::Io(e)));
        }
        input.consume(n);
    }
    // Both are open descriptors: the bits go from one inode to the other, no path involved.
    if let Ok(m) = input.get_ref().metadata() {
        let mode = m.permissions().mode() & 0o7777;
        let _ = output.set_permissions(std::fs::Permissions::from_mode(mode));
    }
    Ok(Ok(()))
}

/// Copies a tree: directories are made, files copied, symlinks recreated with the same text
/// (never followed).
fn copy_tree(
    ctx: &mut Ctx<'_, '_>,
    src: &Resolved,
    dst_guest: &str,
    shown: &str,
    depth: usize,
) -> Result<bool, Abort> {
    ctx.check()?;
    if depth > MAX_TREE_DEPTH {
        ctx.warn(format_args!(
            "'{shown}': directory tree deeper than {MAX_TREE_DEPTH} levels: not copied"
        ));
        return Ok(false);
    }
    let dst = match ctx
        .fs()
        .resolve_guest(dst_guest.to_string(), Access::Write, false)
    {
        Ok(d) => d,
        Err(e) => {
            ctx.fail(format_args!("cannot create directory '{shown}'"), &e);
            return Ok(false);
        }
    };
    match ctx.fs().lstat(&dst) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            ctx.warn(format_args!(
                "cannot overwrite non-directory '{shown}' with directory"
            ));
            return Ok(false);
        }
        Err(_) => {
            if let Err(e) = ctx.fs().create_dir(&dst, false) {
                ctx.fail(format_args!("cannot create directory '{shown}'"), &e);
                return Ok(false);
            }
        }
    }
    let entries = match ctx.fs().list(src) {
        Ok(e) => e,
        Err(e) => {
            ctx.fail(format_args!("cannot access '{}'", src.guest), &e);
            return Ok(false);
        }
    };
    let mut ok = true;
    for Entry { name, node } in entries {
        let child_guest = join(dst_guest, &name);
        let child_shown = join(shown, &name);
        let Ok(meta) = ctx.fs().lstat(&node) else {
            continue;
        };
        match meta.kind {
            Kind::Dir => ok &= copy_tree(ctx, &node, &child_guest, &child_shown, depth + 1)?,
            Kind::File => {
                let copied = match ctx.fs().resolve_guest(child_guest, Access::Write, false) {
                    Ok(d) => copy_file(ctx, &node, &d)?,
                    Err(e) => Err(e),
                };
                if let Err(e) = copied {
                    ctx.fail(
                        format_args!("cannot create regular file '{child_shown}'"),
                        &e,
                    );
                    ok = false;
                }
            }
            Kind::Symlink => {
                let made = ctx
                    .fs()
                    .resolve_guest(child_guest, Access::Write, false)
                    .and_then(|d| {
                        let text = ctx.fs().read_link(&node)?;
                        if ctx.fs().lstat(&d).is_ok() {
                            ctx.fs().remove_file(&d)?;
                        }
                        ctx.fs().symlink(&text, &d)
                    });
                if let Err(e) = made {
                    ctx.fail(
                        format_args!("cannot create symbolic link '{child_shown}'"),
                        &e,
                    );
                    ok = false;
                }
            }
            Kind::Other => {
                ctx.warn(format_args!("skipping special file '{}'", node.guest));
            }
        }
    }
    Ok(ok)
}

/// The destination and sources of `cp`/`mv`, and whether the destination is a directory.
fn targets(ctx: &mut Ctx<'_, '_>, operands: &[String]) -> Option<(String, Vec<String>, bool)> {
    match operands {
        [] => {
            ctx.warn("missing file operand");
            None
        }
        [one] => {
            ctx.warn(format_args!(
                "missing destination file operand after '{one}'"
            ));
            None
        }
        [sources @ .., dest] => {
            let is_dir = ctx
                .resolve(dest, Access::Read, true)
                .ok()
                .and_then(|r| ctx.fs().stat(&r).ok())
                .is_some_and(|m| m.is_dir());
            if sources.len() > 1 && !is_dir {
                ctx.warn(format_args!("target '{dest}' is not a directory"));
                return None;
            }
            Some((dest.clone(), sources.to_vec(), is_dir))
        }
    }
}

pub(super) fn cp(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("recursive", 'r'),
        ("force", 'f'),
        ("no-clobber", 'n'),
        ("verbose", 'v'),
        ("archive", 'a'),
    ];
    let Some(o) = opts(ctx, args, "rRafnpvPdL", &longs) else {
        return Ok(1);
    };
    let recursive = o.has('r') || o.has('R') || o.has('a');
    let Some((dest, sources, dest_is_dir)) = targets(ctx, &o.operands) else {
        return Ok(1);
    };
    let mut status = 0;
    for src in &sources {
        ctx.check()?;
        // -r copies a symlink as a link, unless a trailing slash asks for its directory.
        let found = ctx
            .resolve(src, Access::Read, !recursive || src.ends_with('/'))
            .and_then(|r| {
                let m = ctx.fs().lstat(&r)?;
                Ok((r, m))
            });
        let (node, meta) = match found {
            Ok(x) => x,
            Err(e) => {
                ctx.fail(format_args!("cannot stat '{src}'"), &e);
                status = 1;
                continue;
            }
        };
        let shown = if dest_is_dir {
            join(&dest, base_name(src))
        } else {
            dest.clone()
        };
        let target_guest = normalize(ctx.cwd(), &shown);
        if meta.is_dir()
            || (meta.kind == Kind::Symlink
                && ctx.fs().stat(&node).is_ok_and(|m| m.is_dir())
                && !recursive)
        {
            if !recursive {
                ctx.warn(format_args!("-r not specified; omitting directory '{src}'"));
                status = 1;
                continue;
            }
            if target_guest == node.guest || target_guest.starts_with(&format!("{}/", node.guest)) {
                ctx.warn(format_args!(
                    "cannot copy a directory, '{src}', into itself, '{shown}'"
                ));
                status = 1;
                continue;
            }
            if !copy_tree(ctx, &node, &target_guest, &shown, 0)? {
                status = 1;
            }
        } else {
            let dst = match ctx
                .fs()
                .resolve_guest(target_guest.clone(), Access::Write, true)
            {
                Ok(d) => d,
                Err(e) => {
                    ctx.fail(format_args!("cannot create regular file '{shown}'"), &e);
                    status = 1;
                    continue;
                }
            };
            if ctx.fs().same_file(&dst, &node) {
                ctx.warn(format_args!("'{src}' and '{shown}' are the same file"));
                status = 1;
                continue;
            }
            if o.has('n') && ctx.fs().lstat(&dst).is_ok() {
                continue;
            }
            if meta.kind == Kind::Symlink && recursive {
                // -r copies a symlink as a symlink.
                let made = ctx.fs().read_link(&node).and_then(|text| {
                    let _ = ctx.fs().remove_file(&dst);
                    ctx.fs().symlink(&text, &dst)
                });
                if let Err(e) = made {
                    ctx.fail(format_args!("cannot create symbolic link '{shown}'"), &e);
                    status = 1;
                }
                continue;
            }
            if let Err(e) = copy_file(ctx, &node, &dst)? {
                ctx.fail(format_args!("cannot copy '{src}' to '{shown}'"), &e);
                status = 1;
                continue;
            }
        }
        if o.has('v') {
            let text = format!("'{src}' -> '{shown}'\n");
            ctx.outs(&text);
        }
    }
    Ok(status)
}

pub(super) fn mv(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [("force", 'f'), ("no-clobber", 'n'), ("verbose", 'v')];
    let Some(o) = opts(ctx, args, "fnvi", &longs) else {
        return Ok(1);
    };
    let Some((dest, sources, dest_is_dir)) = targets(ctx, &o.operands) else {
        return Ok(1);
    };
    let mut status = 0;
    for src in &sources {
        ctx.check()?;
        let shown = if dest_is_dir {
            join(&dest, base_name(src))
        } else {
            dest.clone()
        };
        let moved = (|| -> Result<Option<()>, FsError> {
            let from = ctx.resolve(src, Access::Write, false)?;
            ctx.fs().lstat(&from)?;
            if from.mount_root || from.is_virtual() {
                return Err(errno(errnos::EBUSY));
            }
            let to = ctx.resolve(&shown, Access::Write, false)?;
            if to.guest == from.guest {
                return Err(FsError::Io(std::io::Error::other("are the same file")));
            }
            if to.guest.starts_with(&format!("{}/", from.guest)) {
                return Err(errno(errnos::EINVAL));
            }
            if o.has('n') && ctx.fs().lstat(&to).is_ok() {
                return Ok(None);
            }
            if to.mount_root {
                return Err(errno(errnos::EBUSY));
            }
            ctx.fs().rename(&from, &to)?;
            Ok(Some(()))
        })();
        match moved {
            Ok(Some(())) if o.has('v') => {
                let text = format!("renamed '{src}' -> '{shown}'\n");
                ctx.outs(&text);
            }
            Ok(_) => {}
            Err(FsError::Io(e)) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                // Different host filesystems: copy, then remove.
                let mut args = vec!["-r".to_string(), src.clone(), shown.clone()];
                let saved = std::mem::replace(&mut ctx.name, "mv".into());
                let copied = cp(ctx, &args)?;
                if copied == 0 {
                    args[0] = "-rf".into();
                    args.pop();
                    rm(ctx, &args)?;
                } else {
                    status = 1;
                }
                ctx.name = saved;
            }
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::InvalidInput) => {
                ctx.warn(format_args!(
                    "cannot move '{src}' to a subdirectory of itself, '{shown}'"
                ));
                status = 1;
            }
            Err(e) if e.to_string() == "are the same file" => {
                ctx.warn(format_args!("'{src}' and '{shown}' are the same file"));
                status = 1;
            }
            Err(e) => {
                ctx.fail(format_args!("cannot move '{src}' to '{shown}'"), &e);
                status = 1;
            }
        }
    }
    Ok(status)
}

pub(super) fn touch(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "cam", &[("no-create", 'c')]) else {
        return Ok(1);
    };
    if o.operands.is_empty() {
        ctx.warn("missing file operand");
        return Ok(1);
    }
    let mut status = 0;
    for arg in &o.operands {
        let touched = ctx
            .resolve(arg, Access::Write, true)
            .and_then(|r| ctx.fs().touch(&r, !o.has('c')));
        if let Err(e) = touched {
            ctx.fail(format_args!("cannot touch '{arg}'"), &e);
            status = 1;
        }
    }
    Ok(status)
}

struct DuOpts {
    summarize: bool,
    all: bool,
    human: bool,
    bytes: bool,
    max_depth: Option<u64>,
}

fn du_size(o: &DuOpts, n: u64) -> String {
    if o.human {
        human(n)
    } else if o.bytes {
        n.to_string()
    } else {
        n.div_ceil(1024).to_string()
    }
}

/// Sums a tree (post-order), printing directories (and files with `-a`) within the depth.
fn du_walk(
    ctx: &mut Ctx<'_, '_>,
    node: &Resolved,
    label: &str,
    depth: u64,
    o: &DuOpts,
) -> Result<(u64, bool), Abort> {
    ctx.check()?;
    let Ok(meta) = ctx.fs().lstat(node) else {
        return Ok((0, true));
    };
    let own = if o.bytes { meta.len } else { meta.blocks * 512 };
    let shows = |d: u64| !o.summarize && o.max_depth.is_none_or(|m| d <= m);
    if !meta.is_dir() {
        if depth == 0 || (o.all && shows(depth)) {
            let text = format!("{}\t{label}\n", du_size(o, own));
            return Ok((own, ctx.outs(&text)));
        }
        return Ok((own, true));
    }
    let mut total = own;
    if depth as usize > MAX_TREE_DEPTH {
        ctx.warn(format_args!(
            "'{label}': directory tree deeper than {MAX_TREE_DEPTH} levels: not counted"
        ));
        return Ok((total, true));
    }
    match ctx.fs().list(node) {
        Ok(entries) => {
            for e in entries {
                let (n, more) = du_walk(ctx, &e.node, &join(label, &e.name), depth + 1, o)?;
                total += n;
                if !more {
                    return Ok((total, false));
                }
            }
        }
        Err(e) => ctx.fail(format_args!("cannot read directory '{label}'"), &e),
    }
    if depth == 0 || shows(depth) {
        let text = format!("{}\t{label}\n", du_size(o, total));
        return Ok((total, ctx.outs(&text)));
    }
    Ok((total, true))
}

pub(super) fn du(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let longs = [
        ("summarize", 's'),
        ("human-readable", 'h'),
        ("all", 'a'),
        ("total", 'c'),
        ("bytes", 'b'),
        ("max-depth", 'd'),
    ];
    let Some(opt) = opts(ctx, args, "shacbkd:", &longs) else {
        return Ok(1);
    };
    let max_depth = match opt.value('d') {
        Some(d) => match parse_count(ctx, "maximum depth", d) {
            Some(n) => Some(n),
            None => return Ok(1),
        },
        None => None,
    };
    let o = DuOpts {
        summarize: opt.has('s'),
        all: opt.has('a'),
        human: opt.has('h'),
        bytes: opt.has('b'),
        max_depth,
    };
    let operands = if opt.operands.is_empty() {
        vec![".".to_string()]
    } else {
        opt.operands.clone()
    };
    let mut status = 0;
    let mut grand = 0;
    for arg in &operands {
        let node = match ctx.resolve(arg, Access::Read, true).and_then(|r| {
            ctx.fs().lstat(&r)?;
            Ok(r)
        }) {
            Ok(n) => n,
            Err(e) => {
                ctx.fail(format_args!("cannot access '{arg}'"), &e);
                status = 1;
                continue;
            }
        };
        let (n, more) = du_walk(ctx, &node, arg, 0, &o)?;
        grand += n;
        if !more {
            return Ok(status);
        }
    }
    if opt.has('c') {
        let text = format!("{}\ttotal\n", du_size(&o, grand));
        ctx.outs(&text);
    }
    Ok(status)
}

/// One `find` test.
#[derive(Debug)]
enum Test {
    Name(Pattern, bool),
    Path(Pattern),
    Type(char),
    Empty,
    True,
}

/// An OR of ANDs of possibly negated tests (no parentheses).
#[derive(Debug, Default)]
struct FindExpr {
    any_of: Vec<Vec<(bool, Test)>>,
    delete: bool,
}

pub(super) fn find(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let mut paths = Vec::new();
    let mut i = 0;
    while i < args.len() && !args[i].starts_with('-') && args[i] != "!" && args[i] != "(" {
        paths.push(args[i].clone());
        i += 1;
    }
    if paths.is_empty() {
        paths.push(".".into());
    }
    let mut expr = FindExpr::default();
    let mut group: Vec<(bool, Test)> = Vec::new();
    let mut negate = false;
    let mut max_depth = u64::MAX;
    let mut min_depth = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        let mut value = |ctx: &mut Ctx<'_, '_>| -> Option<String> {
            let v = args.get(i).cloned();
            if v.is_none() {
                ctx.warn(format_args!("missing argument to '{a}'"));
            }
            i += 1;
            v
        };
        let test = match a {
            "!" | "-not" => {
                negate = !negate;
                continue;
            }
            "-o" | "-or" => {
                expr.any_of.push(std::mem::take(&mut group));
                continue;
            }
            "-a" | "-and" | "-print" => continue,
            "-name" | "-iname" => {
                let Some(p) = value(ctx) else { return Ok(1) };
                let ci = a == "-iname";
                Test::Name(Pattern::parse(&if ci { p.to_lowercase() } else { p }), ci)
            }
            "-path" | "-wholename" => {
                let Some(p) = value(ctx) else { return Ok(1) };
                Test::Path(Pattern::parse(&p))
            }
            "-type" => {
                let Some(t) = value(ctx) else { return Ok(1) };
                match t.as_str() {
                    "f" | "d" | "l" => Test::Type(t.chars().next().unwrap_or('f')),
                    _ => {
                        ctx.warn(format_args!("unknown argument to -type: {t}"));
                        return Ok(1);
                    }
                }
            }
            "-maxdepth" | "-mindepth" => {
                let Some(v) = value(ctx) else { return Ok(1) };
                let Some(n) = parse_count(ctx, "depth", &v) else {
                    return Ok(1);
                };
                if a == "-maxdepth" {
                    max_depth = n;
                } else {
                    min_depth = n;
                }
                continue;
            }
            "-empty" => Test::Empty,
            "-delete" => {
                expr.delete = true;
                Test::True
            }
            "-exec" | "-execdir" | "-ok" => {
                ctx.warn(format_args!(
                    "{a} is not supported; pipe the names into xargs instead (find ... | xargs CMD)"
                ));
                return Ok(1);
            }
            "(" | ")" => {
                ctx.warn("parentheses are not supported; use -o between simple tests");
                return Ok(1);
            }
            other => {
                ctx.warn(format_args!("unknown predicate '{other}'"));
                return Ok(1);
            }
        };
        group.push((std::mem::take(&mut negate), test));
    }
    expr.any_of.push(group);
    let mut status = 0;
    let mut doomed: Vec<(Resolved, String)> = Vec::new();
    for start in &paths {
        let node = match ctx.resolve(start, Access::Read, false).and_then(|r| {
            ctx.fs().lstat(&r)?;
            Ok(r)
        }) {
            Ok(n) => n,
            Err(e) => {
                ctx.fail(format_args!("'{start}'"), &e);
                status = 1;
                continue;
            }
        };
        // Depth-first, pre-order, entries sorted by name.
        let mut stack = vec![(node, start.clone(), 0u64)];
        while let Some((node, shown, depth)) = stack.pop() {
            ctx.check()?;
            let Ok(meta) = ctx.fs().lstat(&node) else {
                continue;
            };
            let children = if meta.is_dir() && depth < max_depth {
                match ctx.fs().list(&node) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        ctx.fail(format_args!("'{shown}'"), &e);
                        status = 1;
                        None
                    }
                }
            } else {
                None
            };
            if depth >= min_depth
                && find_matches(&expr, &node, &shown, &meta, children.as_deref(), ctx)
            {
                if expr.delete {
                    doomed.push((node.clone(), shown.clone()));
                } else {
                    let line = format!("{shown}\n");
                    if !ctx.outs(&line) {
                        return Ok(status);
                    }
                }
            }
            if let Some(children) = children {
                for e in children.into_iter().rev() {
                    let label = join(&shown, &e.name);
                    stack.push((e.node, label, depth + 1));
                }
            }
        }
    }
    // -delete: deepest first, so directories are empty when their turn comes.
    for (node, shown) in doomed.into_iter().rev() {
        ctx.check()?;
        let removed = ctx
            .fs()
            .resolve_guest(node.guest.clone(), Access::Write, false)
            .and_then(|w| {
                if w.mount_root || w.is_virtual() {
                    return Err(errno(errnos::EBUSY));
                }
                if ctx.fs().lstat(&w)?.is_dir() {
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

fn find_matches(
    expr: &FindExpr,
    node: &Resolved,
    shown: &str,
    meta: &Meta,
    children: Option<&[Entry]>,
    ctx: &Ctx<'_, '_>,
) -> bool {
    expr.any_of.iter().any(|group| {
        group.iter().all(|(negated, test)| {
            let hit = match test {
                Test::Name(p, ci) => {
                    let name = base_name(shown);
                    if *ci {
                        p.matches(&name.to_lowercase())
                    } else {
                        p.matches(name)
                    }
                }
                Test::Path(p) => p.matches(shown),
                Test::Type(t) => matches!(
                    (t, meta.kind),
                    ('f', Kind::File) | ('d', Kind::Dir) | ('l', Kind::Symlink)
                ),
                Test::Empty => match meta.kind {
                    Kind::File => meta.len == 0,
                    Kind::Dir => match children {
                        Some(c) => c.is_empty(),
                        None => ctx.fs().list(node).is_ok_and(|c| c.is_empty()),
                    },
                    _ => false,
                },
                Test::True => true,
            };
            hit != *negated
        })
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
        if !who.chars().all(|c| "ugoa".contains(c)) {
            return None;
        }
        let mask = if who.is_empty() || who.contains('a') {
            0o777
        } else {
            who.chars().fold(0, |m, c| {
                m | match c {
                    'u' => 0o700,
                    'g' => 0o070,
                    _ => 0o007,
                }
            })
        };
        let mut rest = &clause[who_end..];
        while let Some(op) = rest.chars().next() {
            let perms_end = rest[1..]
                .find(['+', '-', '='])
                .map_or(rest.len(), |i| i + 1);
            let perms = &rest[1..perms_end];
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
            match op {
                '+' => mode |= bits,
                '-' => mode &= !bits,
                _ => mode = (mode & !mask) | bits,
            }
            rest = &rest[perms_end..];
        }
    }
    Some(mode)
}

pub(super) fn chmod(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    // Modes like `-w` look like options: take the first operand-like word as the mode.
    let mut recursive = false;
    let mut rest: Vec<String> = Vec::new();
    for a in args {
        if a == "-R" || a == "--recursive" {
            recursive = true;
        } else {
            rest.push(a.clone());
        }
    }
    let [mode, files @ ..] = rest.as_slice() else {
        ctx.warn("missing operand");
        return Ok(1);
    };
    if files.is_empty() {
        ctx.warn(format_args!("missing operand after '{mode}'"));
        return Ok(1);
    }
    let mut status = 0;
    let mut work: Vec<(Resolved, String)> = Vec::new();
    for f in files {
        match ctx.resolve(f, Access::Write, true) {
            Ok(r) => work.push((r, f.clone())),
            Err(e) => {
                ctx.fail(format_args!("cannot access '{f}'"), &e);
                status = 1;
            }
        }
    }
    while let Some((node, shown)) = work.pop() {
        ctx.check()?;
        let meta = match ctx.fs().lstat(&node) {
            Ok(m) => m,
            Err(e) => {
                ctx.fail(format_args!("cannot access '{shown}'"), &e);
                status = 1;
                continue;
            }
        };
        if meta.kind == Kind::Symlink {
            continue;
        }
        let Some(new) = chmod_mode(mode, meta.mode, meta.is_dir()) else {
            ctx.warn(format_args!("invalid mode: '{mode}'"));
            return Ok(1);
        };
        if let Err(e) = ctx.fs().set_mode(&node, new) {
            ctx.fail(format_args!("changing permissions of '{shown}'"), &e);
            status = 1;
        }
        if recursive && meta.is_dir() {
            if let Ok(entries) = ctx.fs().list(&node) {
                for e in entries {
                    work.push((e.node, join(&shown, &e.name)));
                }
            }
        }
    }
    Ok(status)
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
    }

    #[test]
    fn cp_and_mv() {
        let mut s = Sandbox::new();
        s.write("f", "content\n");
        s.write("d/x", "x\n");
        s.write("d/sub/y", "y\n");
        s.ok("cp f g && mkdir out && cp f g out/");
        assert_eq!(
            s.read("g") + &s.read("out/f") + &s.read("out/g"),
            "content\n".repeat(3)
        );
        assert_eq!(
            s.sh("cp d e").1,
            "cp: -r not specified; omitting directory 'd'\n"
        );
        s.ok("cp -r d e && cp -r d out");
        assert_eq!(s.read("e/sub/y") + &s.read("out/d/x"), "y\nx\n");
        assert_eq!(
            s.sh("cp -r d d/sub").1,
            "cp: cannot copy a directory, 'd', into itself, 'd/sub/d'\n"
        );
        assert_eq!(s.sh("cp f f").1, "cp: 'f' and 'f' are the same file\n");
        assert_eq!(
            s.sh("cp f g nodir").1,
            "cp: target 'nodir' is not a directory\n"
        );
        assert_eq!(
            s.sh("cp nope z").1,
            "cp: cannot stat 'nope': No such file or directory\n"
        );
        s.ok("chmod +x f && cp f fx");
        assert!(s.ok("ls -l fx").starts_with("-rwxr-xr-x"));
        s.ok("cp /data/d.txt . && cp f /tmp/");
        assert_eq!(s.read("d.txt"), "data line\n");
        s.write("n", "new");
        s.ok("cp -n n f");
        assert_eq!(s.read("f"), "content\n");
        s.ok("mv g h && mv h out/ && mv out/h out/i");
        assert!(!s.exists("g") && s.exists("out/i"));
        s.ok("mv e moved && mv moved /tmp/");
        assert!(s.tmp.path().join("moved/sub/y").exists());
        assert_eq!(
            s.sh("mv d d/sub").1,
            "mv: cannot move 'd' to a subdirectory of itself, 'd/sub/d'\n"
        );
        assert_eq!(
            s.sh("mv nope x").1,
            "mv: cannot move 'nope' to 'x': No such file or directory\n"
        );
        assert_eq!(s.ok("mv -v f f2"), "renamed 'f' -> 'f2'\n");
        assert_eq!(
            s.sh("mv f2").1,
            "mv: missing destination file operand after 'f2'\n"
        );
    }

    #[test]
    fn du_find_chmod() {
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
        s.ok("chmod 600 d/sub/b.py");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rw------- "));
        s.ok("chmod u+x,g+r d/sub/b.py");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rwxr----- "));
        s.ok("chmod -R a+r d");
        assert!(s.ok("ls -l d/sub/b.py").starts_with("-rwxr--r-- "));
        assert_eq!(s.sh("chmod zz d").1, "chmod: invalid mode: 'zz'\n");
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
