//! The command language: lists, pipes, redirections, here-documents, quoting, variables,
//! globbing, `cd`, syntax errors, scripts and the interpreters; compound commands, functions,
//! substitutions, arithmetic, brace expansion, parameter operations, `[[ ]]`, `read` and
//! `set -e`.

use super::*;

#[test]
fn lists_and_status() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo a; echo b\necho c"), "a\nb\nc\n");
    assert_eq!(
        s.ok("true && echo y; false && echo n; false || echo y2; true || echo n2"),
        "y\ny2\n"
    );
    assert_eq!(s.ok("false && echo a || echo b"), "b\n");
    assert_eq!(s.ok("false; echo $?; true; echo $?"), "1\n0\n");
    assert_eq!(s.ok("! false && echo negated"), "negated\n");
    assert_eq!(s.sh("false").2, 1);
    assert_eq!(s.sh("true; false").2, 1);
    assert_eq!(s.sh("false; true").2, 0);
    assert_eq!(
        s.sh("exit 3; echo never"),
        (String::new(), String::new(), 3)
    );
    assert_eq!(s.ok("sh -c 'exit 4'; echo $?"), "4\n");
    assert_eq!(s.ok(""), "");
    assert_eq!(s.ok("# only a comment\n\n"), "");
    assert_eq!(s.ok("echo a # trailing comment"), "a\n");
    assert_eq!(s.ok("echo a#b"), "a#b\n");
}

#[test]
fn pipes() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo hello | tr a-z A-Z"), "HELLO\n");
    assert_eq!(s.ok("printf 'b\\na\\nc\\n' | sort | head -n 2"), "a\nb\n");
    assert_eq!(s.sh("false | true").2, 0);
    assert_eq!(s.sh("true | false").2, 1);
    // stderr of every stage reaches the outcome; stdout only from the last.
    let (out, err, code) = s.sh("ls /app/nope | echo last");
    assert_eq!(out, "last\n");
    assert!(
        err.contains("ls: cannot access '/app/nope': No such file or directory"),
        "{err}"
    );
    assert_eq!(code, 0);
    assert_eq!(s.ok("ls /app/nope 2>&1 | wc -l"), "1\n");
    assert_eq!(s.ok("echo x |& cat"), "x\n");
    // A pipeline runs like a subshell: its cd and assignments do not stay.
    assert_eq!(
        s.ok("mkdir d; cd d | true; pwd; X=1 | true; echo \"[$X]\""),
        "/app\n[]\n"
    );
}

#[test]
fn redirections() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo hi > f; echo more >> f; cat f"), "hi\nmore\n");
    assert_eq!(s.read("f"), "hi\nmore\n");
    assert_eq!(s.ok("echo new > f; cat < f"), "new\n");
    // A loop's `>>` asks the sandbox once; a file that went between two is made again, with
    // or without output (`: >> f`, bash's way to create one).
    assert_eq!(
        s.ok("for i in 1 2 3; do echo $i >> log; done; cat log"),
        "1\n2\n3\n"
    );
    assert_eq!(s.ok("echo a >> h; rm h; echo b >> h; cat h"), "b\n");
    assert_eq!(
        s.ok(": >> g; rm g; : >> g; [ -f g ] && echo made"),
        "made\n"
    );
    let (out, err, _) = s.sh("ls nope 2> err; cat err");
    assert!(out.contains("No such file or directory") && err.is_empty());
    s.ok("ls nope 2>> err; true");
    assert_eq!(s.read("err").lines().count(), 2);
    s.ok("ls nope f > both 2>&1; true");
    assert!(s.read("both").contains("nope") && s.read("both").contains("f\n"));
    // Order matters: 2>&1 before > keeps stderr on the old stdout.
    let (out, _, _) = s.sh("ls nope 2>&1 > only_out");
    assert!(out.contains("nope"));
    assert_eq!(s.read("only_out"), "");
    s.ok("ls nope f &> amp; true");
    assert!(s.read("amp").contains("nope"));
    s.ok("echo again &>> amp");
    assert!(s.read("amp").ends_with("again\n"));
    let (out, err, _) = s.sh("echo to-err >&2; echo to-err2 1>&2");
    assert_eq!((out.as_str(), err.as_str()), ("", "to-err\nto-err2\n"));
    assert_eq!(
        s.ok("ls nope 2>/dev/null; echo x > /dev/null; cat < /dev/null; echo done"),
        "done\n"
    );
    // There is no /dev in the sandbox: a filter whose one operand is /dev/null reads it as
    // GNU does (nothing), not the pipe before it; `>> /dev/null` and `&> /dev/null` discard.
    assert_eq!(
        s.ok("cat /dev/null; echo in | cat /dev/null; sort -r /dev/null; echo x >> /dev/null; echo y &> /dev/null; echo $?"),
        "0\n"
    );
    assert_eq!(s.ok("> created"), "");
    assert!(s.exists("created"));
    assert_eq!(s.ok("cat < f > g; cat g"), "new\n");
    let (_, err, code) = s.sh("cat < missing; echo $?");
    assert!(err.contains("sh: missing: No such file or directory"));
    assert_eq!(code, 0);
    let (_, err, code) = s.sh("echo x > sub/none");
    assert!(
        err.contains("sh: sub/none: No such file or directory") && code == 1,
        "{err}"
    );
    let (_, err, _) = s.sh("mkdir dir; echo x > dir");
    assert!(err.contains("Is a directory"));
    let (_, err, code) = s.sh("X='a b'; echo x > $X");
    assert!(err.contains("ambiguous redirect") && code == 1);
}

#[test]
fn here_documents() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("N=world\ncat <<EOF\nhello $N\n  \\$N\nEOF\necho after"),
        "hello world\n  $N\nafter\n"
    );
    assert_eq!(
        s.ok("cat <<'EOF' > script.py\nprint(\"$HOME\")\nEOF\ncat script.py"),
        "print(\"$HOME\")\n"
    );
    assert_eq!(s.ok("cat <<-END\n\tindented\n\tEND"), "indented\n");
    assert_eq!(s.ok("tr a-z A-Z <<< \"up $HOME\""), "UP /APP\n");
    assert_eq!(s.ok("cat <<A; cat <<B\n1\nA\n2\nB"), "1\n2\n");
}

#[test]
fn quoting() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo 'a  b' \"c  d\" e\\ \\ f"), "a  b c  d e  f\n");
    assert_eq!(s.ok("echo \"$HOME\" '$HOME' \\$HOME"), "/app $HOME $HOME\n");
    assert_eq!(s.ok("echo \"a\\\"b\" 'it'\\''s'"), "a\"b it's\n");
    assert_eq!(s.ok("printf '[%s]' '' \"\" x; echo"), "[][][x]\n");
    assert_eq!(s.ok("echo \"multi\nline\""), "multi\nline\n");
    assert_eq!(s.ok("echo a\\\nb"), "ab\n");
    assert_eq!(s.ok("echo \"\\n\" '\\n'"), "\\n \\n\n");
    assert_eq!(s.ok("echo ';' '|' '&&' \"#\""), "; | && #\n");
    let o = s.run("echo 'unterminated");
    assert_eq!(o.exit_code, 2);
    assert!(matches!(o.error, Some(ShellError::Syntax(_))));
}

