//! Confinement: paths outside the mounts, links out of them, FIFOs, hard links, read-only mounts,
//! mount points, and host paths in messages.

use super::*;
use crate::host::FileModes;
use crate::shell::guest_fs::Fs;

#[test]
fn confinement_refuses_paths_outside_the_mounts() {
    let mut s = Sandbox::new();
    s.write("a.txt", "a\n");
    let host_app = fs::canonicalize(s.app.path())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let outside = s
        .outside
        .path()
        .join("secret")
        .to_string_lossy()
        .into_owned();
    for (script, path) in [
        ("cat /etc/passwd", "/etc/passwd"),
        ("cat /proc/self/environ", "/proc/self/environ"),
        ("ls /app/../../etc", "/etc"),
        ("cat ../../../etc/shadow", "/etc/shadow"),
        ("cd /app/sub/../../../root", "/root"),
        ("head /dev/zero", "/dev/zero"),
        ("grep -r root /etc", "/etc"),
        ("find /proc -name x", "/proc"),
        ("cp /etc/hosts /app/", "/etc/hosts"),
        ("echo x > /etc/evil", "/etc/evil"),
        ("touch /evil", "/evil"),
        ("mkdir /newtop", "/newtop"),
        ("wc -l < /etc/passwd", "/etc/passwd"),
        ("du -s /home", "/home"),
    ] {
        let o = s.run(script);
        // The command's usual failure status: 1, or 2 for ls and grep (as coreutils).
        let expected = if script.starts_with("ls") || script.starts_with("grep") {
            2
        } else {
            1
        };
        assert_eq!(
            o.exit_code,
            expected,
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            o.error,
            Some(ShellError::PathRestriction(path.into())),
            "{script}"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("path_restriction"), "{script}: {err}");
        s.assert_no_host_paths(&o);
    }
    // A program or pattern that starts with `/` is not a path: a tool that fails on it (sed
    // has no back-references in its regexes) fails as itself, not as a refused path.
    let o = s.run("printf 'aa bb\\n' > w.txt && sed -E -n '/(.)\\1/p' w.txt");
    assert_ne!(o.exit_code, 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.error, None, "{}", String::from_utf8_lossy(&o.stderr));
    let o = s.run("grep /etc/passwd w.txt");
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.error, None, "{}", String::from_utf8_lossy(&o.stderr));
    // Host paths are not a way in either: they are guest paths like any other (here under
    // the guest /tmp, where they do not exist).
    let o = s.run(&format!("cat {host_app}/a.txt; cat {outside}"));
    assert_eq!(o.exit_code, 1);
    assert!(o.stdout.is_empty());
    assert!(!String::from_utf8_lossy(&o.stderr).contains(SECRET));
    // The error names only the first refusal; the script went on.
    let o = s.run("cat /etc/a; echo still; cat /etc/b");
    assert_eq!(o.stdout, b"still\n");
    assert_eq!(o.error, Some(ShellError::PathRestriction("/etc/a".into())));
    assert!(!fs::exists("/evil").unwrap_or(false));
}

