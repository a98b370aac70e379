//! `df`: the session's disk space, which is its disk quota (the bytes and the files, counted
//! together, of the mounts it covers: `/app`, `/tmp`), in GNU df's columns and options. The
//! host's own disks are none of the guest's business, and the numbers a guest can use are the
//! quota's. A mount without a quota (the read-only `/data`) shows `-` where GNU shows a value it
//! does not know. Paths are placed by their mount point, lexically: nothing is opened.

use crate::quota::{self, Amount};
use crate::shell::exec::{Abort, Ctx};
use crate::shell::guest_fs::normalize;

use super::args::opts;

/// What one row shows.
struct Row {
    source: &'static str,
    kind: &'static str,
    mount: String,
    /// Total and used (bytes, or files with `-i`), when known.
    figures: Option<(u64, u64)>,
}

/// How sizes are printed.
#[derive(Clone, Copy)]
enum Units {
    /// Blocks of this many bytes, rounded up; with their unit after each number when `-B`
    /// gave a unit alone (`-BM`), as GNU does.
    Blocks(u64, bool),
    /// `-h` (powers of 1024) or `-H` (of 1000).
    Human(u64),
}

/// `df [-ahHikPTl] [-B SIZE] [--total] [FILE...]`.
pub(super) fn df(ctx: &mut Ctx<'_, '_>, args: &[String]) -> Result<i32, Abort> {
    let Some(o) = opts(
        ctx,
        args,
        "ahHikmPTlB:",
        "all=a human-readable=h si=H inodes=i portability=P print-type=T local=l \
         block-size=B total=t",
    ) else {
        return Ok(1);
    };
    let Some(quota) = ctx.sh.quota().cloned() else {
        ctx.warn("this session has no disk quota to report");
        return Ok(1);
    };
    let (limits, used) = {
        let mut q = quota::lock(&quota);
        (q.limits(), q.measure())
    };
    let inodes = o.has('i');
    let units = if o.has('h') {
        Units::Human(1024)
    } else if o.has('H') {
        Units::Human(1000)
    } else if let Some(size) = o.value('B') {
        match block_size(size) {
            Some(n) => Units::Blocks(n, size.starts_with(|c: char| c.is_ascii_alphabetic())),
            None => {
                ctx.warn(format_args!("invalid -B argument '{size}'"));
                return Ok(1);
            }
        }
    } else if o.has('m') {
        Units::Blocks(1 << 20, false)
    } else {
        Units::Blocks(1024, false)
    };
    let quota_row = |mount: &str| Row {
        source: "sandbox",
        kind: "quota",
        mount: mount.to_owned(),
        figures: Some(figures(limits, used, inodes)),
    };
    let mounts: Vec<String> = ctx.sh.fs.mount_points().map(str::to_owned).collect();
    let covered = |m: &str| quota::lock(&quota).covers(m);
    let mut rows = Vec::new();
    let mut status = 0;
    if o.operands.is_empty() {
        // One filesystem, however many mount points share its quota (GNU lists a device
        // once); the others only with -a.
        let mut shown_quota = false;
        for m in &mounts {
            if covered(m) && (!shown_quota || o.has('a')) {
                rows.push(quota_row(m));
                shown_quota = true;
            } else if !covered(m) && o.has('a') {
                rows.push(unknown_row(m));
            }
        }
    } else {
        for arg in &o.operands {
            let guest = normalize(ctx.cwd(), arg);
            let mount = (mounts.iter())
                .filter(|m| guest == **m || guest.starts_with(&format!("{m}/")))
                .max_by_key(|m| m.len());
            match mount {
                Some(m) if covered(m) => rows.push(quota_row(m)),
                Some(m) => rows.push(unknown_row(m)),
                None => {
                    ctx.warn(format_args!(
                        "{arg}: not in the sandbox's mounts ({})",
                        mounts.join(", ")
                    ));
                    status = 1;
                }
            }
        }
    }
    if o.has('t') {
        let (total, used) = (rows.iter().filter_map(|r| r.figures))
            .fold((0, 0), |(t, u), (rt, ru)| (t + rt, u + ru));
        rows.push(Row {
            source: "total",
            kind: "-",
            mount: "-".into(),
            figures: Some((total, used)),
        });
    }
    if !rows.is_empty() {
        let text = table(&rows, units, inodes, o.has('T'), o.has('P'));
        ctx.outs(&text);
    }
    Ok(status)
}

