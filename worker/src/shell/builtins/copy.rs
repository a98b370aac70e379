//! `cp` and `mv`. Copies go through the confined filesystem a file at a time, under the deadline,
//! the call's write budget and the disk quota; `cp -r` recreates symlinks with the same text and
//! never follows them. `mv` renames within the mounts, and copies then removes when a rename
//! would cross host filesystems (or enter the disk quota unseen).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;

use rustix::io::Errno;

use super::args::{Opts, opts};
use super::files::{base_name, rm};
use super::io::{Fail, each_operand, reported, say};
use super::walk::{Event, Node, Order, Step, walk};
use crate::shell::exec::{Abort, Ctx, WRITE_BUDGET};
use crate::shell::path::{Access, FsError, Kind, Resolved, errno, join, normalize};

/// Copies one regular file's bytes into `dst` (created or truncated), under the deadline and
/// the write budget; keeps the permission bits.
fn copy_file(ctx: &mut Ctx<'_, '_>, src: &Resolved, dst: &Resolved) -> Result<(), Fail> {
    let mut input = BufReader::with_capacity(256 << 10, ctx.fs().open_read(src)?);
    let mut output = ctx.fs().open_write(dst, false)?;
    let io = |e| Fail::Fs(FsError::Io(e));
    // The whole size up front: a copy that does not fit the disk quota writes nothing.
    if let Ok(m) = input.get_ref().metadata() {
        output.reserve(m.len()).map_err(io)?;
    }
    loop {
        ctx.check()?;
        let chunk = input.fill_buf().map_err(io)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        ctx.sh.io.written += n as u64;
        if ctx.sh.io.written > WRITE_BUDGET {
            return Err(errno(Errno::FBIG).into());
        }
        output.write_all(chunk).map_err(io)?;
        input.consume(n);
    }
    // Both are open descriptors: the bits go from one inode to the other, no path involved.
    if let Ok(m) = input.get_ref().metadata() {
        let _ = output.set_permissions(std::fs::Permissions::from_mode(
            m.permissions().mode() & 0o7777,
        ));
    }
    Ok(())
}

/// Recreates the symlink `src` at `dst` with the same text (replacing what is there).
fn copy_link(ctx: &Ctx<'_, '_>, src: &Resolved, dst: &Resolved) -> Result<(), FsError> {
    let text = ctx.fs().read_link(src)?;
    if ctx.fs().lstat(dst).is_ok() {
        ctx.fs().remove_file(dst)?;
    }
    ctx.fs().symlink(&text, dst)
}

/// Makes the directory `dst` of a tree copy, unless one is there already.
fn make_dir(ctx: &mut Ctx<'_, '_>, dst: &Resolved, named: &str) -> Result<(), Fail> {
    match ctx.fs().lstat(dst) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(say(
            ctx,
            format_args!("cannot overwrite non-directory '{named}' with directory"),
        )),
        Err(_) => Ok(ctx.fs().create_dir(dst, false)?),
    }
}

/// Copies one node of a tree to the guest path `guest`, named `named` in messages (which are
/// reported here).
fn copy_node(ctx: &mut Ctx<'_, '_>, n: &Node, guest: String, named: &str) -> Result<(), Fail> {
    let what = match n.meta.kind {
        Kind::Dir => "directory",
        Kind::File => "regular file",
        Kind::Symlink => "symbolic link",
        _ => {
            ctx.warn(format_args!("skipping special file '{}'", n.node.guest));
            return Ok(());
        }
    };
    let copied = ctx
        .fs()
        .resolve_guest(guest, Access::Write, false)
        .map_err(Fail::Fs)
        .and_then(|dst| match n.meta.kind {
            Kind::Dir => make_dir(ctx, &dst, named),
            Kind::File => copy_file(ctx, &n.node, &dst),
            _ => Ok(copy_link(ctx, &n.node, &dst)?),
        });
    reported(ctx, format_args!("cannot create {what} '{named}'"), copied)
}