#[test]
fn variables() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("A=1; echo $A ${A}x \"${B:-def}\" ${B-unset} ${A:-no}"),
        "1 1x def unset 1\n"
    );
    assert_eq!(s.ok("echo $A"), "1\n", "variables persist between calls");
    assert_eq!(s.state.vars.get("A").map(String::as_str), Some("1"));
    assert_eq!(s.ok("A=2 printenv A; echo $A"), "2\n1\n");
    assert_eq!(s.ok("export B=3 C; echo $B"), "3\n");
    assert_eq!(s.ok("unset A; echo \"[$A]\""), "[]\n");
    assert_eq!(
        s.ok("X='a  b'; printf '<%s>' $X \"$X\"; echo"),
        "<a><b><a  b>\n"
    );
    assert_eq!(s.ok("E=; printf '<%s>' $E \"$E\"; echo"), "<>\n");
    assert_eq!(s.ok("echo ~ ~/x '~'"), "/app /app/x ~\n");
    assert_eq!(s.ok("echo $HOME $LANG $PATH"), "/app C.UTF-8 /bin\n");
    assert!(s.ok("env").contains("LANG=C.UTF-8\n"));
    assert!(s.ok("export").contains("declare -x B=\"3\"\n"));
    assert_eq!(s.ok("V=x; sh -c 'echo $V; V=y'; echo $V"), "x\nx\n");
    assert_eq!(s.ok("sh -c 'echo $0 $1 $#' n a b"), "n a 2\n");
    assert_eq!(s.ok("A=axa; echo ${A/x/y}"), "aya\n");
}

#[test]
fn globbing() {
    let mut s = Sandbox::new();
    for f in ["a.txt", "b.txt", "c.py", ".hidden.txt", "sub/x.txt"] {
        s.write(f, "");
    }
    assert_eq!(s.ok("echo *.txt"), "a.txt b.txt\n");
    assert_eq!(
        s.ok("echo ?.py [ab].txt [!a].txt"),
        "c.py a.txt b.txt b.txt\n"
    );
    assert_eq!(s.ok("echo *.zz '*.txt' \"*\""), "*.zz *.txt *\n");
    assert_eq!(
        s.ok("echo */*.txt /app/s*/x.*"),
        "sub/x.txt /app/sub/x.txt\n"
    );
    assert_eq!(s.ok("echo .*.txt"), ".hidden.txt\n");
    assert_eq!(s.ok("echo /*"), "/app /data /tmp\n");
    assert_eq!(s.ok("echo /etc/* /proc/*"), "/etc/* /proc/*\n");
    assert_eq!(s.ok("cd sub; echo ../*.py"), "../c.py\n");
    assert_eq!(s.ok("rm /app/*.txt; ls /app"), "c.py\nsub\n");
}

#[test]
fn cd_persists() {
    let mut s = Sandbox::new();
    s.write("sub/deeper/f", "content\n");
    assert_eq!(s.ok("cd sub; pwd"), "/app/sub\n");
    assert_eq!(s.ok("pwd; cat deeper/f"), "/app/sub\ncontent\n");
    assert_eq!(s.state.cwd, "/app/sub");
    assert_eq!(
        s.ok("cd deeper && cat f && cd .. && pwd"),
        "content\n/app/sub\n"
    );
    assert_eq!(
        s.ok("cd /tmp; echo $PWD $OLDPWD; cd -"),
        "/tmp /app/sub\n/app/sub\n"
    );
    assert_eq!(s.ok("cd; pwd"), "/app\n");
    assert_eq!(s.ok("cd /; echo *; cd /data; pwd"), "app data tmp\n/data\n");
    let (_, err, code) = s.sh("cd nope");
    assert_eq!(
        (err.as_str(), code),
        ("cd: nope: No such file or directory\n", 1)
    );
    let (_, err, code) = s.sh("cd /app/sub/deeper/f");
    assert_eq!(
        (err.as_str(), code),
        ("cd: /app/sub/deeper/f: Not a directory\n", 1)
    );
    assert_eq!(s.ok("pwd"), "/data\n");
}

