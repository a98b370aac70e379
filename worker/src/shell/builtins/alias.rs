//! `alias` and `unalias`, as a bash script has them: aliases are defined, listed and removed
//! (they last the session, as the variables do), and never expanded, since bash expands none
//! in a non-interactive shell (`shopt expand_aliases` is off). A command named after an alias
//! is then not found, as in bash, and the message says why and what works instead.

use std::collections::BTreeMap;

use super::args::bash_opts;
use crate::shell::exec::{Abort, Ctx};
use crate::shell::expand::single_quoted;

/// Aliases by name.
pub(crate) type Aliases = BTreeMap<String, String>;

/// The most bytes of names and values a session's aliases hold (they persist, and count
/// against nothing else).
const MAX_ALIAS_BYTES: usize = 1 << 20;

/// `alias [-p] [NAME[=VALUE]...]`.
pub(super) fn alias(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = bash_opts(ctx, args, "p", "alias [-p] [name[=value] ... ]") else {
        return Ok(2);
    };
    let names = o.operands.as_slice();
    if names.is_empty() {
        let listing: String = (ctx.sh.state.aliases.iter())
            .map(|(name, value)| format!("alias {name}={}\n", single_quoted(value)))
            .collect();
        ctx.outs(&listing);
        return Ok(0);
    }
    let mut status = 0;
    for arg in names {
        match arg.split_once('=') {
            Some((name, value)) => {
                let aliases = &mut ctx.sh.state.aliases;
                let held: usize = (aliases.iter())
                    .filter(|(n, _)| n.as_str() != name)
                    .map(|(n, v)| n.len() + v.len())
                    .sum();
                if held + name.len() + value.len() > MAX_ALIAS_BYTES {
                    ctx.warn(format_args!(
                        "{name}: aliases too large (at most {} KiB together)",
                        MAX_ALIAS_BYTES >> 10
                    ));
                    status = 1;
                    continue;
                }
                aliases.insert(name.to_owned(), value.to_owned());
            }
            None => match ctx.sh.state.aliases.get(arg.as_str()) {
                Some(value) => {
                    let line = format!("alias {arg}={}\n", single_quoted(value));
                    ctx.outs(&line);
                }
                None => {
                    ctx.warn(format_args!("{arg}: not found"));
                    status = 1;
                }
            },
        }
    }
    Ok(status)
}

/// `unalias [-a] NAME...`.
pub(super) fn unalias(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    match args.first().map(String::as_str) {
        Some("-a") => {
            ctx.sh.state.aliases.clear();
            return Ok(0);
        }
        None => {
            ctx.warn("usage: unalias [-a] name [name ...]");
            return Ok(2);
        }
        _ => {}
    }
    let mut status = 0;
    for name in args.iter().filter(|a| *a != "--") {
        if ctx.sh.state.aliases.remove(name.as_str()).is_none() {
            ctx.warn(format_args!("{name}: not found"));
            status = 1;
        }
    }
    Ok(status)
}

/// What "command not found" adds for a name that is an alias.
pub(super) fn not_expanded(ctx: &Ctx<'_, '_>, name: &str) -> Option<String> {
    let value = ctx.sh.state.aliases.get(name)?;
    Some(format!(
        "{name}: an alias ({name}={}), and a script expands no aliases (bash's too): define a \
         function instead, {name}() {{ {value} \"$@\"; }}\n",
        single_quoted(value)
    ))
}

#[cfg(test)]
mod tests {
    use crate::shell::tests::Sandbox;

    /// Outputs and statuses taken from bash 5.2 (`bash -c`).
    #[test]
    fn aliases_are_kept_and_listed_but_never_expanded() {
        let mut s = Sandbox::new();
        let (out, err, code) = s.sh(
            "alias ll='ls -l' la=\"ls -A\"; alias; alias ll; alias nope; echo $?; unalias nope; echo $?; unalias ll; alias; alias q=\"it's\"; alias q",
        );
        assert_eq!(
            out,
            "alias la='ls -A'\nalias ll='ls -l'\nalias ll='ls -l'\n1\n1\nalias la='ls -A'\nalias q='it'\\''s'\n"
        );
        assert_eq!(
            (err.as_str(), code),
            ("alias: nope: not found\nunalias: nope: not found\n", 0)
        );
        // They last the session, and a name that is one is not found, with the reason.
        let (_, err, code) = s.sh("la");
        assert_eq!(code, 127);
        assert!(
            err.starts_with(
                "la: command not found\nla: an alias (la='ls -A'), and a script expands no aliases"
            ),
            "{err}"
        );
        assert_eq!(s.ok("unalias -a; alias"), "");
        let (_, err, code) = s.sh("big=$(printf '%0600000d' 0); alias a=$big; alias b=$big");
        assert!(
            err.starts_with("alias: b: aliases too large") && code == 1,
            "{err}"
        );
        assert_eq!(s.sh("alias -x").2, 2);
    }
}