fn unknown_row(mount: &str) -> Row {
    Row {
        source: "none",
        kind: "ro",
        mount: mount.to_owned(),
        figures: None,
    }
}

/// Total and used: the quota's bytes, or its files (`-i`).
fn figures(limits: quota::QuotaLimits, used: Amount, inodes: bool) -> (u64, u64) {
    if inodes {
        (limits.entries, used.entries.min(limits.entries))
    } else {
        (limits.bytes, used.bytes.min(limits.bytes))
    }
}

/// `-B`'s SIZE: a number, a unit (`K`, `M`, `G`, `T`: powers of 1024; `KB`, `MB`...: of
/// 1000), or both.
fn block_size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = if number.is_empty() {
        1
    } else {
        number.parse().ok()?
    };
    let power = |base: u64, exp: u32| base.checked_pow(exp);
    let scale = match unit.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" | "KIB" => 1 << 10,
        "M" | "MIB" => 1 << 20,
        "G" | "GIB" => 1 << 30,
        "T" | "TIB" => 1 << 40,
        "KB" => 1000,
        "MB" => power(1000, 2)?,
        "GB" => power(1000, 3)?,
        "TB" => power(1000, 4)?,
        _ => return None,
    };
    number.checked_mul(scale).filter(|n| *n > 0)
}