#[test]
fn confinement_refuses_symlinks_out_of_a_mount() {
    let mut s = Sandbox::new();
    let a = s.app.path().to_path_buf();
    symlink(s.outside.path(), a.join("link")).unwrap();
    symlink(s.outside.path().join("secret"), a.join("secret_link")).unwrap();
    symlink(s.outside.path().join("new_file"), a.join("dangling")).unwrap();
    symlink("../../../../../../../../etc", a.join("relative")).unwrap();
    s.write("inner/ok.txt", "fine\n");
    symlink("inner", a.join("good")).unwrap();
    for script in [
        "cat link/secret",
        "cat secret_link",
        "ls link",
        "ls link/",
        "cd link",
        "echo pwned > link/new",
        "echo pwned > dangling",
        "echo pwned >> secret_link",
        "mkdir -p link/x",
        "touch link/t",
        "cp secret_link copy",
        "cp -r link/ copy",
        "cat relative/passwd",
        "cd relative",
        "head link/secret",
        "grep TOP link/secret",
        "wc -c secret_link",
        "sort secret_link",
        "sed -i s/TOP/x/ secret_link",
        "tee link/t2 < /dev/null",
        "python link/secret",
        "rm link/secret",
        "mv link/secret /app/stolen",
        "du -s link/",
    ] {
        s.assert_restricted(script);
    }
    assert!(!s.outside.path().join("new").exists());
    assert!(!s.outside.path().join("new_file").exists());
    assert!(!s.outside.path().join("x").exists());
    assert!(s.outside.path().join("secret").exists());
    assert_eq!(
        fs::read_to_string(s.outside.path().join("secret")).unwrap(),
        SECRET
    );
    // Walks see the links but never go through them.
    for script in [
        "grep -r TOP .",
        "grep -rl TOP /app",
        "find . -name secret",
        "ls -R",
        "du -a .",
        "cat *",
    ] {
        let o = s.run(script);
        s.assert_no_host_paths(&o);
    }
    assert_eq!(
        s.ok("find . -type l | sort"),
        "./dangling\n./good\n./link\n./relative\n./secret_link\n"
    );
    // `ls -l` shows the links in the mount and cannot look through those that lead out.
    let o = s.run("ls -l");
    s.assert_no_host_paths(&o);
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(listed.contains("good -> inner"), "{listed}");
    let o = s.run("ls -l relative");
    s.assert_no_host_paths(&o);
    // Links inside the mount work.
    assert_eq!(
        s.ok("cat good/ok.txt; cd good; pwd; cd /app"),
        "fine\n/app/good\n"
    );
    assert_eq!(s.ok("realpath good/ok.txt"), "/app/inner/ok.txt\n");
    // Removing a link removes the link, never its target.
    s.ok("rm link secret_link dangling; rm -rf relative");
    assert!(!s.exists("link") && !s.exists("relative"));
    assert!(s.outside.path().join("secret").exists());
    // rm -r of a tree holding a link out leaves the outside alone.
    s.write("tree/f", "x");
    symlink(s.outside.path(), a.join("tree/out")).unwrap();
    s.ok("rm -rf tree");
    assert!(!s.exists("tree"));
    assert_eq!(
        fs::read_to_string(s.outside.path().join("secret")).unwrap(),
        SECRET
    );
    // Copying a tree with a link never copies what it points to (WASI refuses to make a link
    // to an absolute target, so that link is not copied at all).
    s.write("t2/f", "x");
    symlink(s.outside.path(), a.join("t2/out")).unwrap();
    let o = s.run("cp -r t2 t3");
    s.assert_no_host_paths(&o);
    assert_eq!(s.read("t3/f"), "x");
    assert!(fs::symlink_metadata(a.join("t3/out")).map_or(true, |m| m.file_type().is_symlink()));
    let o = s.run("cat t3/out/secret");
    s.assert_no_host_paths(&o);
}

