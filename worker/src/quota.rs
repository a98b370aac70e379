//! The session's disk quota: how many bytes and how many entries (files, directories, links) its
//! files in `/app` and `/tmp` may hold together. RLIMIT_FSIZE bounds one file; this bounds them
//! all, so a guest cannot fill the host's disk with many files below the per-file cap.
//!
//! The worker is the only process that writes a session's files while it runs, and all of it
//! goes through WASI: the guest, and the shell of `execute_command` (its WebAssembly tools and
//! its own redirections). Every growth is charged to one [`Quota`]
//! ([`SharedQuota`]) before it happens: a new entry (a file created, a directory, a link), and
//! bytes written past a file's end (or a file extended by `ftruncate`). Reading and overwriting
//! existing bytes cost nothing. Deletions are not credited byte by byte (a deleted file may have
//! other links, or still be open and growing): instead, when a charge would cross a limit, the
//! trees are counted for real ([`usage_of`]) and the charge is refused only if the real usage
//! leaves no room. The running total is therefore an upper bound that a recount brings down, and
//! a recount happens only near the limit.
//!
//! That is `host::disk_quota` (shadows of the p1 calls that grow files, refused with errno
//! `DQUOT`). Every refusal is remembered ([`Quota::refusal_since`]), so an execution
//! that failed because of one is classified `disk_quota` even when the interpreter or the tool
//! only saw an errno, and a command line reports it whichever command hit it.
//!
//! What the supervisor itself moves into a session (`install_package`) is charged before it is
//! moved, through the same total ([`Quota::charge_install`], asked by the supervisor's
//! `ChargeDisk`): an install that does not fit is refused and nothing is moved.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use sandbox_protocol::confined::{Root, usage_of};

/// A session's quota, shared by the guest thread's WASI host and the shell thread.
pub type SharedQuota = Arc<Mutex<Quota>>;

/// Locks a shared quota. A panic elsewhere while it was held leaves plain numbers behind, which
/// stay usable.
pub fn lock(quota: &SharedQuota) -> MutexGuard<'_, Quota> {
    quota.lock().unwrap_or_else(|e| e.into_inner())
}

/// The limits of one session's files in `/app` and `/tmp` together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaLimits {
    /// Bytes of files (apparent lengths) and symlink texts.
    pub bytes: u64,
    /// Files, directories, symlinks and anything else, counted alike.
    pub entries: u64,
}

/// Bytes and entries: a growth to charge, or what the files hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amount {
    pub bytes: u64,
    pub entries: u64,
}

impl Amount {
    /// Nothing: a growth that needs no charge.
    pub const ZERO: Amount = Amount {
        bytes: 0,
        entries: 0,
    };

    /// Bytes alone (a write).
    pub fn bytes(bytes: u64) -> Self {
        Self { bytes, entries: 0 }
    }

    /// Entries alone (a new file, directory or link).
    pub fn entries(entries: u64) -> Self {
        Self { bytes: 0, entries }
    }

    fn plus(self, other: Amount) -> Self {
        Self {
            bytes: self.bytes.saturating_add(other.bytes),
            entries: self.entries.saturating_add(other.entries),
        }
    }

    fn minus(self, other: Amount) -> Self {
        Self {
            bytes: self.bytes.saturating_sub(other.bytes),
            entries: self.entries.saturating_sub(other.entries),
        }
    }

    fn max(self, other: Amount) -> Self {
        Self {
            bytes: self.bytes.max(other.bytes),
            entries: self.entries.max(other.entries),
        }
    }

    fn within(self, limits: QuotaLimits) -> bool {
        self.bytes <= limits.bytes && self.entries <= limits.entries
    }
}

/// A refused growth, with the numbers a model needs to act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub limits: QuotaLimits,
    /// What the files held when the growth was refused (just counted).
    pub used: Amount,
    /// The growth that did not fit.
    pub wanted: Amount,
    /// False when the count could not see everything (an unreadable directory): `used` is then
    /// a lower bound.
    pub exact: bool,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at_least = if self.exact { "" } else { "at least " };
        let (limits, used) = (self.limits, self.used);
        let needs = if used.entries.saturating_add(self.wanted.entries) > limits.entries {
            format!(
                "{} more file(s), directory(ies) or link(s)",
                self.wanted.entries
            )
        } else {
            format!("{} more", human_bytes(self.wanted.bytes))
        };
        write!(
            f,
            "disk_quota: the session's files (/app and /tmp together) are limited to {} and {} files, directories and links; {at_least}{} and {} entries are in use, and this write needs {needs}. Delete files (execute_command `rm -r PATH`; `du -s /app /tmp` shows what uses the space), call reset_workspace, or create_session with a larger flavor",
            human_bytes(limits.bytes),
            limits.entries,
            human_bytes(used.bytes),
            used.entries,
        )
    }
}

