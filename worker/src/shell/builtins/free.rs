//! `free`: the memory a program started here may use, in procps-ng's columns and options. The
//! host's memory is none of the guest's business: `total` is the session's memory cap (what
//! each interpreter, fresh or the session's own, may grow to), `available` what a fresh one may
//! have of it now (less when the worker holds much beside it), `used` the rest. There is no
//! swap, no shared memory and no page cache inside the sandbox.

use crate::shell::exec::{Abort, Ctx};

use super::args::opts;

/// How numbers are printed.
#[derive(Clone, Copy)]
enum Scale {
    /// Whole units of this many bytes, truncated.
    Units(u64),
    /// `-h`: a unit per number, powers of 1024 (or of 1000 with `--si`).
    Human { si: bool },
}

/// `free [-b|-k|-m|-g|--kilo|--mega|--giga|-h] [--si] [-t] [-w]`.
pub(super) fn free(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "bkmghtwlvs:c:V",
        "bytes=b kibi=k mebi=m gibi=g tebi=T kilo=K mega=M giga=G tera=E si=S human=h \
         total=t wide=w lohi=l committed=v seconds=s count=c version=V",
    ) else {
        return Ok(1);
    };
    if o.has('V') {
        ctx.outs("free from procps-ng 4.0.2 (the sandbox's)\n");
        return Ok(0);
    }
    for (letter, option) in [('s', "-s"), ('c', "-c"), ('l', "-l"), ('v', "-v")] {
        if o.has(letter) || o.value(letter).is_some() {
            ctx.warn(format_args!(
                "{option} is not supported here (one report per call; no low/high or \
                 committed memory in the sandbox)"
            ));
            return Ok(1);
        }
    }
    if !o.operands.is_empty() {
        ctx.warn(format_args!("unrecognized argument '{}'", o.operands[0]));
        return Ok(1);
    }
    let Some(memory) = ctx.sh.interpreters.memory() else {
        ctx.warn("this session runs no interpreter to report the memory of");
        return Ok(1);
    };
    let si = o.has('S');
    let power = |base: u64, exp: u32| base.pow(exp);
    let scale = if o.has('h') {
        Scale::Human { si }
    } else if o.has('b') {
        Scale::Units(1)
    } else if o.has('m') {
        Scale::Units(if si { power(1000, 2) } else { 1 << 20 })
    } else if o.has('g') {
        Scale::Units(if si { power(1000, 3) } else { 1 << 30 })
    } else if o.has('T') {
        Scale::Units(if si { power(1000, 4) } else { 1 << 40 })
    } else if o.has('K') {
        Scale::Units(1000)
    } else if o.has('M') {
        Scale::Units(power(1000, 2))
    } else if o.has('G') {
        Scale::Units(power(1000, 3))
    } else if o.has('E') {
        Scale::Units(power(1000, 4))
    } else {
        Scale::Units(if si { 1000 } else { 1024 })
    };
    let total = memory.cap;
    let free = memory.available.min(total);
    let used = total - free;
    let wide = o.has('w');
    let cache_columns: &[&str] = if wide {
        &["buffers", "cache"]
    } else {
        &["buff/cache"]
    };
    let mut header = vec!["total", "used", "free", "shared"];
    header.extend_from_slice(cache_columns);
    header.push("available");
    let mem: Vec<u64> = [total, used, free, 0]
        .into_iter()
        .chain(cache_columns.iter().map(|_| 0))
        .chain([free])
        .collect();
    let mut text = row("", header.iter().map(|h| (*h).to_owned()));
    text += &row("Mem:", mem.iter().map(|n| number(*n, scale)));
    text += &row("Swap:", [0, 0, 0].iter().map(|n| number(*n, scale)));
    if o.has('t') {
        text += &row(
            "Total:",
            [total, used, free].iter().map(|n| number(*n, scale)),
        );
    }
    ctx.outs(&text);
    Ok(0)
}

/// A line: the label in 8 columns, then each cell right-aligned in 12.
fn row(label: &str, cells: impl Iterator<Item = String>) -> String {
    let mut line = format!("{label:<8}");
    for cell in cells {
        line.push_str(&format!("{cell:>12}"));
    }
    line + "\n"
}

/// procps's form of a number of bytes: whole units, or `-h`'s one decimal below 10 and a
/// unit (`Ki Mi Gi`, `K M G` with `--si`, `B` for bytes).
fn number(bytes: u64, scale: Scale) -> String {
    match scale {
        Scale::Units(unit) => (bytes / unit).to_string(),
        Scale::Human { si } => {
            let base = if si { 1000.0 } else { 1024.0 };
            let units: [&str; 6] = if si {
                ["B", "K", "M", "G", "T", "P"]
            } else {
                ["B", "Ki", "Mi", "Gi", "Ti", "Pi"]
            };
            let mut value = bytes as f64;
            let mut unit = 0;
            while value >= base && unit + 1 < units.len() {
                value /= base;
                unit += 1;
            }
            if unit > 0 && value < 10.0 {
                format!("{value:.1}{}", units[unit])
            } else {
                format!("{}{}", value as u64, units[unit])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::tests::Sandbox;

    /// The test sandbox's interpreters: a 1 GiB cap, 1000 MiB of it free now.
    #[test]
    fn free_reports_the_memory_cap_in_procps_columns() {
        let mut s = Sandbox::new();
        assert_eq!(
            s.ok("free"),
            "               total        used        free      shared  buff/cache   available\n\
             Mem:         1048576       24576     1024000           0           0     1024000\n\
             Swap:              0           0           0\n"
        );
        assert_eq!(
            s.ok("free -h -t | tail -2"),
            "Swap:             0B          0B          0B\n\
             Total:         1.0Gi        24Mi      1000Mi\n"
        );
        assert_eq!(
            s.ok("free -m --si -w | head -1"),
            "               total        used        free      shared     buffers       cache   available\n"
        );
        let (_, err, code) = s.sh("free -s 1");
        assert!(
            err.contains("-s is not supported here") && code == 1,
            "{err}"
        );
        assert_eq!(s.sh("free -x").2, 1);
        assert_eq!(number(9_580_544, Scale::Human { si: false }), "9.1Mi");
        assert_eq!(number(24_683_584 << 10, Scale::Human { si: false }), "23Gi");
    }
}