/// A symlink in the middle of a path (`sub/out/...` with `out -> ../../<outside>`, and
/// `sub/up -> ../../../../../../..`) is refused by every command that would go through it,
/// and walks over the tree never enter it.
#[test]
fn confinement_refuses_links_in_the_middle_of_a_path() {
    let mut s = Sandbox::new();
    let a = s.app.path().to_path_buf();
    let secret_mode = s.secret_mode();
    let outside_name = s
        .outside
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    s.write("a.txt", "a\n");
    s.write("d/f", "f\n");
    fs::create_dir(a.join("sub")).unwrap();
    symlink(format!("../../{outside_name}"), a.join("sub/out")).unwrap();
    symlink("../../../../../../..", a.join("sub/up")).unwrap();
    for script in [
        "cat sub/out/secret",
        "head sub/up/etc/passwd",
        "cat < sub/out/secret",
        "wc -c < sub/out/secret",
        "echo pwned > sub/out/new",
        "echo pwned >> sub/out/secret",
        "mkdir -p sub/out/x/y",
        "mkdir sub/out/x",
        "touch sub/out/t",
        "cp sub/out/secret copy",
        "cp a.txt sub/out/",
        "cp a.txt sub/out/new",
        "cp -r sub/out/ copy2",
        "cp -r d sub/out/d",
        "mv sub/out/secret stolen",
        "mv a.txt sub/out/new",
        "rm sub/out/secret",
        "rm -rf sub/out/secret",
        "rm -rf sub/up/tmp",
        "rmdir sub/up/tmp",
        "ls sub/out/",
        "ls -R sub/up/tmp",
        "find sub/up/tmp -name x",
        "find sub/out/x",
        "grep -r TOP sub/out/",
        "grep TOP sub/out/secret",
        "du -s sub/out/",
        "chmod 777 sub/out/secret",
        "sed -i s/TOP/x/ sub/out/secret",
        "tee sub/out/t2 < /dev/null",
        "sort -o sub/out/s a.txt",
        "python sub/out/secret",
        "cd sub/out",
        "realpath -e sub/out/secret",
    ] {
        s.assert_restricted(script);
        s.ok("cd /app");
    }
    s.assert_outside_untouched(secret_mode);
    // Walks see the links and never go through them.
    for script in [
        "ls -R",
        "ls -laR sub",
        "find .",
        "find . -name secret",
        "grep -r TOP .",
        "grep -rl TOP /app",
        "du -a .",
        "chmod -R 777 .",
        "cp -r sub sub2",
        "rm -rf sub2",
        "find . -name 'x*' -delete",
    ] {
        let o = s.run(script);
        s.assert_no_host_paths(&o);
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains("secret"),
            "{script}"
        );
    }
    s.assert_outside_untouched(secret_mode);
    assert_eq!(s.ok("find sub -type l | sort"), "sub/out\nsub/up\n");
    // The links themselves are removed, never what they point to.
    s.ok("rm -r sub");
    assert!(!s.exists("sub"));
    s.assert_outside_untouched(secret_mode);
}

/// Reading or writing a FIFO, a socket or a link to one is refused at once instead of
/// blocking the shell (and the session) until the deadline.
#[test]
fn fifos_and_sockets_are_refused_promptly() {
    let mut s = Sandbox::new();
    let _listener = special_files(s.app.path());
    for script in [
        "cat fifo",
        "cat to_fifo",
        "cat sock",
        "head -n 1 fifo",
        "tail fifo",
        "grep x fifo",
        "wc -l fifo",
        "wc -l < fifo",
        "sort fifo",
        "sed s/a/b/ fifo",
        "sh fifo",
        "python fifo",
        "echo x > fifo",
        "echo x >> to_fifo",
        "echo x > sock",
        "tee fifo < /dev/null",
        "cp fifo copy",
        "cp a_file_that_is_missing fifo",
        "touch fifo",
    ] {
        let started = Instant::now();
        let (back, o) = s.run_promptly(script);
        s = back;
        assert_ne!(o.exit_code, 0, "{script}");
        assert!(started.elapsed() < Duration::from_secs(5), "{script}");
    }
    let (back, o) = s.run_promptly("cat fifo; echo x > fifo");
    s = back;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err,
        "cat: fifo: No such device or address\ncat: the sandbox opens no FIFO, socket or device \
         (a read of one could block past the deadline): its commands read regular files\nsh: \
         fifo: No such device or address\n"
    );
    // Walks list them without opening them, and an open beneath a tool is refused in WASI.
    for script in [
        "grep -r x .",
        "ls -l",
        "find . -type f",
        "cp -r . /tmp/copy",
        "tar cf /tmp/all.tar .",
    ] {
        let (back, o) = s.run_promptly(script);
        s = back;
        if script == "ls -l" {
            assert!(String::from_utf8_lossy(&o.stdout).contains("fifo"));
        }
    }
}