#[test]
fn syntax_errors_run_nothing() {
    let mut s = Sandbox::new();
    for script in [
        "echo before; if true; then echo x",
        "echo before; for i in 1 2; do echo $i",
        "echo before\nwhile true; do :; done; done",
        "echo before; echo $(ls",
        "echo before; echo `ls",
        "echo before; (cd /tmp",
        "echo before; sleep 1 &;",
        "echo before; f() ls",
        "echo before |",
        "echo before; case x in x) ;; ",
        "echo before; tee >(wc -l",
        "echo before; select x in a; do :; done",
        "echo before; a=(1 2",
        "echo before; echo ${!a[0]}",
        "echo before; coproc cat",
    ] {
        let o = s.run(script);
        assert_eq!(o.exit_code, EXIT_SYNTAX, "{script}");
        assert!(o.stdout.is_empty(), "{script} ran something");
        assert!(matches!(o.error, Some(ShellError::Syntax(_))), "{script}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("sh: "), "{err}");
    }
    let err = String::from_utf8(s.run("select x in a; do :; done").stderr).unwrap();
    assert!(
        err.contains("not supported; use python -c or node -e"),
        "{err}"
    );
    assert_eq!(ShellError::Syntax("x".into()).kind(), "syntax_error");
}

#[test]
fn unknown_commands_exit_127_with_the_list() {
    let mut s = Sandbox::new();
    let (out, err, code) = s.sh("frobnicate --now");
    assert_eq!(code, 127);
    assert!(out.is_empty());
    assert!(err.starts_with("frobnicate: command not found\n"), "{err}");
    for name in ["cat", "grep", "python", "sed", "xargs"] {
        assert!(err.contains(name), "{name} missing from {err}");
    }
    assert_eq!(s.ok("frobnicate 2>/dev/null; echo $?"), "127\n");
    assert_eq!(
        s.ok("/bin/echo via-path; /usr/bin/env printenv HOME"),
        "via-path\n/app\n"
    );
    assert_eq!(s.sh("/opt/bin/echo x").2, 127);
}

#[test]
fn scripts_and_nesting() {
    let mut s = Sandbox::new();
    s.write("s.sh", "echo script $1 $#\ncd /tmp\nX=in\n");
    assert_eq!(
        s.ok("sh s.sh a b; pwd; echo \"[$X]\""),
        "script a 2\n/app\n[]\n"
    );
    assert_eq!(s.ok("bash -c 'echo $0' zero"), "zero\n");
    assert_eq!(
        s.ok("source s.sh q; pwd; echo $X; cd /app"),
        "script q 1\n/tmp\nin\n"
    );
    assert_eq!(s.ok(". /app/s.sh; cd /app"), "script 0\n");
    // As in bash: a file without an execute bit is refused, and runs once it has one.
    let (_, err, code) = s.sh("./s.sh z");
    assert_eq!((err.as_str(), code), ("./s.sh: Permission denied\n", 126));
    assert_eq!(s.ok("chmod +x s.sh && ./s.sh z"), "script z 1\n");
    assert_eq!(s.ok("echo 'echo from stdin' | sh"), "from stdin\n");
    assert_eq!(s.ok("echo 'cat' > c.sh; echo piped | sh c.sh"), "");
    s.write("loop.sh", "sh /app/loop.sh\n");
    let (_, err, code) = s.sh("sh loop.sh");
    assert!(err.contains("nested too deeply"), "{err}");
    assert_eq!(code, 126);
    let (_, err, code) = s.sh("sh -c 'if'");
    assert!(err.contains("unexpected end of file") && code == 2, "{err}");
    let (_, err, code) = s.sh("./missing.sh");
    assert!(err.contains("No such file") && code == 127, "{err}");
}

#[test]
fn interpreters_get_code_argv_and_stdin() {
    let mut s = Sandbox::new();
    s.write("prog.py", "import sys\nprint(sys.argv)\n");
    s.write("sub/app.js", "console.log(1)\n");
    assert_eq!(
        s.ok("python -c 'print(1)' a b"),
        "python ran 1 line(s), stdin 0 byte(s)\n"
    );
    assert_eq!(
        s.interp.calls[0],
        Call {
            language: Language::Python,
            code: "print(1)".into(),
            argv: vec!["-c".into(), "a".into(), "b".into()],
            stdin: Vec::new(),
        }
    );
    s.ok("cd sub; echo data | python3 ../prog.py x");
    let c = &s.interp.calls[1];
    assert_eq!(c.code, "import sys\nprint(sys.argv)\n");
    assert_eq!(c.argv, ["/app/prog.py", "x"]);
    assert_eq!(c.stdin, b"data\n");
    s.ok("node app.js 1; qjs -e 'console.log(2)'; cd /app");
    assert_eq!(s.interp.calls[2].language, Language::JavaScript);
    assert_eq!(s.interp.calls[2].argv, ["/app/sub/app.js", "1"]);
    assert_eq!(s.interp.calls[3].code, "console.log(2)");
    s.ok("echo 'print(3)' | python");
    assert_eq!(s.interp.calls[4].code, "print(3)\n");
    assert!(s.interp.calls[4].stdin.is_empty());
    s.ok("python -m json.tool x.json >/dev/null");
    assert!(s.interp.calls[5].code.contains("run_module(\"json.tool\""));
    assert_eq!(s.interp.calls[5].argv, ["json.tool", "x.json"]);
    s.write("run", "#!/usr/bin/env python3\nprint(1)\n");
    s.ok("chmod 755 run && ./run arg");
    assert_eq!(s.interp.calls[6].argv, ["/app/run", "arg"]);
    // Failures: exit code and stderr pass through.
    let (_, err, code) = s.sh("python -c 'fail()'");
    assert_eq!((err.as_str(), code), ("Traceback: boom\n", 1));
    let (_, err, code) = s.sh("python missing.py");
    assert!(
        err.contains("python: missing.py: No such file or directory") && code == 2,
        "{err}"
    );
    let o = s.run("python /etc/passwd");
    assert_eq!(
        o.error,
        Some(ShellError::PathRestriction("/etc/passwd".into()))
    );
    let calls = s.interp.calls.len();
    assert_eq!(s.sh("python").2, 2);
    assert_eq!(s.interp.calls.len(), calls);
}

#[test]
fn pip_installs_through_the_worker() {
    let mut s = Sandbox::new();
    s.write(
        "requirements.txt",
        "# deps\nrequests==2.31\n\n-e .\nnumpy  # fast\n",
    );
    assert_eq!(
        s.ok("pip install -q pandas==2.1 tqdm"),
        "Successfully installed pandas==2.1 tqdm\n"
    );
    s.ok("pip3 install -r requirements.txt");
    s.ok("python -m pip install --upgrade rich");
    assert_eq!(
        s.interp.installs,
        vec![
            vec!["pandas==2.1".to_string(), "tqdm".into()],
            vec!["requests==2.31".to_string(), "numpy".into()],
            vec!["rich".to_string()],
        ]
    );
    assert_eq!(s.sh("pip install").2, 1);
    assert_eq!(s.sh("pip uninstall x").2, 1);
    s.ok("pip list");
    assert!(
        s.interp
            .calls
            .last()
            .unwrap()
            .code
            .contains("importlib.metadata")
    );
}

#[test]
fn default_state() {
    let st = ShellState::default();
    assert_eq!(st.cwd, "/app");
    assert_eq!(st.vars.get("HOME").map(String::as_str), Some("/app"));
    assert_eq!(st.vars.get("PWD").map(String::as_str), Some("/app"));
    assert_eq!(st.vars.get("USER").map(String::as_str), Some("somebody"));
    assert_eq!(st.vars.len(), 7);
}

#[test]
fn if_and_loops() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("if false; then echo a; elif true; then echo b; else echo c; fi"),
        "b\n"
    );
    assert_eq!(s.ok("if false; then echo a; fi; echo $?"), "0\n");
    assert_eq!(s.ok("if ! false\nthen\n  echo neg\nfi"), "neg\n");
    assert_eq!(s.ok("for i in 1 2 3; do echo -n $i; done; echo"), "123\n");
    assert_eq!(
        s.ok("for f in a 'b c'; do echo \"[$f]\"; done"),
        "[a]\n[b c]\n"
    );
    assert_eq!(s.ok("set -- x y; for a; do echo $a; done"), "x\ny\n");
    assert_eq!(s.ok("for i in; do echo never; done; echo ok"), "ok\n");
    assert_eq!(
        s.ok("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done"),
        "0\n1\n2\n"
    );
    assert_eq!(
        s.ok("n=3; until [ $n -eq 0 ]; do n=$((n-1)); done; echo $n"),
        "0\n"
    );
    assert_eq!(
        s.ok("for ((i=0; i<3; i++)); do echo -n $i; done; echo"),
        "012\n"
    );
    assert_eq!(s.ok("for ((;;)); do break; done; echo out"), "out\n");
    assert_eq!(
        s.ok("for i in 1 2 3 4 5; do [ $i = 2 ] && continue; [ $i = 4 ] && break; echo $i; done"),
        "1\n3\n"
    );
    assert_eq!(
        s.ok("for i in a b; do for j in 1 2; do [ $j = 2 ] && continue 2; echo $i$j; done; done"),
        "a1\nb1\n"
    );
    assert_eq!(
        s.ok("for i in a b; do while true; do break 2; done; echo no; done; echo $i"),
        "a\n"
    );
    let (_, err, code) = s.sh("break; echo $?");
    assert!(err.contains("only meaningful in a") && code == 0, "{err}");
    assert_eq!(s.ok("for i in 1 2; do echo $i; done | wc -l"), "2\n");
    s.write("nums", "3\n1\n2\n");
    assert_eq!(
        s.ok("while read -r n; do echo \"<$n>\"; done < nums"),
        "<3>\n<1>\n<2>\n"
    );
    assert_eq!(
        s.ok("sort nums | while read n; do echo -n $n; done; echo"),
        "123\n"
    );
    assert_eq!(
        s.ok("for f in *; do echo $f; done > list; cat list"),
        "list\nnums\n"
    );
}

#[test]
fn case_groups_and_subshells() {
    let mut s = Sandbox::new();
    let case = "for x in apple b.txt 42 Other; do case $x in\n  a*) echo fruit;;\n  *.txt|*.md) echo doc ;;\n  [0-9]*) echo num ;;\n  *) echo other;;\nesac; done";
    assert_eq!(s.ok(case), "fruit\ndoc\nnum\nother\n");
    assert_eq!(s.ok("case x in (y) echo y;; esac; echo $?"), "0\n");
    assert_eq!(
        s.ok("case a in a) echo 1;& b) echo 2;; c) echo 3;; esac"),
        "1\n2\n"
    );
    assert_eq!(
        s.ok("case ab in a*) echo 1;;& *b) echo 2;; *) echo 3;; esac"),
        "1\n2\n"
    );
    assert_eq!(s.ok("p='*.c'; case x.c in $p) echo glob;; esac"), "glob\n");
    assert_eq!(
        s.ok("case x.c in '*.c') echo no;; *) echo quoted;; esac"),
        "quoted\n"
    );
    assert_eq!(s.ok("{ echo a; echo b; } | wc -l"), "2\n");
    assert_eq!(
        s.ok("{ echo in; echo err >&2; } > out 2>&1; cat out"),
        "in\nerr\n"
    );
    assert_eq!(
        s.ok("X=1; (X=2; cd /tmp; echo $X $PWD); echo $X $PWD"),
        "2 /tmp\n1 /app\n"
    );
    assert_eq!(s.ok("(exit 3); echo $?"), "3\n");
    assert_eq!(
        s.ok("(f() { echo inner; }; f); f 2>/dev/null; echo $?"),
        "inner\n127\n"
    );
    assert_eq!(s.ok("(set -e; false; echo no); echo after"), "after\n");
    assert_eq!(s.ok("if (( 2 > 1 )); then echo yes; fi"), "yes\n");
    assert_eq!(
        s.ok("{ read a; read b; } <<EOF\nx\ny\nEOF\necho $b$a"),
        "yx\n"
    );
}