/// Copies a tree: directories are made, files copied, symlinks recreated with the same text
/// (never followed). `Ok(false)` when something was not copied (reported).
fn copy_tree(
    ctx: &mut Ctx<'_, '_>,
    src: Node,
    dst_guest: &str,
    shown: &str,
) -> Result<bool, Abort> {
    let mut ok = true;
    let top = src.shown.len();
    walk(ctx, src, Order::ByName, |ctx, event| {
        let n = match event {
            Event::Enter(n) => n,
            Event::Leave(_) => return Ok(Step::Into),
            Event::Unlistable(n, e) => {
                ctx.fail(format_args!("cannot access '{}'", n.node.guest), &e);
                ok = false;
                return Ok(Step::Into);
            }
        };
        // Where it goes: the same path below the destination as below the source.
        let rel = n.shown[top..].trim_start_matches('/');
        let (guest, named) = match rel {
            "" => (dst_guest.to_string(), shown.to_string()),
            rel => (join(dst_guest, rel), join(shown, rel)),
        };
        match copy_node(ctx, n, guest, &named) {
            Ok(()) => Ok(Step::Into),
            Err(Fail::Abort(a)) => Err(a),
            Err(_) => {
                ok = false;
                Ok(Step::Over)
            }
        }
    })?;
    Ok(ok)
}

/// The destination and sources of `cp`/`mv`, and whether the destination is a directory.
fn targets(ctx: &mut Ctx<'_, '_>, operands: &[String]) -> Option<(String, Vec<String>, bool)> {
    let Some((dest, sources)) = operands.split_last() else {
        ctx.warn("missing file operand");
        return None;
    };
    if sources.is_empty() {
        ctx.warn(format_args!(
            "missing destination file operand after '{dest}'"
        ));
        return None;
    }
    let is_dir = ctx
        .resolve(dest, Access::Read, true)
        .and_then(|r| ctx.fs().stat(&r))
        .is_ok_and(|m| m.is_dir());
    if sources.len() > 1 && !is_dir {
        ctx.warn(format_args!("target '{dest}' is not a directory"));
        return None;
    }
    Some((dest.clone(), sources.to_vec(), is_dir))
}

/// Where a source goes: into the destination directory, or to the destination itself.
fn destination(dest: &str, dest_is_dir: bool, src: &str) -> String {
    if dest_is_dir {
        join(dest, base_name(src))
    } else {
        dest.to_string()
    }
}

/// Copies one `cp` operand to `shown`; `Ok(false)` when nothing was to be done (`-n`) or a link
/// was recreated (neither is reported by `-v`).
fn copy_operand(
    ctx: &mut Ctx<'_, '_>,
    node: Node,
    src: &str,
    shown: &str,
    o: &Opts,
) -> Result<bool, Fail> {
    let recursive = o.has('r') || o.has('R') || o.has('a');
    let target = normalize(ctx.cwd(), shown);
    let link_to_dir = is_link_to_dir(ctx, &node) && !recursive;
    if node.is_dir() || link_to_dir {
        if !recursive {
            return Err(say(
                ctx,
                format_args!("-r not specified; omitting directory '{src}'"),
            ));
        }
        let guest = &node.node.guest;
        if target == *guest || target.starts_with(&format!("{guest}/")) {
            return Err(say(
                ctx,
                format_args!("cannot copy a directory, '{src}', into itself, '{shown}'"),
            ));
        }
        return if copy_tree(ctx, node, &target, shown)? {
            Ok(true)
        } else {
            Err(Fail::Said)
        };
    }
    let dst = ctx.fs().resolve_guest(target, Access::Write, true);
    let dst = reported(
        ctx,
        format_args!("cannot create regular file '{shown}'"),
        dst,
    )?;
    if ctx.fs().same_file(&dst, &node.node) {
        return Err(say(
            ctx,
            format_args!("'{src}' and '{shown}' are the same file"),
        ));
    }
    if o.has('n') && ctx.fs().lstat(&dst).is_ok() {
        return Ok(false);
    }
    if node.meta.kind == Kind::Symlink && recursive {
        // -r copies a symlink as a symlink.
        let made = copy_link(ctx, &node.node, &dst);
        reported(
            ctx,
            format_args!("cannot create symbolic link '{shown}'"),
            made,
        )?;
        return Ok(false);
    }
    let copied = copy_file(ctx, &node.node, &dst);
    reported(
        ctx,
        format_args!("cannot copy '{src}' to '{shown}'"),
        copied,
    )?;
    Ok(true)
}