/// Hard links inside a mount are the same file: writing through one is allowed, copying one
/// onto the other is refused like coreutils does, and nothing appears outside.
#[test]
fn hard_links_inside_a_mount_stay_inside() {
    let mut s = Sandbox::new();
    let a = s.app.path().to_path_buf();
    let secret_mode = s.secret_mode();
    s.write("orig", "o\n");
    fs::hard_link(a.join("orig"), a.join("hard")).unwrap();
    s.ok("echo more >> hard");
    assert_eq!(s.read("orig"), "o\nmore\n");
    assert_eq!(s.ok("cat hard"), "o\nmore\n");
    assert_eq!(fs::metadata(a.join("orig")).unwrap().nlink(), 2);
    let (_, err, code) = s.sh("cp orig hard");
    assert_eq!(
        (err.as_str(), code),
        ("cp: 'orig' and 'hard' are the same file\n", 1)
    );
    assert_eq!(s.read("orig"), "o\nmore\n");
    s.ok("cp hard /tmp/copy; mv hard moved; rm moved");
    assert_eq!(s.read("orig"), "o\nmore\n");
    assert_eq!(
        fs::read_to_string(s.tmp.path().join("copy")).unwrap(),
        "o\nmore\n"
    );
    s.assert_outside_untouched(secret_mode);
}

#[test]
fn read_only_mounts_refuse_every_write() {
    let mut s = Sandbox::new();
    s.write("a.txt", "a\n");
    assert_eq!(s.ok("cat /data/d.txt; ls /data"), "data line\nd.txt\n");
    for script in [
        "touch /data/x",
        "echo x > /data/x",
        "echo x >> /data/d.txt",
        "rm /data/d.txt",
        "rm -rf /data",
        "rm -rf /data/",
        "mkdir /data/n",
        "cp a.txt /data/",
        "mv /data/d.txt /app/",
        "mv a.txt /data/",
        "sed -i s/data/x/ /data/d.txt",
        "tee /data/t < a.txt",
        "chmod 777 /data/d.txt",
        "rmdir /data",
        "cd /data; touch here",
        "sort -o /data/s a.txt",
        "find /data -delete",
    ] {
        let o = s.run(script);
        assert_ne!(o.exit_code, 0, "{script}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.error, Some(ShellError::PathRestriction(_))),
            "{script}: {err}"
        );
        assert!(
            err.contains("path_restriction: /data is read-only")
                || err.contains("Device or resource busy"),
            "{script}: {err}"
        );
        s.ok("cd /app");
    }
    assert_eq!(
        fs::read_to_string(s.data.path().join("d.txt")).unwrap(),
        "data line\n"
    );
    assert_eq!(fs::read_dir(s.data.path()).unwrap().count(), 1);
    assert_eq!(s.read("a.txt"), "a\n");
}

/// A write under a read-only mount reads as what it is, also where the tool says only what
/// WASI told it ("Operation not permitted").
#[test]
fn writes_under_a_read_only_mount_say_so() {
    let mut s = Sandbox::new();
    for (script, refused) in [
        ("mkdir -p /data/x/y", "/data/x/y"),
        ("mkdir /data/x", "/data/x"),
        ("touch /data/x", "/data/x"),
    ] {
        let o = s.run(script);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.exit_code, 1, "{script}: {err}");
        assert_eq!(o.error, Some(ShellError::PathRestriction(refused.into())));
        assert!(
            err.contains("path_restriction: /data is read-only"),
            "{err}"
        );
        assert!(!err.contains("'/'"), "{err}");
    }
    let (_, err, _) = s.sh("mkdir -p /data/x/y");
    assert_eq!(
        err,
        "mkdir: cannot create directory '/data/x': Operation not permitted\nmkdir: cannot \
         create directory '/data/x/y': path_restriction: /data is read-only\n"
    );
    assert_eq!(fs::read_dir(s.data.path()).unwrap().count(), 1);
}