#[test]
fn functions() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("greet() { echo \"hi $1 ($#)\"; }; greet bob x; greet"),
        "hi bob (2)\nhi  (0)\n"
    );
    assert_eq!(s.ok("function f { return 3; echo no; }; f; echo $?"), "3\n");
    assert_eq!(
        s.ok("function g() {\n  echo \"$@\"\n}\ng a 'b c'"),
        "a b c\n"
    );
    assert_eq!(
        s.ok("x=global; f() { local x=local; echo $x; }; f; echo $x"),
        "local\nglobal\n"
    );
    assert_eq!(
        s.ok("f() { local v; v=$1; [ $v -le 1 ] && { echo 1; return; }; echo $(( v * $(f $((v-1))) )); }; f 5"),
        "120\n"
    );
    assert_eq!(
        s.ok("set -- a b; f() { shift; echo $1; }; f x y; echo $1"),
        "y\na\n"
    );
    assert_eq!(s.ok("f() { echo body; } > fout; f; cat fout"), "body\n");
    let (_, err, code) = s.sh("return 1");
    assert!(err.contains("return") && code == 2, "{err}");
    let (_, err, code) = s.sh("local x=1");
    assert!(err.contains("function") && code == 1, "{err}");
    assert_eq!(
        s.ok("ls() { echo mine; }; ls; command ls -d /data; type ls if | head -n 2"),
        "mine\n/data\nls is a function\nif is a shell keyword\n"
    );
    assert_eq!(
        s.ok("f() { :; }; command -v f echo || echo none"),
        "f\necho\n"
    );
    assert_eq!(s.sh("command -v no-such-thing").2, 1);
    assert_eq!(
        s.ok("declare d=1; f() { declare d=2; typeset -g g=3; echo $d; }; f; echo $d $g"),
        "2\n1 3\n"
    );
    // Associative arrays end the script: what follows would use the name as an indexed array
    // (`m[a]=1` setting `m[0]`).
    for arrays in [
        "declare -A map; map[a]=1; echo ${map[a]}",
        "typeset -A list; echo after",
        "f() { local -A x; echo in; }; f; echo after",
        "if declare -A m; then echo yes; else echo no; fi",
    ] {
        let (out, err, code) = s.sh(arrays);
        assert!(
            code == 2 && out.is_empty() && err.contains("associative arrays are not supported"),
            "{arrays}: {out} {err}"
        );
    }
    for options in ["mapfile -u 3 lines", "readarray -O 1 x", "mapfile -C f x"] {
        let (_, err, code) = s.sh(options);
        assert!(
            code == 2 && err.contains("not supported"),
            "{options}: {err}"
        );
    }
    // Functions last for the call, variables for the session.
    assert_eq!(s.sh("f").2, 127);
    s.write(
        "lib.sh",
        "helper() { echo helped; }\nreturn 4\necho never\n",
    );
    assert_eq!(s.ok("source lib.sh; echo $?; helper"), "4\nhelped\n");
}

#[test]
fn substitutions() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo $(echo hi)"), "hi\n");
    assert_eq!(s.ok("x=$(printf 'a\\n\\n\\n'); echo \"[$x]\""), "[a]\n");
    assert_eq!(
        s.ok("echo `echo back` $(echo $(echo nested))"),
        "back nested\n"
    );
    assert_eq!(s.ok("echo \"`echo \\`echo deep\\``\""), "deep\n");
    assert_eq!(
        s.ok("printf '<%s>' $(echo a b) \"$(echo a b)\"; echo"),
        "<a><b><a b>\n"
    );
    assert_eq!(s.ok("x=$(false); echo $?; y=$(true); echo $?"), "1\n0\n");
    assert_eq!(
        s.ok("cd /tmp; d=$(cd /app; pwd); echo $d $PWD; cd /app"),
        "/app /tmp\n"
    );
    assert_eq!(s.ok("n=$(seq 1 5 | wc -l); echo $((n * 2))"), "10\n");
    assert_eq!(s.ok("echo $(echo a; exit 3; echo b) $?"), "a 3\n");
    assert_eq!(
        s.ok("v=3; cat <<EOF\n$v $((v+1)) $(echo sub) ${v:-x} \\$v \\\\ \\`\nEOF"),
        "3 4 sub 3 $v \\ `\n"
    );
    assert_eq!(
        s.ok("cat <<'EOF'\n$v $((1+1)) $(echo)\nEOF"),
        "$v $((1+1)) $(echo)\n"
    );
    assert_eq!(
        s.ok("echo \"$(echo \"quoted inside\")\""),
        "quoted inside\n"
    );
}

#[test]
fn arithmetic() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("echo $((1 + 2 * 3)) $(( (1+2) * 3 )) $((7 % 3)) $((2**10))"),
        "7 9 1 1024\n"
    );
    assert_eq!(
        s.ok("a=5; echo $((a + 1)) $(($a * 2)) $((a > 3 ? 10 : 20))"),
        "6 10 10\n"
    );
    assert_eq!(
        s.ok("i=0; ((i++)); ((i += 5)); echo $i; ((i == 6)) && echo six"),
        "6\nsix\n"
    );
    assert_eq!(s.ok("((0)); echo $?; (( 1 )); echo $?"), "1\n0\n");
    assert_eq!(
        s.ok("echo $((0x10 + 010)) $((-7 / 2)) $((1 << 3))"),
        "24 -3 8\n"
    );
    assert_eq!(s.ok("let x=4 y=x*2; echo $x $y"), "4 8\n");
    assert_eq!(
        s.ok("echo $((9223372036854775807 + 1))"),
        "-9223372036854775808\n"
    );
    let (out, err, code) = s.sh("echo a; echo $((1 / 0)); echo never");
    assert!(
        err.contains("division by 0") && out == "a\n" && code == 1,
        "{err}"
    );
    let (_, err, code) = s.sh("((1/0)); echo after $?");
    assert!(err.contains("division by 0") && code == 0, "{err}");
}

#[test]
fn brace_expansion() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo {a,b,c}"), "a b c\n");
    assert_eq!(
        s.ok("echo x{a,b}y {1..3} {a..e} {01..03} {1..10..3} {5..1} {c..a}"),
        "xay xby 1 2 3 a b c d e 01 02 03 1 4 7 10 5 4 3 2 1 c b a\n"
    );
    assert_eq!(s.ok("echo {a,b}{1,2} {a,{b,c}d}"), "a1 a2 b1 b2 a bd cd\n");
    assert_eq!(
        s.ok("echo {} {x} '{a,b}' \"{1..2}\" {a,b {,z}"),
        "{} {x} {a,b} {1..2} {a,b z\n"
    );
    assert_eq!(s.ok("A={a,b}; echo $A"), "{a,b}\n");
    assert_eq!(s.ok("mkdir -p build/{js,css} && ls build"), "css\njs\n");
    let (_, err, code) = s.sh("echo {1..1000000} | wc -c");
    assert!(err.contains("brace expansion") && code == 0, "{err}");
    let (_, err, code) = s.sh(&format!("echo {}", "{a,b}".repeat(20)));
    assert!(err.contains("more than 100000 words") && code == 1, "{err}");
}