/// A symlink that leads to a directory (inside its mount).
fn is_link_to_dir(ctx: &Ctx<'_, '_>, n: &Node) -> bool {
    n.meta.kind == Kind::Symlink && ctx.fs().stat(&n.node).is_ok_and(|m| m.is_dir())
}

pub(super) fn cp(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "rRafnpvPdL",
        "recursive=r force=f no-clobber=n verbose=v archive=a",
    ) else {
        return Ok(1);
    };
    let recursive = o.has('r') || o.has('R') || o.has('a');
    let Some((dest, sources, dest_is_dir)) = targets(ctx, &o.operands) else {
        return Ok(1);
    };
    each_operand(ctx, &sources, "cannot stat '{}'", |ctx, src| {
        let shown = destination(&dest, dest_is_dir, src);
        // -r copies a symlink as a link, unless a trailing slash asks for its directory.
        let node = Node::start(ctx, src, !recursive || src.ends_with('/'))?;
        if copy_operand(ctx, node, src, &shown, &o)? && o.has('v') {
            ctx.outs(&format!("'{src}' -> '{shown}'\n"));
        }
        Ok(())
    })
}

/// What `mv` did with one source.
enum Moved {
    Renamed,
    /// `-n` and the destination exists.
    Kept,
    SameFile,
    IntoItself,
}

fn move_one(ctx: &Ctx<'_, '_>, src: &str, shown: &str, no_clobber: bool) -> Result<Moved, FsError> {
    let from = ctx.resolve(src, Access::Write, false)?;
    ctx.fs().lstat(&from)?;
    if from.mount_root || from.is_virtual() {
        return Err(errno(Errno::BUSY));
    }
    let to = ctx.resolve(shown, Access::Write, false)?;
    if to.guest == from.guest {
        return Ok(Moved::SameFile);
    }
    if to.guest.starts_with(&format!("{}/", from.guest)) {
        return Ok(Moved::IntoItself);
    }
    if no_clobber && ctx.fs().lstat(&to).is_ok() {
        return Ok(Moved::Kept);
    }
    if to.mount_root {
        return Err(errno(Errno::BUSY));
    }
    ctx.fs().rename(&from, &to)?;
    Ok(Moved::Renamed)
}

pub(super) fn mv(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(ctx, args, "fnvi", "force=f no-clobber=n verbose=v") else {
        return Ok(1);
    };
    let Some((dest, sources, dest_is_dir)) = targets(ctx, &o.operands) else {
        return Ok(1);
    };
    each_operand(ctx, &sources, "", |ctx, src| {
        let shown = destination(&dest, dest_is_dir, src);
        match move_one(ctx, src, &shown, o.has('n')) {
            Ok(Moved::Renamed) if o.has('v') => {
                ctx.outs(&format!("renamed '{src}' -> '{shown}'\n"));
                Ok(())
            }
            Ok(Moved::Renamed | Moved::Kept) => Ok(()),
            Ok(Moved::SameFile) => Err(say(
                ctx,
                format_args!("'{src}' and '{shown}' are the same file"),
            )),
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::CrossesDevices) => {
                // Different host filesystems: copy, then remove.
                let saved = std::mem::replace(&mut ctx.name, "mv".into());
                let copied = cp(ctx, &["-r".into(), src.to_string(), shown.clone()]);
                let removed = match copied {
                    Ok(0) => rm(ctx, &["-rf".into(), src.to_string()]).map(|_| 0),
                    other => other,
                };
                ctx.name = saved;
                if removed? == 0 {
                    Ok(())
                } else {
                    Err(Fail::Said)
                }
            }
            Ok(Moved::IntoItself) => Err(into_itself(ctx, src, &shown)),
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::InvalidInput) => {
                Err(into_itself(ctx, src, &shown))
            }
            Err(e) => reported(
                ctx,
                format_args!("cannot move '{src}' to '{shown}'"),
                Err(e),
            ),
        }
    })
}

fn into_itself(ctx: &mut Ctx<'_, '_>, src: &str, shown: &str) -> Fail {
    say(
        ctx,
        format_args!("cannot move '{src}' to a subdirectory of itself, '{shown}'"),
    )
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

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
}