#[test]
fn rm_rf_never_removes_mounts_or_the_root() {
    let mut s = Sandbox::new();
    s.write("keep/me.txt", "x");
    let o = s.run("rm -rf /");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("dangerous to operate recursively on '/'") && o.exit_code == 1,
        "{err}"
    );
    assert!(err.contains("path_restriction: / is read-only"), "{err}");
    assert_eq!(o.error, Some(ShellError::PathRestriction("/".into())));
    for script in ["rm -rf /app/..", "rm -rf ..", "rm -rf .", "rm -rf /app/."] {
        let (_, err, code) = s.sh(script);
        assert!(
            code == 1
                && (err.contains("refusing")
                    || err.contains("dangerous")
                    || err.contains("path_restriction: / is read-only")),
            "{script}: {err}"
        );
    }
    assert!(s.exists("keep/me.txt"));
    // The mount point stays (WASI cannot remove a preopened directory); what it held goes.
    s.run("rm -rf /app");
    assert!(s.app.path().is_dir());
    assert_eq!(fs::read_dir(s.app.path()).unwrap().count(), 0);
    s.write("again.txt", "x");
    fs::write(s.tmp.path().join("t"), "t").unwrap();
    let o = s.run("rm -rf /*");
    assert_eq!(o.error, Some(ShellError::PathRestriction("/data".into())));
    assert!(s.app.path().is_dir() && s.tmp.path().is_dir());
    assert_eq!(fs::read_dir(s.app.path()).unwrap().count(), 0);
    assert_eq!(fs::read_dir(s.tmp.path()).unwrap().count(), 0);
    assert!(s.data.path().join("d.txt").exists());
    assert!(s.outside.path().join("secret").exists());
    assert_eq!(s.sh("rmdir /app").2, 1);
    let (_, _, code) = s.sh("mkdir x; mv /app /app/x/y; mv /tmp /app/t");
    assert_eq!(code, 1);
    assert!(s.app.path().is_dir() && s.tmp.path().is_dir());
    assert!(!s.exists("x/y") && !s.exists("t"));
    assert_eq!(s.sh("rm -r /app; ls -A /app; pwd").0, "/app\n");
}

#[test]
fn no_host_paths_in_any_output() {
    let mut s = Sandbox::new();
    s.write("f.txt", "x\n");
    for script in [
        "ls -la; ls -laR /",
        "cat nope; cat /app; cat /",
        "cd /app/none",
        "realpath f.txt /app /; env; export",
        "mkdir f.txt; rmdir f.txt; rm -r nope; cp nope x; mv nope x",
        "du -a /; find / | head",
        "grep -r x /; grep x nope",
        "echo x > /app; echo x < nope",
        "python nope.py; node nope.js; sh nope.sh; source nope",
        "ls -l /data /tmp",
    ] {
        let o = s.run(script);
        s.assert_no_host_paths(&o);
    }
}

/// The language's new ways to name a path (loops, substitutions, brace expansion, redirections
/// of compound commands, functions, `eval`) all end in the same confined built-ins.
#[test]
fn compound_commands_and_substitutions_stay_confined() {
    let mut s = Sandbox::new();
    let mode = s.secret_mode();
    for script in [
        "for f in /etc/passwd /etc/hosts; do cat $f; done".to_string(),
        "x=$(cat /etc/passwd); echo \"$x\"".to_string(),
        "echo `cat /etc/shadow`".to_string(),
        "cat /etc/{passwd,hosts}".to_string(),
        "{ cat; } < /etc/passwd".to_string(),
        "while read l; do echo $l; done < /etc/passwd".to_string(),
        "{ echo evil; } > /etc/evil".to_string(),
        "f() { cat \"$1\"; }; f /etc/passwd".to_string(),
        "eval 'cat /etc/passwd'".to_string(),
        "(cd /app/../..; cat etc/passwd)".to_string(),
        "case x in x) cat /root/.ssh/id_rsa;; esac".to_string(),
        "[[ -f /etc/passwd ]] || cat /etc/passwd".to_string(),
        "cat <<EOF > /data/d.txt\noverwrite\nEOF".to_string(),
    ] {
        // The refusal is the outcome's error even when a later command succeeded.
        let o = s.run(&script);
        assert!(
            matches!(o.error, Some(ShellError::PathRestriction(_))),
            "{script}: {:?} {}",
            o.error,
            String::from_utf8_lossy(&o.stderr)
        );
        s.assert_no_host_paths(&o);
    }
    assert_eq!(s.ok("cat /data/d.txt"), "data line\n");
    s.assert_outside_untouched(mode);
}