/// GNU df's table: columns as wide as their widest cell, numbers on the right.
fn table(rows: &[Row], units: Units, inodes: bool, typed: bool, posix: bool) -> String {
    let size_header = match (inodes, units, posix) {
        (true, _, _) => "Inodes".to_owned(),
        (false, Units::Human(_), _) => "Size".to_owned(),
        (false, Units::Blocks(1024, _), true) => "1024-blocks".to_owned(),
        (false, Units::Blocks(n, _), _) => format!("{}-blocks", block_name(n)),
    };
    let (used_h, avail_h, pct_h) = match (inodes, units, posix) {
        (true, _, _) => ("IUsed", "IFree", "IUse%"),
        (false, Units::Human(_), false) => ("Used", "Avail", "Use%"),
        (false, _, true) => ("Used", "Available", "Capacity"),
        (false, _, false) => ("Used", "Available", "Use%"),
    };
    let number = |n: u64| match (inodes, units) {
        (true, Units::Human(base)) => human(n, base, 1),
        (true, _) => n.to_string(),
        (false, Units::Human(base)) => human(n, base, 1),
        (false, Units::Blocks(b, false)) => n.div_ceil(b).to_string(),
        (false, Units::Blocks(b, true)) => {
            let name = block_name(b);
            format!(
                "{}{}",
                n.div_ceil(b),
                name.trim_start_matches(|c: char| c.is_ascii_digit())
            )
        }
    };
    let mut cells: Vec<Vec<String>> = vec![
        [
            "Filesystem",
            "Type",
            &size_header,
            used_h,
            avail_h,
            pct_h,
            "Mounted on",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for row in rows {
        let (size, used, avail, pct) = match row.figures {
            Some((total, used)) => {
                let avail = total - used;
                let pct = match used + avail {
                    0 => "-".to_owned(),
                    all => format!("{}%", (used * 100).div_ceil(all)),
                };
                (number(total), number(used), number(avail), pct)
            }
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        cells.push(vec![
            row.source.to_owned(),
            row.kind.to_owned(),
            size,
            used,
            avail,
            pct,
            row.mount.clone(),
        ]);
    }
    if !typed {
        cells.iter_mut().for_each(|row| drop(row.remove(1)));
    }
    let columns = cells[0].len();
    let mut widths: Vec<usize> = (0..columns)
        .map(|c| cells.iter().map(|row| row[c].len()).max().unwrap_or(0))
        .collect();
    // GNU keeps the first column at least 14 wide.
    widths[0] = widths[0].max(14);
    let mut out = String::new();
    for row in &cells {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let text_column = c == 0 || (typed && c == 1) || c == columns - 1;
            let piece = match (text_column, c == columns - 1) {
                (_, true) => cell.clone(),
                (true, false) => format!("{cell:<width$}", width = widths[c]),
                (false, false) => format!("{cell:>width$}", width = widths[c]),
            };
            if c > 0 {
                line.push(' ');
            }
            line.push_str(&piece);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `1K`, `1M`, `512`, as GNU names a block size in its header.
fn block_name(n: u64) -> String {
    for (unit, size) in [
        ("T", 1u64 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ] {
        if n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    for (unit, size) in [
        ("TB", 1_000_000_000_000u64),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("kB", 1000),
    ] {
        if n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    n.to_string()
}

/// GNU's `-h`/`-H` form: rounded up, one decimal below 10, a unit letter past the base
/// (`K` for powers of 1024 with `-h`, `k` for 1000 with `-H`).
fn human(n: u64, base: u64, block: u64) -> String {
    let bytes = n.saturating_mul(block);
    if bytes < base {
        return bytes.to_string();
    }
    let units = if base == 1024 {
        ["K", "M", "G", "T", "P", "E"]
    } else {
        ["k", "M", "G", "T", "P", "E"]
    };
    let mut value = bytes as f64;
    for unit in units {
        value /= base as f64;
        if value < base as f64 {
            return if value < 10.0 {
                let tenths = (value * 10.0).ceil() / 10.0;
                if tenths >= 10.0 {
                    format!("10{unit}")
                } else {
                    format!("{tenths:.1}{unit}")
                }
            } else {
                format!("{}{unit}", value.ceil() as u64)
            };
        }
    }
    format!("{}E", value.ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_round_up_as_gnu_does() {
        assert_eq!(human(0, 1024, 1), "0");
        assert_eq!(human(1023, 1024, 1), "1023");
        assert_eq!(human(1024, 1024, 1), "1.0K");
        assert_eq!(human(1025, 1024, 1), "1.1K");
        assert_eq!(human(1 << 30, 1024, 1), "1.0G");
        assert_eq!(human(20 << 30, 1024, 1), "20G");
        assert_eq!(human(1_000_000, 1000, 1), "1.0M");
        assert_eq!(block_size("1M"), Some(1 << 20));
        assert_eq!(block_size("MB"), Some(1_000_000));
        assert_eq!(block_size("x"), None);
    }
}

#[cfg(test)]
mod session_tests {
    use crate::quota::{Quota, QuotaLimits};
    use crate::shell::tests::Sandbox;

    /// A sandbox whose `/app` and `/tmp` share a 1 MiB, 100-file quota.
    fn run(s: &mut Sandbox, line: &str) -> (String, String, i32) {
        let mut limits = s.limits();
        let roots = vec![
            ("/app".to_owned(), s.app.path().to_path_buf()),
            ("/tmp".to_owned(), s.tmp.path().to_path_buf()),
        ];
        let caps = QuotaLimits {
            bytes: 1 << 20,
            entries: 100,
        };
        limits.quota = Some(Quota::new(caps, roots).into_shared());
        let o = s.run_with(line, &limits);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (text(&o.stdout), text(&o.stderr), o.exit_code)
    }

    #[test]
    fn df_shows_the_quota_in_gnu_columns() {
        let mut s = Sandbox::new();
        s.write("f.bin", &"x".repeat(300 << 10));
        // What was written and removed since is free again (the quota's running total only
        // grows between counts).
        let (out, err, code) = run(&mut s, "seq 1 30000 > gone.txt; rm gone.txt; df");
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            (
                "Filesystem     1K-blocks Used Available Use% Mounted on\n\
                 sandbox             1024  300       724  30% /app\n",
                "",
                0
            )
        );
        let (out, _, _) = run(&mut s, "df -hT /tmp /data/d.txt");
        assert_eq!(
            out,
            "Filesystem     Type  Size Used Avail Use% Mounted on\n\
             sandbox        quota 1.0M 300K  724K  30% /tmp\n\
             none           ro       -    -     -    - /data\n"
        );
        let (out, _, _) = run(&mut s, "cd /tmp; df -i --total .");
        assert_eq!(
            out,
            "Filesystem     Inodes IUsed IFree IUse% Mounted on\n\
             sandbox           100     1    99    1% /tmp\n\
             total             100     1    99    1% -\n"
        );
        assert_eq!(
            run(&mut s, "df -BM -P").0,
            "Filesystem     1M-blocks Used Available Capacity Mounted on\n\
             sandbox               1M   1M        1M      30% /app\n"
        );
        let (out, err, code) = run(&mut s, "df /etc");
        assert!(out.is_empty() && code == 1, "{out}");
        assert!(
            err.starts_with("df: /etc: not in the sandbox's mounts"),
            "{err}"
        );
        assert_eq!(run(&mut s, "df -t ext4").2, 1);
    }
}
