//! `chmod`: the one file command that stays on the host, since WASI preview 1 has no call that
//! sets a file's mode. Every path goes through the shell's guest filesystem
//! ([`crate::shell::guest_fs`]): resolved with the checks of confinement, changed through the
//! mount's root handle, and `-R` never enters a symbolic link.

use crate::shell::exec::{Abort, Ctx};
use crate::shell::guest_fs::{Access, Kind, MOUNT_POINT_MODE, SETID_BITS, join};

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
    let rest: Vec<&String> = (args.iter())
        .filter(|a| *a != "-R" && *a != "--recursive")
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
    let mut status = 0;
    for arg in files {
        let node = match ctx.resolve(arg, Access::Write, true) {
            Ok(node) => node,
            Err(e) => {
                ctx.fail(format_args!("cannot access '{arg}'"), &e);
                status = 1;
                continue;
            }
        };
        // Depth first, by name; the pending nodes are on the heap, so depth costs no stack.
        let mut pending = vec![(node, arg.to_string())];
        while let Some((node, shown)) = pending.pop() {
            ctx.check()?;
            let meta = match ctx.fs().lstat(&node) {
                Ok(meta) => meta,
                Err(e) => {
                    ctx.fail(format_args!("cannot access '{shown}'"), &e);
                    status = 1;
                    continue;
                }
            };
            if meta.kind == Kind::Symlink {
                continue;
            }
            let new = chmod_mode(mode, meta.mode, meta.is_dir()).unwrap_or(meta.mode);
            if node.is_mount_root() {
                // The host directory behind a mount point is the server's (private to it): it
                // keeps its mode, and shows 0755. Said, not failed: `chmod -R 755 .` in /app
                // does what it is meant to do to everything beneath.
                ctx.warn(format_args!(
                    "'{shown}' is a mount point of the sandbox ({}): its own mode stays \
                     {MOUNT_POINT_MODE:o}",
                    node.guest
                ));
            } else if new & SETID_BITS != 0 {
                // The jail refuses set-user-ID and set-group-ID bits (a program that runs as
                // its owner has no place here); say so instead of a bare EPERM.
                ctx.warn(format_args!(
                    "changing permissions of '{shown}': the sandbox does not set the \
                     set-user-ID or set-group-ID bits (mode {new:o})"
                ));
                status = 1;
                continue;
            } else if let Err(e) = ctx.fs().set_mode(&node, new) {
                ctx.fail(format_args!("changing permissions of '{shown}'"), &e);
                status = 1;
                continue;
            }
            if recursive && meta.is_dir() {
                match ctx.fs().list(&node) {
                    Ok(mut entries) => {
                        entries.sort_by(|a, b| b.name.cmp(&a.name));
                        let children = entries.into_iter();
                        pending.extend(children.map(|e| (e.node, join(&shown, &e.name))));
                    }
                    Err(e) => {
                        ctx.fail(format_args!("cannot read directory '{shown}'"), &e);
                        status = 1;
                    }
                }
            }
        }
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::shell::tests::Sandbox;

    #[test]
    fn chmod_changes_bits() {
        let mut s = Sandbox::new();
        s.write("d/sub/b.py", "print()\n");
        let mode = |s: &Sandbox| {
            let path = s.app.path().join("d/sub/b.py");
            std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
        };
        s.ok("chmod 600 d/sub/b.py");
        assert_eq!(mode(&s), 0o600);
        s.ok("chmod u+x,g+r d/sub/b.py");
        assert_eq!(mode(&s), 0o740);
        s.ok("chmod -R a+r d");
        assert_eq!(mode(&s), 0o744);
        assert_eq!(s.sh("chmod zz d").1, "chmod: invalid mode: 'zz'\n");
        assert_eq!(
            s.sh("chmod 644 nope").1,
            "chmod: cannot access 'nope': No such file or directory\n"
        );
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
}