impl From<Refusal> for io::Error {
    /// The error the shell's writes fail with: its text is the refusal.
    fn from(refusal: Refusal) -> Self {
        io::Error::new(io::ErrorKind::QuotaExceeded, refusal.to_string())
    }
}

/// `5 MiB`, `4.77 MiB`, `1023 bytes`.
fn human_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in UNITS {
        if n >= size {
            let text = format!("{:.2}", n as f64 / size as f64);
            let text = text.trim_end_matches('0').trim_end_matches('.');
            return format!("{text} {unit}");
        }
    }
    format!("{n} bytes")
}

/// The quota of one session: its limits, the directories it covers, and a running total.
#[derive(Debug)]
pub struct Quota {
    limits: QuotaLimits,
    /// The directories covered: guest mount point and host directory (`/app`, `/tmp`).
    roots: Vec<(String, PathBuf)>,
    /// An upper bound of what the files hold (`None` until first counted, which happens at
    /// the first charge: a session that never writes never pays for a count).
    used: Option<Amount>,
    /// Bytes in files the guest deleted while it still had them open (they still take disk
    /// space, but no walk sees them), as last measured by the WASI side.
    hidden: u64,
    /// What the session keeps outside these directories and pays for all the same (its
    /// checkpoints), as the supervisor last set it ([`Quota::hold`]).
    held: Amount,
    refusals: u64,
    last_refusal: Option<Refusal>,
    recounts: u64,
}

impl Quota {
    /// A quota over `roots` (guest mount point, host directory).
    pub fn new(limits: QuotaLimits, roots: Vec<(String, PathBuf)>) -> Self {
        Self {
            limits,
            roots,
            used: None,
            hidden: 0,
            held: Amount::ZERO,
            refusals: 0,
            last_refusal: None,
            recounts: 0,
        }
    }

    /// The quota, shared by the guest's WASI host and the shell.
    pub fn into_shared(self) -> SharedQuota {
        Arc::new(Mutex::new(self))
    }

    /// The limits it enforces.
    pub fn limits(&self) -> QuotaLimits {
        self.limits
    }

    /// Whether writes under the guest mount point `guest` are charged.
    pub fn covers(&self, guest: &str) -> bool {
        self.roots.iter().any(|(g, _)| g == guest)
    }

    /// Charges `growth`. When the running total would cross a limit, the files are counted
    /// again first (`hidden` measures the bytes of deleted-but-open files, when the caller can;
    /// `None` keeps the last measurement); the growth is refused only if the real usage leaves
    /// no room for it.
    ///
    /// # Errors
    /// The refusal, also remembered for [`Quota::refusal_since`].
    pub fn charge(
        &mut self,
        growth: Amount,
        hidden: impl FnOnce() -> Option<u64>,
    ) -> Result<(), Refusal> {
        self.admit(growth, hidden).inspect_err(|refusal| {
            self.refusals += 1;
            self.last_refusal = Some(refusal.clone());
        })
    }

    /// Charges files the supervisor is about to move in (an install), exactly as [`charge`]
    /// does a guest's write, but a refusal is not the guest's: it is not remembered, so an
    /// execution running meanwhile is not classified by it. Returns what the files now hold
    /// (the running total, an upper bound).
    ///
    /// # Errors
    /// The refusal, with the numbers counted afresh.
    ///
    /// [`charge`]: Quota::charge
    pub fn charge_install(&mut self, growth: Amount) -> Result<Amount, Refusal> {
        self.admit(growth, || None)?;
        Ok(self.used.unwrap_or(growth))
    }