/// At `/`, above the mounts, a tool starts and relative paths lead into the mounts. `/` itself
/// is no directory to WASI: reading it fails as GNU's ls fails on a directory it may not read
/// (status 2), saying what can be read instead.
#[test]
fn tools_start_at_the_root_but_cannot_read_it() {
    let mut s = Sandbox::new();
    s.write("a.txt", "a\n");
    assert_eq!(
        s.ok("cd /; cat app/a.txt; ls data; mkdir -p app/m/n; ls -d app/m/n; pwd"),
        "a\nd.txt\napp/m/n\n/\n"
    );
    for script in ["cd /; ls", "cd /; ls -l", "ls /", "ls -la /"] {
        let o = s.run(script);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.exit_code, 2, "{script}: {err}");
        assert_eq!(o.error, Some(ShellError::PathRestriction("/".into())));
        assert!(
            err.ends_with(
                "ls: /: path_restriction: no directory to read above the mounts (accessible: \
                 /app, /data, /tmp)\n"
            ),
            "{script}: {err}"
        );
        s.ok("cd /app");
    }
    // A tool that fails in `/` for another reason is not told about `/`.
    let o = s.run("cd /; cat app/nope");
    assert_eq!((o.exit_code, o.error), (1, None));
}

/// A mount point is busy, as Linux says of one: `rmdir` fails, and `rm -r` fails once it has
/// emptied it. `mkdir -p` takes absolute paths (it never makes `/`).
#[test]
fn mount_points_are_busy_and_mkdir_p_takes_absolute_paths() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("mkdir -p /app/x/y /tmp/q/r && touch /tmp/q/r/f && ls -d /app/x/y /tmp/q/r/f"),
        "/app/x/y\n/tmp/q/r/f\n"
    );
    let (_, err, code) = s.sh("rmdir /app");
    assert_eq!(
        (err.as_str(), code),
        ("rmdir: failed to remove '/app': Resource busy\n", 1)
    );
    let (_, err, code) = s.sh("rm -rf /tmp");
    assert_eq!(
        (err.as_str(), code),
        ("rm: cannot remove '/tmp': Resource busy\n", 1)
    );
    assert!(s.tmp.path().is_dir());
    assert_eq!(fs::read_dir(s.tmp.path()).unwrap().count(), 0);
    assert!(s.app.path().join("x/y").is_dir());
}

/// A link WASI does not let the tools read (an absolute target: its text may be a host path)
/// is named where `cp -r` meets it, and the rest of the tree is still copied, as GNU copies
/// what it can and exits 1.
#[test]
fn cp_r_names_a_link_it_cannot_read_and_copies_the_rest() {
    let mut s = Sandbox::new();
    s.write("d/f.txt", "x\n");
    s.write("d/sub/g.txt", "y\n");
    symlink("/etc/passwd", s.app.path().join("d/abs")).unwrap();
    symlink(
        s.outside.path().join("secret"),
        s.app.path().join("d/sub/out"),
    )
    .unwrap();
    symlink("f.txt", s.app.path().join("d/rel")).unwrap();
    let o = s.run("cp -r d e; echo $?; ls -R e");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "1\ne:\nf.txt\nrel\nsub\n\ne/sub:\ng.txt\n",
        "{err}"
    );
    assert!(
        err.contains("cp: cannot open 'd/abs' for reading: permission denied\n")
            && err.contains("cp: cannot open 'd/sub/out' for reading: permission denied\n"),
        "{err}"
    );
    s.assert_no_host_paths(&o);
    assert_eq!(s.read("e/rel"), "x\n");
}