#[test]
fn parameter_operations() {
    let mut s = Sandbox::new();
    s.ok("p=/app/src/main.tar.gz");
    assert_eq!(
        s.ok("echo ${#p} ${p#*/} ${p##*/} ${p%.*} ${p%%.*}"),
        "20 app/src/main.tar.gz main.tar.gz /app/src/main.tar /app/src/main\n"
    );
    assert_eq!(
        s.ok("echo ${p/a/A} ${p//a/A} ${p/#\\/app/X} ${p/%gz/bz2}"),
        "/App/src/main.tar.gz /App/src/mAin.tAr.gz X/src/main.tar.gz /app/src/main.tar.bz2\n"
    );
    assert_eq!(
        s.ok("echo ${p:5} ${p:5:3} ${p: -2} ${p:1:-3}"),
        "src/main.tar.gz src gz app/src/main.tar\n"
    );
    assert_eq!(
        s.ok("unset u; echo ${u:-d} ${u-e} ${u:+no}x; echo ${u:=set} $u"),
        "d e x\nset set\n"
    );
    assert_eq!(
        s.ok("e=; echo ${e:-d} [${e-d}] ${e:+alt} ${p:+alt}"),
        "d [] alt\n"
    );
    // bash ends with 127 there (and with 1 in a subshell).
    let (out, err, code) = s.sh("echo ${missing:?is required}; echo never");
    assert!(
        out.is_empty() && err.contains("missing: is required") && code == 127,
        "{err}"
    );
    assert_eq!(
        s.ok("set -- a b c; echo $# $@ $* ${@:2} \"$*\""),
        "3 a b c a b c b c a b c\n"
    );
    assert_eq!(s.ok("echo $0; x='*.none'; echo ${x//./_}"), "sh\n*_none\n");
}

#[test]
fn read_and_eval() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("read a b <<< 'one two three'; echo \"$a|$b\""),
        "one|two three\n"
    );
    assert_eq!(s.ok("IFS=: read -r x y <<< 'k:v:w'; echo $x $y"), "k v:w\n");
    assert_eq!(s.ok("read -r line <<< 'a\\b'; echo \"$line\""), "a\\b\n");
    assert_eq!(s.ok("read line <<< 'a\\b'; echo \"$line\""), "ab\n");
    assert_eq!(s.ok("printf 'x' | { read v; echo $? $v; }"), "1 x\n");
    assert_eq!(s.ok("read v < /dev/null; echo $?"), "1\n");
    assert_eq!(
        s.ok("echo hi | read -p 'prompt: ' REPLY; read; echo [$REPLY]"),
        "[]\n"
    );
    assert_eq!(
        s.ok("cmd='echo evaluated'; eval $cmd; eval 'x=5'; echo $x"),
        "evaluated\n5\n"
    );
    assert_eq!(s.ok(": ignored args; echo $?"), "0\n");
    assert_eq!(
        s.ok("read -a arr <<< ' a  b '; echo ${#arr[@]} $arr"),
        "2 a\n"
    );
}

#[test]
fn conditional_expressions() {
    let mut s = Sandbox::new();
    s.write("f.txt", "x");
    for (expr, want) in [
        ("-f f.txt && -n x", 0),
        ("abc == a*", 0),
        ("abc == 'a*'", 1),
        ("abc != b*", 0),
        ("a < b", 0),
        ("! -d f.txt", 0),
        ("( -z '' || 1 -eq 2 ) && 3 -gt 2", 0),
        ("ab12 =~ ^[a-z]+([0-9]+)$", 0),
        ("x.y =~ x.y", 0),
        ("xzy =~ 'x.y'", 1),
        ("-v HOME", 0),
        ("-e nope", 1),
        ("''", 1),
    ] {
        assert_eq!(s.sh(&format!("[[ {expr} ]]")).2, want, "[[ {expr} ]]");
    }
    assert_eq!(
        s.ok("x='a b'; [[ $x == 'a b' ]] && echo nosplit"),
        "nosplit\n"
    );
    assert_eq!(s.sh("[[ a -lt b ]]").2, 2);
    assert_eq!(s.sh("[[ a =~ ( ]]").2, 2);
}

#[test]
fn errexit_follows_posix() {
    let mut s = Sandbox::new();
    assert_eq!(
        s.ok("set -e; if false; then :; fi; while false; do :; done; false || true; ! true; echo alive"),
        "alive\n"
    );
    assert_eq!(s.sh("set -e; f() { false; echo no; }; f; echo no").0, "");
    assert_eq!(
        s.ok("set -e; f() { false; echo in-or; }; f || echo rescued"),
        "in-or\n"
    );
    assert_eq!(
        s.sh("set -e; { false; echo no; }; echo no"),
        (String::new(), String::new(), 1)
    );
    assert_eq!(s.sh("set -e; for i in 1; do false; done; echo no").2, 1);
    assert_eq!(s.sh("set -e; x=$(false); echo no").2, 1);
    assert_eq!(
        s.ok("set -e; if f() { false; }; f; then echo t; else echo e; fi"),
        "e\n"
    );
}