    /// Makes `held` what the session keeps outside its directories, in place of what it held
    /// before: less is always granted, more only when it fits, as an install's files would.
    /// Returns what the session now uses, counted afresh.
    ///
    /// # Errors
    /// The refusal, with the numbers counted afresh; what was held stays held.
    pub fn hold(&mut self, held: Amount) -> Result<Amount, Refusal> {
        let before = self.held;
        let growth = held.minus(before);
        if growth != Amount::ZERO {
            self.admit(growth, || None)?;
        }
        self.held = held;
        // Counted afresh: the supervisor changes held space when it adds or removes a
        // checkpoint or puts one's files back in `/app`, and the running total must not stay
        // below what the directories now hold.
        Ok(self.recount(None).0)
    }

    fn admit(
        &mut self,
        growth: Amount,
        hidden: impl FnOnce() -> Option<u64>,
    ) -> Result<(), Refusal> {
        if growth == Amount::ZERO {
            return Ok(());
        }
        let mut hidden = Some(hidden);
        let mut measure = || hidden.take().and_then(|h| h());
        let (used, counted) = match self.used {
            Some(used) => (used, None),
            None => {
                let (used, exact) = self.recount(measure());
                (used, Some(exact))
            }
        };
        if used.plus(growth).within(self.limits) {
            self.used = Some(used.plus(growth));
            return Ok(());
        }
        // The total may still count deleted files: count for real before refusing (unless
        // that just happened).
        let (used, exact) = match counted {
            Some(exact) => (used, exact),
            None => self.recount(measure()),
        };
        if used.plus(growth).within(self.limits) {
            self.used = Some(used.plus(growth));
            return Ok(());
        }
        Err(Refusal {
            limits: self.limits,
            used,
            wanted: growth,
            exact,
        })
    }

    /// Adds growth that already happened (a write that went further than charged).
    pub fn add(&mut self, growth: Amount) {
        if let Some(used) = self.used {
            self.used = Some(used.plus(growth));
        }
    }

    /// Gives back a charge whose growth did not happen, or space that was certainly freed
    /// (a truncated file, a removed entry).
    pub fn release(&mut self, amount: Amount) {
        if let Some(used) = self.used {
            self.used = Some(used.minus(amount));
        }
    }

    /// How many growths were refused so far: a mark for [`Quota::refusal_since`].
    pub fn refusals(&self) -> u64 {
        self.refusals
    }

    /// The last refusal, if any happened after `mark` (a value of [`Quota::refusals`]).
    pub fn refusal_since(&self, mark: u64) -> Option<&Refusal> {
        (self.refusals > mark)
            .then_some(self.last_refusal.as_ref())
            .flatten()
    }

    /// How often the files were counted (for tests and the overhead measurement).
    pub fn recounts(&self) -> u64 {
        self.recounts
    }

    /// The running total (an upper bound), counting the files first if that never happened.
    pub fn usage(&mut self) -> Amount {
        match self.used {
            Some(used) => used,
            None => self.recount(None).0,
        }
    }

    /// What the files hold now, counted afresh (`df`): the running total only bounds it from
    /// above once files were removed.
    pub fn measure(&mut self) -> Amount {
        self.recount(None).0
    }