/// `chmod` shows in the WebAssembly tools (their `sandbox.file_mode` asks the host), a mount
/// point keeps the server's private mode, and the bits the jail refuses are named.
#[test]
fn modes_show_in_the_tools_and_mount_points_keep_theirs() {
    use std::os::unix::fs::PermissionsExt;
    let mut s = Sandbox::new();
    let host_mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    fs::set_permissions(s.app.path(), fs::Permissions::from_mode(0o700)).unwrap();
    s.write("run.sh", "echo hi\n");
    s.write("sub/data.txt", "x\n");
    s.ok("chmod +x run.sh && chmod 640 sub/data.txt");
    assert_eq!(
        s.ok("stat -c '%a %A %n' run.sh sub/data.txt . /app"),
        "755 -rwxr-xr-x run.sh\n640 -rw-r----- sub/data.txt\n755 drwxr-xr-x .\n\
         755 drwxr-xr-x /app\n"
    );
    assert_eq!(s.ok("ls -F run.sh sub"), "run.sh*\n\nsub:\ndata.txt\n");
    assert_eq!(s.ok("find . -type f -perm -u+x"), "./run.sh\n");

    // The mount point: said, not changed, and what is beneath it is changed.
    let (out, err, status) = s.sh("chmod -R 777 /app && chmod 700 .");
    assert_eq!((out.as_str(), status), ("", 0), "{err}");
    assert!(
        err.contains("'/app' is a mount point of the sandbox"),
        "{err}"
    );
    assert_eq!(
        host_mode(s.app.path()),
        0o700,
        "the host directory kept its mode"
    );
    assert_eq!(host_mode(&s.app.path().join("sub/data.txt")), 0o777);

    // Set-user-ID and set-group-ID bits: refused by name, the file unchanged.
    let (_, err, status) = s.sh("chmod 4755 run.sh");
    assert_eq!(status, 1);
    assert!(err.contains("set-user-ID or set-group-ID"), "{err}");
    assert_eq!(host_mode(&s.app.path().join("run.sh")), 0o777);
    let (_, err, status) = s.sh("mkdir -m 2755 shared_group");
    assert_eq!(status, 1);
    assert!(err.contains("set-user-ID or set-group-ID"), "{err}");
    assert!(
        !s.app.path().join("shared_group").exists(),
        "refused before it is made"
    );

    // The tools set modes through the host too: a copy keeps its source's bits less the umask,
    // `mkdir -m` and `tar x` set theirs.
    s.ok("chmod 750 run.sh && cp run.sh copy.sh && mkdir -m 700 private");
    s.ok("tar cf t.tar run.sh private && mkdir out && tar xf t.tar -C out");
    assert_eq!(
        s.ok("stat -c '%a %n' copy.sh private out/run.sh out/private"),
        "750 copy.sh\n700 private\n750 out/run.sh\n700 out/private\n"
    );

    // `sandbox.set_file_mode` as a hostile guest would call it: the same rules as chmod, and
    // nothing outside the mounts changes, through a link or otherwise.
    std::os::unix::fs::symlink(
        s.outside.path().join("secret"),
        s.app.path().join("out_link"),
    )
    .unwrap();
    let before = host_mode(&s.outside.path().join("secret"));
    let view = Fs::new(&s.view);
    let errno = |r: std::io::Result<()>| r.unwrap_err().raw_os_error();
    let set = |path: &str, mode: u32| FileModes::set_mode(&view, path, mode);
    assert_eq!(
        errno(set("/app", 0o777)),
        Some(libc_errno::EPERM),
        "a mount point"
    );
    assert_eq!(
        errno(set("/app/run.sh", 0o4755)),
        Some(libc_errno::EPERM),
        "setuid"
    );
    assert_eq!(errno(set("/data/d.txt", 0o777)), Some(libc_errno::EROFS));
    assert_eq!(errno(set("/etc/passwd", 0o777)), Some(libc_errno::EACCES));
    assert_eq!(errno(set("/app/out_link", 0o777)), Some(libc_errno::EACCES));
    assert_eq!(
        errno(set("/app/../../etc", 0o777)),
        Some(libc_errno::EACCES)
    );
    assert_eq!(host_mode(&s.outside.path().join("secret")), before);
    set("/app/run.sh", 0o600).unwrap();
    assert_eq!(host_mode(&s.app.path().join("run.sh")), 0o600);
    assert_eq!(FileModes::mode(&view, "/app/run.sh", true), Some(0o600));
    assert_eq!(
        FileModes::mode(&view, "/app/out_link", true),
        None,
        "a link out"
    );
    assert_eq!(FileModes::mode(&view, "/nowhere", true), None);
}

/// Linux errno values the file-mode calls answer with.
mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const EACCES: i32 = 13;
    pub const EROFS: i32 = 30;
}