#[test]
fn agrees_with_bash_on_edge_cases() {
    let mut s = Sandbox::new();
    let mut differ = Vec::new();
    for (script, want) in [
        (
            "x=b; echo $(case $x in a) echo A;; b) echo B;; esac)",
            "B\n",
        ),
        (
            "unset x; echo \"${x:-a b}\" ${x:-\"c d\"} ${x:-e f}",
            "a b c d e f\n",
        ),
        ("f() { echo \"[$1]\"; }; f \"${u:-a b}\"", "[a b]\n"),
        (
            "echo ${#}; set -- \"a b\" c; echo ${#} \"${#1}\"",
            "0\n2 3\n",
        ),
        (
            "v=\"  lead  trail  \"; echo \"[${v}]\" [$v]",
            "[  lead  trail  ] [ lead trail ]\n",
        ),
        (
            "IFS=,; x=\"a,b,,c\"; for i in $x; do echo \"<$i>\"; done; unset IFS",
            "<a>\n<b>\n<>\n<c>\n",
        ),
        ("echo $(( $(echo 3) + 4 ))", "7\n"),
        ("a=1; b=$((a++ + a)); echo $a $b", "2 3\n"),
        ("echo \"$(echo \"a\nb\")\"", "a\nb\n"),
        ("x=5; echo $((x<3?1:x<6?2:3))", "2\n"),
        ("arr=\"one two\"; set -- $arr; echo $2", "two\n"),
        ("unset x; echo ${x:-$(echo sub)}", "sub\n"),
        (
            "s=\"a.b.c\"; echo ${s//./-} ${s#*.} ${s%.*}",
            "a-b-c b.c a.b\n",
        ),
        ("printf \"%s\\n\" {a,b}-{1,2}", "a-1\na-2\nb-1\nb-2\n"),
        ("x=3; while (( x-- > 0 )); do echo $x; done", "2\n1\n0\n"),
        ("echo $((  10 / 3 )) $(( -10 % 3 ))", "3 -1\n"),
        ("f() { local IFS=:; echo \"$*\"; }; f a b c", "a:b:c\n"),
        ("cat <<EOF | tr a-z A-Z\nhello $((6*7))\nEOF", "HELLO 42\n"),
        (
            "echo a && { echo b; false; } && echo c || echo d",
            "a\nb\nd\n",
        ),
        ("f() { return; }; false; f; echo $?", "1\n"),
        ("case \"\" in \"\") echo empty;; esac", "empty\n"),
        ("v=abc; echo ${v:0:1}${v:1}", "abc\n"),
        ("unset v; echo ${v:-`echo bt`}", "bt\n"),
        (
            "n=0; for f in /nonexist/*; do n=$((n+1)); done; echo $n",
            "1\n",
        ),
        ("x=1; { x=2; }; echo $x", "2\n"),
        ("echo $(( 2#1010 + 16#ff ))", "265\n"),
        ("x=ab; x+=cd; x+=\"$x\"; echo $x", "abcdabcd\n"),
        (
            "f() { local OPTIND=1 o; while getopts \"ab:c\" o; do case $o in a) echo A;; b) echo \"B=$OPTARG\";; c) echo C;; ?) echo bad;; esac; done; shift $((OPTIND-1)); echo \"rest: $*\"; }; f -a -b 1 -cab2 x y; f -z -- -a; while getopts \":x:\" o -x; do echo \"$o $OPTARG\"; done",
            "A\nB=1\nC\nA\nB=2\nrest: x y\nbad\nrest: -a\n: x\n",
        ),
        (
            "(set -u; echo \"${nope:-d}\" \"$@\" $#; echo $nope; echo never); echo $?",
            "d 0\n1\n",
        ),
        (
            "readonly R=1; unset R; echo $?; (R=2; echo no); echo $?; echo $R; declare -r Q=3; (Q=4); echo $Q",
            "1\n1\n1\n3\n",
        ),
        (
            "(echo ${missing:?gone}); echo $?; (set -u; : $missing); echo $?",
            "1\n1\n",
        ),
        (
            "y=5; unset z; echo \"${y:+set}\" \"${z:+set}\" \"${z:-}\" | wc -c",
            "6\n",
        ),
        (
            "p=/a/b/c.txt; echo \"${p##*/}\" \"${p%/*}\" \"${p##*.}\" \"${p//\\//_}\"",
            "c.txt /a/b txt _a_b_c.txt\n",
        ),
        ("set -- 1 2 3 4 5; echo ${@:2:2} ${*: -1}", "2 3 5\n"),
        (
            "a=2; echo $[a * 3] \"$[1 + a]\" | tr -d '\\n'; echo",
            "6 3\n",
        ),
        ("x=1; echo {$x,y} {\"a\",b}c a{'x,y'}", "1 y ac bc a{x,y}\n"),
        (
            "set -e; x=$(false; echo no); echo \"[$x]\"; set +e",
            "[no]\n",
        ),
        ("printf '%s|' $'a\\tb' $'it\\'s'; echo", "a\tb|it's|\n"),
        (
            "IFS=$'\\n'; for l in $(printf 'a b\\nc\\n'); do echo \"<$l>\"; done; unset IFS",
            "<a b>\n<c>\n",
        ),
        (
            "v=hello; echo ${v^^} ${v^} ${v,,}; V=ABC; echo ${V,} ${V,,}",
            "HELLO Hello hello\naBC abc\n",
        ),
    ] {
        let got = s.sh(script).0;
        if got != want {
            differ.push(format!("{script}\n  bash: {want:?}\n  ours: {got:?}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn bash_builtins_and_variables_agents_use() {
    let mut s = Sandbox::new();
    // Each line as bash 5.2 prints it (checked natively).
    assert_eq!(
        s.ok("printf -v out '%03d|%s' 7 x; echo \"[$out]\""),
        "[007|x]\n"
    );
    assert_eq!(s.sh("printf -v 1x a").2, 2);
    assert_eq!(
        s.ok("RANDOM=5; a=$RANDOM; RANDOM=5; b=$RANDOM; [ \"$a\" = \"$b\" ] && [ \"$a\" -lt 32768 ] && echo seeded; echo $((RANDOM < 32768)) $SECONDS"),
        "seeded\n1 0\n"
    );
    assert!(s.ok("echo $EPOCHSECONDS").trim().parse::<u64>().unwrap() > 1_700_000_000);
    assert_eq!(
        s.ok(
            "declare -i n=3+4; echo $n; n=n*2; echo $n; declare -p n; declare +i n; n=1+1; echo $n"
        ),
        "7\n14\ndeclare -i n=\"14\"\n1+1\n"
    );
    assert_eq!(s.ok("f() { local -i k=2*3; echo $k; }; f"), "6\n");
    assert_eq!(
        s.ok("x=\"a\\\"b\\$c\"; declare -p x; declare -ir r=2; declare -p r"),
        "declare -- x=\"a\\\"b\\$c\"\ndeclare -ir r=\"2\"\n"
    );
    // What this shell does not have is refused, never ignored.
    for (line, says) in [
        ("declare -l x=ABC", "-l: not supported"),
        ("f() { local -n r=x; }; f", "-n: not supported"),
        ("local x=1", "can only be used in a function"),
        ("shopt -s globstar", "globstar: not supported"),
        ("shopt -s nosuch", "nosuch: invalid shell option name"),
    ] {
        let (_, err, status) = s.sh(line);
        assert!(status != 0 && err.contains(says), "{line}: {err}");
    }
    assert_eq!(
        s.ok("shopt -s nullglob; for f in *.nomatch; do echo $f; done; echo done; shopt nullglob; shopt -p failglob; shopt -q nullglob && echo quiet"),
        "done\nnullglob       \ton\nshopt -u failglob\nquiet\n"
    );
    // With no names `shopt` lists (`-s`: those on, `-u`: those off), sets nothing, exits 0.
    assert_eq!(
        s.ok("shopt -s; echo $?; echo *.nomatch; shopt -s failglob; shopt -s; shopt -u"),
        "0\n*.nomatch\nfailglob       \ton\nnullglob       \toff\n"
    );
    // Options last for the call, as `set`'s do.
    assert_eq!(s.ok("echo *.nomatch"), "*.nomatch\n");
    let (out, err, _) = s.sh("shopt -s failglob; echo *.nomatch; echo \"st=$?\"");
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("st=1\n", "sh: no match: *.nomatch\n")
    );
    assert_eq!(
        s.ok("g() { echo g; }; g=1; unset -f g; type g >/dev/null 2>&1 || echo gone; echo $g"),
        "gone\n1\n"
    );
    assert_eq!(
        s.sh("f(){ :; }; type -t f if echo ls time nosuch; echo $?; type -p ls echo")
            .0,
        "function\nkeyword\nbuiltin\nfile\nkeyword\n1\n/usr/bin/ls\n"
    );
    assert_eq!(s.sh("type -x ls").2, 2);
    // bash's `${NAME@...}` transformations (each line checked against bash 5.2).
    assert_eq!(
        s.ok(r#"x="a b"; y="it's"; z=$'a\nb\tc'; e=""; w='a\tb\x41'; echo ${x@Q} ${y@Q} ${z@Q} "[${e@Q}]" "[${unset@Q}]"; echo "${w@E}"; echo ${x@U} ${x@u} ${x@L}; echo ${x@A}; declare -i n=3; echo ${n@A} "[${n@a}]" "[${x@a}]"; set -- p "q r"; echo ${@@Q} ${1@Q}"#),
        "'a b' 'it'\\''s' $'a\\nb\\tc' [''] []\na\tbA\nA B A b a b\nx='a b'\ndeclare -i n='3' [i] []\n'p' 'q r' 'p'\n"
    );
    let (_, err, status) = s.sh("x=1; echo ${x@P}");
    assert!(status != 0 && err.contains("not supported"), "{err}");
    assert_eq!(s.sh("x=1; echo ${x@Z}").2, 2);
    // `umask` says the mask the sandbox makes files with, and refuses another by name.
    assert_eq!(
        s.ok(
            "umask; umask -S; umask -p; umask -pS; umask 022 && umask u=rwx,g=rx,o=rx && echo same"
        ),
        "0022\nu=rwx,g=rx,o=rx\numask 0022\numask -S u=rwx,g=rx,o=rx\nsame\n"
    );
    for (line, code, says) in [
        ("umask 077", 1, "cannot change"),
        ("umask 99", 1, "octal number out of range"),
        ("umask -x", 2, "invalid option"),
    ] {
        let (_, err, status) = s.sh(line);
        assert!(
            status == code && err.contains(says),
            "{line}: {status} {err}"
        );
    }
    // The commands there are are listed once a call; later misses say only what bash says.
    let (out, err, status) = s.sh("nosuch1; nosuch2 2>&1; echo \"$USER $HOSTNAME $SHELL\"");
    assert_eq!(status, 0);
    assert!(
        err.starts_with("nosuch1: command not found\n") && err.contains("built-in commands"),
        "{err}"
    );
    assert_eq!(
        out,
        "nosuch2: command not found\nsomebody localhost /bin/sh\n"
    );
    // `time` alone times nothing, as bash; `time && x` is bash's syntax error too.
    let (out, err, status) = s.sh("time -p; echo $?");
    assert_eq!((out.as_str(), status), ("0\n", 0));
    assert_eq!(err.lines().count(), 3, "{err}");
    assert_eq!(s.sh("time && echo x").2, 2);
    // `time`, a keyword over a whole pipeline: its times on stderr, its status the pipeline's.
    let (out, err, status) = s.sh("time { echo a; sleep 0.05; } | cat; time -p false");
    assert_eq!((out.as_str(), status), ("a\n", 1));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 7, "{err}");
    assert!(
        lines[0].is_empty()
            && lines[1].starts_with("real\t0m0.")
            && lines[2].starts_with("user\t0m"),
        "{err}"
    );
    assert!(
        lines[1] >= "real\t0m0.050s" && lines[3] == "sys\t0m0.000s",
        "{err}"
    );
    assert!(
        lines[4].starts_with("real 0.") && lines[6] == "sys 0.00",
        "{err}"
    );
    assert_eq!(s.ok("echo time"), "time\n");
    // `pushd`, `popd`, `dirs`, as bash with HOME=/app.
    assert_eq!(
        s.ok("mkdir -p /app/sub; cd; pushd /tmp; pushd /app/sub; dirs; dirs -v; pushd; popd; popd; pwd; dirs -p"),
        "/tmp ~\n~/sub /tmp ~\n~/sub /tmp ~\n 0  ~/sub\n 1  /tmp\n 2  ~\n/tmp ~/sub ~\n~/sub ~\n~\n/app\n~\n"
    );
    let (_, err, status) = s.sh("popd");
    assert_eq!((err.as_str(), status), ("popd: directory stack empty\n", 1));
    // `${!NAME}` and `${!PREFIX*}`, as bash.
    assert_eq!(
        s.ok("p=HOME; echo ${!p:-d} ${#p}; zza=1; zzb=2; echo ${!zz*}; for n in \"${!zz@}\"; do echo \"<$n>\"; done; n=1; set -- q w; echo ${!n}"),
        "/app 4\nzza zzb\n<zza>\n<zzb>\nq\n"
    );
    let (out, err, status) = s.sh("echo \"[${!nope}]\"; echo after");
    assert_eq!(
        (out.as_str(), err.as_str(), status),
        ("", "sh: nope: invalid indirect expansion\n", 1)
    );
    assert_eq!(
        s.sh("x='a b'; echo ${!x}").1,
        "sh: a b: invalid variable name\n"
    );
}

#[test]
fn output_process_substitution_reads_what_the_command_wrote() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("echo abc > >(tr a-z A-Z)"), "ABC\n");
    // Its stdout is the command's before its own redirections, in a pipeline the stage's.
    assert_eq!(s.ok("printf 'a\\nb\\n' | tee >(wc -l) > /dev/null"), "2\n");
    assert_eq!(
        s.ok("echo hi | tee >(wc -l) | cat -n"),
        "     1\thi\n     2\t1\n"
    );
    assert_eq!(
        s.ok("printf 'b\\na\\n' | tee >(sort > sorted.txt) > /dev/null; cat sorted.txt"),
        "a\nb\n"
    );
    assert_eq!(
        s.ok("for i in 1 2 3; do echo $i; done > >(sort -r)"),
        "3\n2\n1\n"
    );
    let (out, err, _) = s.sh("ls nothere 2> >(sed 's/^/E: /')");
    assert_eq!(
        (out.as_str(), err.as_str()),
        (
            "E: ls: cannot access 'nothere': No such file or directory\n",
            ""
        )
    );
    // `$?` is the command's; nothing is left in /tmp, in a loop or after it.
    assert_eq!(s.ok("false > >(cat); echo $?"), "1\n");
    assert_eq!(
        s.ok("for i in 1 2; do echo $i > >(cat > /dev/null); ls -A /tmp | grep -c sh-subst; done; true"),
        "0\n0\n"
    );
    assert_eq!(s.ok("ls -A /tmp | grep -c sh-subst || true"), "0\n");
}

#[test]
fn process_substitution_reads_a_file_that_goes_afterwards() {
    let mut s = Sandbox::new();
    assert_eq!(s.ok("cat <(echo hi) <(echo there)"), "hi\nthere\n");
    assert_eq!(
        s.ok("while read l; do echo \"[$l]\"; done < <(printf 'x\\ny\\n')"),
        "[x]\n[y]\n"
    );
    let (out, _, status) = s.sh("diff <(printf 'a\\nb\\n') <(printf 'a\\nc\\n')");
    assert_eq!((out.as_str(), status), ("2c2\n< b\n---\n> c\n", 1));
    // `$?` is the command's, not the substitution's; nothing is left in /tmp.
    assert_eq!(s.ok("false; cat <(true); echo $?"), "0\n");
    assert_eq!(s.ok("ls -A /tmp | grep -c sh-subst || true"), "0\n");
    // Each command's files go when it ends: a loop leaves none behind as it runs.
    assert_eq!(
        s.ok("for i in 1 2 3; do cat <(echo $i) > /dev/null; done; ls -A /tmp | grep -c sh-subst || true"),
        "0\n"
    );
    assert_eq!(
        s.ok(
            "for i in 1 2; do cat <(echo $i) > /dev/null; ls -A /tmp | grep -c sh-subst; done; true"
        ),
        "0\n0\n"
    );
}

/// An assignment to a read-only variable abandons the rest of the line being run, as in bash
/// (not the script): in a function or a loop too; `eval`'s text and a sourced file go on at
/// their next line, a subshell ends with 1, and `x=2 cmd` only complains and runs `cmd`. What
/// was assigned before the read-only name holds. (e2e `shell_language` checks these against
/// bash itself.)
#[test]
fn a_read_only_assignment_abandons_its_line() {
    let mut s = Sandbox::new();
    let (out, err, code) = s.sh(concat!(
        "readonly x=1; x=2; echo no\n",
        "echo line2 $?; y=1 x=2 z=3; echo no\n",
        "echo \"y=$y z=$z\"\n",
        "x=2;\n",
        "echo semicolon-next\n",
        "f() { x=4; echo no; }; f; echo no\n",
        "for i in 1 2; do\n  x[1]=6\n  echo no\ndone; echo no\n",
        "echo after-loop $?; (x=2; echo no); echo sub $?\n",
        "eval 'x=2; echo no'; echo eval $?; eval $'x=2\\necho eval-next'\n",
        "g() { echo \"prefix $x\"; }; x=5 g; x=(1 2); echo no\n",
        "echo end $?",
    ));
    assert_eq!(
        out,
        "line2 1\ny=1 z=\nsemicolon-next\nafter-loop 1\nsub 1\neval 1\neval-next\nprefix 1\nend 1\n"
    );
    assert_eq!(code, 0);
    assert_eq!(err.matches("x: readonly variable").count(), 10, "{err:?}");
    s.write("lines.sh", "x=2; echo no\necho sourced-next\n");
    let (out, err, code) = s.sh("readonly x=1; . ./lines.sh; echo back $?");
    assert_eq!((out.as_str(), code), ("sourced-next\nback 0\n", 0), "{err}");
}

/// `exec`: with redirections only they become the script's streams (through `if` and
/// functions, not out of a subshell or a redirected block); with a command, the script ends
/// with it. Outputs taken from bash 5.2.
#[test]
fn exec_redirects_the_script_or_runs_in_its_place() {
    let mut s = Sandbox::new();
    let (out, err, code) = s.sh(
        "if true; then exec > f1.txt; fi; echo b; f() { exec 2>&1; }; f; echo e >&2; (exec >/dev/null; echo hidden); echo shown",
    );
    assert_eq!((out.as_str(), err.as_str(), code), ("", "", 0));
    assert_eq!(s.ok("cat f1.txt"), "b\ne\nshown\n");
    assert_eq!(
        s.ok("{ exec >/dev/null; echo in; } > g.txt; echo out; cat g.txt"),
        "out\n"
    );
    // A subshell's `exec > file` is written when the subshell ends.
    assert_eq!(s.ok("(exec > h.txt; echo sub); cat h.txt"), "sub\n");
    assert_eq!(s.ok("exec 2>&1; echo to-err >&2"), "to-err\n");
    // What the script wrote there so far is in the file for the commands after.
    let (out, err, code) = s.sh("exec > k.txt; echo one; cat k.txt >&2; echo two");
    assert_eq!((out.as_str(), err.as_str(), code), ("", "one\n", 0));
    assert_eq!(s.ok("cat k.txt"), "one\ntwo\n");
    assert_eq!(s.ok("trap 'echo bye' EXIT; exec echo hi; echo no"), "hi\n");
    let (out, _, code) = s.sh("exec sh -c 'exit 3'; echo no");
    assert_eq!((out.as_str(), code), ("", 3));
    assert_eq!(s.ok("exec; echo still"), "still\n");
    let (_, err, code) = s.sh("exec -x ls");
    assert!(
        err.starts_with("exec: -x: invalid option\n") && code == 2,
        "{err}"
    );
    let (_, err, code) = s.sh("exec -a name echo");
    assert!(err.contains("-a: not supported here") && code == 2, "{err}");
}

/// An expansion error (a division by zero, a negative substring length) abandons the rest of
/// its line with status 1 and the script goes on at its next line, as bash (not in POSIX
/// mode) does; `(( ))` and `let` on a read-only variable say so once and fail, and `$(( ))`
/// abandons its line. Output and messages taken from bash 5.2.
#[test]
fn expansion_errors_abandon_their_line() {
    let mut s = Sandbox::new();
    let (out, err, code) = s.sh(concat!(
        "echo $((1/0)); echo same\n",
        "echo next $?\n",
        "a=(1); echo ${a[@]:0:-1}; echo same\n",
        "x=$(echo $((1/0)); echo in); echo \"x=$x $?\"\n",
        "readonly r=1; (( r=3 )); echo \"a $?\"; let r=4; echo \"b $?\"; echo $(( r=5 )); echo c\n",
        "echo end",
    ));
    assert_eq!(
        (out.as_str(), code),
        ("next 1\nx= 1\na 1\nb 1\nend\n", 0),
        "{err}"
    );
    assert_eq!(err.matches("r: readonly variable").count(), 3, "{err}");
    assert_eq!(err.lines().count(), 6, "{err}");
}

/// Descriptors 3 to 9, as bash has them: opened by `exec` for the rest of the script or for
/// one command or block, duplicated, swapped, read from with a shared position, closed; one
/// that is not open is a bad descriptor. Outputs taken from bash 5.2.
#[test]
fn descriptors_past_stderr() {
    let mut s = Sandbox::new();
    s.write("a.txt", "apple 3\nbanana 1\ncherry 2\n");
    assert_eq!(
        s.ok("exec 3>out.txt; echo hi >&3; echo there >&3; exec 3>&-; cat out.txt"),
        "hi\nthere\n"
    );
    let (out, err, code) = s.sh("{ echo out; echo err >&2; } 3>&1 1>&2 2>&3");
    assert_eq!((out.as_str(), err.as_str(), code), ("err\n", "out\n", 0));
    assert_eq!(
        s.ok("echo x 3>f3.txt >&3; cat f3.txt; cat 3<<< abc <&3"),
        "x\nabc\n"
    );
    assert_eq!(
        s.ok("exec 3>&1; x=$(echo captured; echo direct >&3); echo \"[$x]\""),
        "direct\n[captured]\n"
    );
    assert_eq!(
        s.ok("exec 4<a.txt; read -r l <&4; echo $l; read -r l <&4; echo $l; cat <&4"),
        "apple 3\nbanana 1\ncherry 2\n"
    );
    assert_eq!(
        s.ok("log() { echo \"$@\" >&3; }; exec 3>log.txt; log a; log b; cat log.txt"),
        "a\nb\n"
    );
    // A block's descriptors end with it; a subshell's `exec` too.
    let (out, err, _) = s.sh("{ echo in >&3; } 3>&1; echo after >&3; (exec 5>&1); echo x >&5");
    assert_eq!(out, "in\n");
    assert_eq!(
        err,
        "sh: 3: Bad file descriptor\nsh: 5: Bad file descriptor\n"
    );
    assert_eq!(
        s.ok("while read -u 3 l; do echo \"[$l]\"; done 3< a.txt; read -u 3 x 3<<< abc; echo $x"),
        "[apple 3]\n[banana 1]\n[cherry 2]\nabc\n"
    );
    let (_, err, code) = s.sh("read -u 3 x");
    assert_eq!(
        (err.as_str(), code),
        ("read: 3: invalid file descriptor: Bad file descriptor\n", 1)
    );
    let (out, err, code) = s.sh("echo hi >&5; echo \"st $?\"; exec 3>&-; echo no >&3; echo $?");
    assert_eq!((out.as_str(), code), ("st 1\n1\n", 0), "{err}");
}

/// `set -o` and `set +o` list bash's options with this shell's states, and `$-` holds the
/// flags as `bash -c` has them. Outputs taken from bash 5.2.
#[test]
fn options_list_as_in_bash() {
    let mut s = Sandbox::new();
    let listing = s.ok("set -e -o pipefail; set -o");
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 27, "{listing}");
    assert_eq!(lines[0], "allexport      \toff");
    assert_eq!(lines[1], "braceexpand    \ton");
    assert_eq!(lines[3], "errexit        \ton");
    assert_eq!(lines[10], "interactive-comments\ton");
    assert_eq!(lines[21], "pipefail       \ton");
    assert_eq!(
        s.ok("set +o | head -2"),
        "set +o allexport\nset -o braceexpand\n"
    );
    assert_eq!(s.ok("echo $-; set -eu; echo $-"), "hBc\nehuBc\n");
    let (out, err, _) = s.sh("set -x; echo $-");
    assert_eq!((out.as_str(), err.as_str()), ("hxBc\n", "+ echo hxBc\n"));
}

/// `node --version` names the engine that runs, which is not Node.js.
#[test]
fn node_version_names_its_engine() {
    let mut s = Sandbox::new();
    let out = s.ok("node --version; node -v | wc -l");
    assert!(
        out.starts_with("QuickJS-NG 0.") && out.ends_with("\n1\n"),
        "{out}"
    );
}