    /// Counts the files and makes that the running total. The count stops a little past the
    /// entry limit (beyond it the answer is "over" anyway), so it is bounded in time. When it
    /// could not see everything, the previous total is kept where it was higher: an unreadable
    /// directory must not make its contents free.
    fn recount(&mut self, hidden: Option<u64>) -> (Amount, bool) {
        self.recounts += 1;
        if let Some(hidden) = hidden {
            self.hidden = hidden;
        }
        let roots: Vec<Root> = self
            .roots
            .iter()
            .filter_map(|(_, host)| Root::open_ambient(host).ok())
            .collect();
        let refs: Vec<&Root> = roots.iter().collect();
        let usage = usage_of(&refs, self.limits.entries.saturating_add(1));
        let mut counted = Amount {
            bytes: usage.bytes.saturating_add(self.hidden),
            entries: usage.entries,
        }
        .plus(self.held);
        let exact = usage.complete && roots.len() == self.roots.len();
        if !exact && let Some(previous) = self.used {
            counted = counted.max(previous);
        }
        self.used = Some(counted);
        (counted, exact)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: QuotaLimits = QuotaLimits {
        bytes: 1000,
        entries: 10,
    };

    fn quota(dirs: &[&tempfile::TempDir]) -> Quota {
        let roots = dirs
            .iter()
            .zip(["/app", "/tmp"])
            .map(|(d, g)| (g.to_string(), d.path().to_path_buf()))
            .collect();
        Quota::new(LIMITS, roots)
    }

    /// What the session holds outside its files (checkpoints) counts like its files, through
    /// every recount, and can shrink at any time.
    #[test]
    fn held_space_counts_through_recounts_and_is_refused_past_the_limit() {
        let (app, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(app.path().join("a"), vec![0u8; 100]).unwrap();
        let mut q = quota(&[&app, &tmp]);
        let held = |bytes, entries| Amount { bytes, entries };
        assert_eq!(q.hold(held(600, 2)).unwrap(), held(700, 3));
        // A recount (crossing with a guest's charge) still counts what is held.
        let refusal = q.charge(Amount::bytes(400), || None).unwrap_err();
        assert_eq!(refusal.used, held(700, 3));
        // More than fits is refused and changes nothing.
        let refusal = q.hold(held(950, 2)).unwrap_err();
        assert_eq!(refusal.used, held(700, 3));
        assert_eq!(q.usage(), held(700, 3));
        // Less is granted and frees room for the guest.
        assert_eq!(q.hold(held(100, 1)).unwrap(), held(200, 2));
        q.charge(Amount::bytes(400), || None).unwrap();
        assert_eq!(q.usage(), held(600, 2));
    }

    #[test]
    fn growth_is_charged_and_a_crossing_is_checked_by_a_count() {
        let (app, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(app.path().join("a"), vec![0u8; 100]).unwrap();
        std::fs::write(tmp.path().join("b"), vec![0u8; 200]).unwrap();
        let mut q = quota(&[&app, &tmp]);
        assert!(q.covers("/app") && q.covers("/tmp") && !q.covers("/shared"));
        // The first charge counts what is there: 2 entries, 300 bytes.
        q.charge(Amount::entries(1), || None).unwrap();
        assert_eq!(
            q.usage(),
            Amount {
                bytes: 300,
                entries: 3
            }
        );
        assert_eq!(q.recounts(), 1);
        q.charge(Amount::bytes(700), || None).unwrap();
        q.charge(Amount::entries(7), || None).unwrap();
        assert_eq!(q.recounts(), 1, "no count while the total fits");
        // Crossing makes a count; nothing was written for those charges, so there is room.
        q.charge(Amount::bytes(1), || None).unwrap();
        assert_eq!(q.recounts(), 2);
        assert_eq!(
            q.usage(),
            Amount {
                bytes: 301,
                entries: 2
            }
        );
        // Now the growth happens for real, and the next crossing is refused.
        q.charge(
            Amount {
                bytes: 698,
                entries: 1,
            },
            || None,
        )
        .unwrap();
        std::fs::write(app.path().join("c"), vec![0u8; 699]).unwrap();
        let refusal = q.charge(Amount::bytes(2), || None).unwrap_err();
        assert_eq!(q.recounts(), 3);
        assert_eq!(refusal.wanted, Amount::bytes(2));
        assert_eq!(
            refusal.used,
            Amount {
                bytes: 999,
                entries: 3
            }
        );
        assert!(refusal.exact);
        assert_eq!(q.refusals(), 1);
        assert!(q.refusal_since(0).is_some() && q.refusal_since(1).is_none());
        let text = refusal.to_string();
        assert!(text.starts_with("disk_quota: "), "{text}");
        assert!(
            text.contains("limited to 1000 bytes and 10 files, directories and links; 999 bytes and 3 entries are in use, and this write needs 2 bytes more"),
            "{text}"
        );
        // One byte still fits.
        q.charge(Amount::bytes(1), || None).unwrap();
    }

    #[test]
    fn a_recount_decides_and_deletions_make_room() {
        let app = tempfile::tempdir().unwrap();
        let make = |range: std::ops::Range<i32>| {
            for i in range {
                std::fs::write(app.path().join(format!("f{i}")), "x").unwrap();
            }
        };
        make(0..10);
        let mut q = quota(&[&app]);
        let refused = q.charge(Amount::entries(1), || None).unwrap_err();
        assert_eq!(q.recounts(), 1, "the first count is not repeated");
        assert_eq!(refused.used.entries, 10);
        assert!(refused.to_string().contains("1 more file(s)"), "{refused}");
        // Deleting files is seen by the next count, without any credit.
        for i in 0..5 {
            std::fs::remove_file(app.path().join(format!("f{i}"))).unwrap();
        }
        q.charge(Amount::entries(5), || None).unwrap();
        make(0..5);
        assert!(q.charge(Amount::entries(1), || None).is_err());
        // Bytes the guest holds in deleted-but-open files count too.
        let mut q = quota(&[&app]);
        let refused = q.charge(Amount::bytes(10), || Some(995)).unwrap_err();
        assert_eq!(refused.used.bytes, 10 + 995);
        assert!(refused.to_string().contains("10 bytes more"), "{refused}");
    }

    #[test]
    fn releases_and_additions_move_the_total() {
        let app = tempfile::tempdir().unwrap();
        let mut q = quota(&[&app]);
        q.charge(Amount::bytes(600), || None).unwrap();
        q.release(Amount::bytes(600));
        q.charge(Amount::bytes(900), || None).unwrap();
        assert_eq!(q.recounts(), 1);
        q.add(Amount::bytes(200));
        assert_eq!(q.usage().bytes, 1100);
        // Over by the additions: the next charge counts (the files are empty) and fits.
        q.charge(Amount::bytes(100), || None).unwrap();
        assert_eq!(q.recounts(), 2);
    }

    #[test]
    fn an_unreadable_directory_does_not_make_its_contents_free() {
        let app = tempfile::tempdir().unwrap();
        let mut q = quota(&[&app]);
        q.charge(Amount::bytes(900), || None).unwrap();
        std::fs::create_dir(app.path().join("d")).unwrap();
        std::fs::write(app.path().join("d/f"), vec![0u8; 900]).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let d = app.path().join("d");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o000)).unwrap();
        let refused = q.charge(Amount::bytes(200), || None);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        // As root the directory is readable anyway; otherwise the old total stands.
        let refusal = refused.unwrap_err();
        assert!(refusal.used.bytes >= 900, "{refusal:?}");
    }

    /// The shell's writes, through the unit-test sandbox of `shell` (its `/app` and `/tmp` under
    /// a quota of 2000 bytes and 40 entries).
    mod shell {
        use super::super::*;
        use crate::shell::tests::Sandbox;
        use crate::shell::{ShellError, ShellOutcome};

        const SMALL: QuotaLimits = QuotaLimits {
            bytes: 2000,
            entries: 40,
        };

        fn sandbox(charged: &[&str]) -> (Sandbox, SharedQuota) {
            let sb = Sandbox::new();
            let roots = [("/app", sb.app.path()), ("/tmp", sb.tmp.path())]
                .into_iter()
                .filter(|(g, _)| charged.contains(g))
                .map(|(g, p)| (g.to_owned(), p.to_path_buf()))
                .collect();
            (sb, Quota::new(SMALL, roots).into_shared())
        }

        fn run(sb: &mut Sandbox, quota: &SharedQuota, script: &str) -> ShellOutcome {
            let mut limits = sb.limits();
            limits.quota = Some(quota.clone());
            sb.run_with(script, &limits)
        }

        /// What the charged directories really hold.
        fn held(sb: &Sandbox) -> Amount {
            let roots = [
                Root::open_ambient(sb.app.path()).unwrap(),
                Root::open_ambient(sb.tmp.path()).unwrap(),
            ];
            let usage = usage_of(&[&roots[0], &roots[1]], 1000);
            Amount {
                bytes: usage.bytes,
                entries: usage.entries,
            }
        }

        /// `PREFIX1 PREFIX2 ... PREFIXn` (the shell has no brace expansion).
        fn list(prefix: &str, n: usize) -> String {
            (1..=n)
                .map(|i| format!("{prefix}{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        }

        fn assert_refused(o: &ShellOutcome, script: &str) {
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                matches!(&o.error, Some(ShellError::DiskQuota(m)) if m.starts_with("disk_quota: ")),
                "{script}: {:?} {stderr}",
                o.error
            );
            assert_eq!(o.error.as_ref().map(ShellError::kind), Some("disk_quota"));
            // The shell's own refusal (a redirection), or the tool's: EDQUOT from WASI.
            assert!(
                stderr.contains("disk_quota: ") || stderr.contains("Quota exceeded"),
                "{script}: {stderr}"
            );
        }

        #[test]
        fn a_redirect_past_the_quota_is_refused_and_writes_nothing_beyond_it() {
            let (mut sb, quota) = sandbox(&["/app", "/tmp"]);
            let o = run(
                &mut sb,
                &quota,
                "echo small > a.txt && seq 1 100000 > big.txt",
            );
            assert_refused(&o, "seq > big.txt");
            assert_ne!(o.exit_code, 0);
            let now = held(&sb);
            assert!(now.bytes <= SMALL.bytes, "{now:?}");
            assert_eq!(sb.read("a.txt"), "small\n");
            // Appending in small steps stops at the quota too, in /tmp as in /app.
            let o = run(
                &mut sb,
                &quota,
                &["echo 0123456789 >> /tmp/log"; 400].join("; "),
            );
            assert_refused(&o, ">> /tmp/log");
            let now = held(&sb);
            assert!(now.bytes <= SMALL.bytes && now.bytes > 1500, "{now:?}");
        }

        #[test]
        fn cp_and_mkdir_past_the_quota_are_refused_whole() {
            let (mut sb, quota) = sandbox(&["/app", "/tmp"]);
            sb.write("one.bin", &"x".repeat(1200));
            let o = run(&mut sb, &quota, "cp one.bin two.bin");
            assert_refused(&o, "cp");
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                stderr.contains("cp: 'one.bin' -> 'two.bin': Quota exceeded"),
                "{stderr}"
            );
            // The copy wrote nothing (the destination exists, empty, as after a failed cp).
            assert_eq!(sb.read("two.bin"), "");
            // 39 directories at once do not fit beside the 2 files: none is made.
            let deep = (0..39)
                .map(|i| format!("d{i}"))
                .collect::<Vec<_>>()
                .join("/");
            let o = run(&mut sb, &quota, &format!("mkdir -p {deep}"));
            assert_refused(&o, "mkdir -p");
            assert!(!sb.exists("d0"));
            let now = held(&sb);
            assert!(
                now.entries <= SMALL.entries && now.bytes <= SMALL.bytes,
                "{now:?}"
            );
            // Fewer fit, and after rm copies fit again: the session stays usable.
            let ok = run(
                &mut sb,
                &quota,
                "mkdir -p a/b/c && rm one.bin two.bin && seq 1 200 > three.txt && cp three.txt /tmp/copy.txt",
            );
            assert!(ok.error.is_none() && ok.exit_code == 0, "{ok:?}");
            assert_eq!(sb.read("three.txt").len(), 692);
        }

        #[test]
        fn files_count_as_entries_and_uncharged_mounts_stay_free() {
            // Only /app is charged: /tmp plays the shared volume.
            let (mut sb, quota) = sandbox(&["/app"]);
            let o = run(&mut sb, &quota, &format!("touch {}", list("f", 60)));
            assert_refused(&o, "touch");
            assert_eq!(held(&sb).entries, 40);
            assert!(sb.exists("f40") && !sb.exists("f41"));
            let free = run(&mut sb, &quota, &format!("touch {}", list("/tmp/g", 60)));
            assert!(free.error.is_none(), "{free:?}");
            // Moving into the quota from outside it copies (and is charged): refused here.
            let o = run(
                &mut sb,
                &quota,
                "rm f1 f2 f3 && mkdir /tmp/tree && touch /tmp/tree/a /tmp/tree/b /tmp/tree/c && mv /tmp/tree tree",
            );
            assert_refused(&o, "mv");
            assert!(
                sb.tmp.path().join("tree").exists(),
                "a refused move keeps its source"
            );
            // No quota at all: nothing is charged.
            let mut free = Sandbox::new();
            let o = free.run(&format!("touch {}; seq 1 100000 > big", list("f", 60)));
            assert!(o.error.is_none(), "{o:?}");
        }
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(5 << 20), "5 MiB");
        assert_eq!(human_bytes(5_000_000), "4.77 MiB");
        assert_eq!(human_bytes(16 << 30), "16 GiB");
    }
}
