//! `execute_command`'s shell language (issue 29: "a shell that speaks POSIX"): compound
//! commands, functions, substitutions, arithmetic, brace expansion, here-documents, parameter
//! operations, `[[ ]]`, `read` and `set -e`. Every script line runs through the server and
//! natively with `bash -c`, each in a directory holding the same files, and both must print the
//! same stdout and exit with the same status. Then what the language must refuse or bound: deep
//! nesting, and an endless loop at its deadline.

use std::time::Duration;

use anyhow::{Result, ensure};
use sandbox_tests::Server;

use crate::gnu::{self, command};
use serde_json::json;

/// The files every line starts with.
const FIXTURE: &[(&str, &str)] = &[
    ("a.txt", "apple 3\nbanana 1\ncherry 2\n"),
    ("nums.txt", "3\n1\n2\n"),
    ("kv.txt", "name=alice\nage=30\ncity=paris\n"),
    ("csv.txt", "x,1\ny,2\nz,3\n"),
];

/// Script lines compared with bash, stdout and status. Each runs in a subshell `( ... )` of its
/// own, so that its variables and cwd do not reach the next line.
const LINES: &[&str] = &[
    // Compound commands.
    "if [ -f a.txt ]; then echo yes; else echo no; fi",
    "if false; then echo a; elif true; then echo b; else echo c; fi",
    "if false; then echo a; fi; echo \"status $?\"",
    "if ! grep -q zebra a.txt\nthen\n  echo 'no zebra'\nfi",
    "for i in 1 2 3; do echo \"item $i\"; done",
    "for f in *.txt; do echo \"$f\"; done",
    "for w in $(cat nums.txt); do echo \"n=$w\"; done",
    "for ((i = 0; i < 5; i += 2)); do echo $i; done",
    "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done",
    "n=5; until [ $n -le 2 ]; do n=$((n - 1)); done; echo $n",
    "for i in 1 2 3 4 5 6; do if [ $i -eq 2 ]; then continue; fi; if [ $i -eq 5 ]; then break; fi; echo $i; done",
    "for i in a b c; do for j in 1 2 3; do [ $j -eq 2 ] && continue 2; echo $i$j; done; done",
    "for i in x y; do while true; do break 2; done; echo never; done; echo \"after $i\"",
    "case apple in a*) echo starts-with-a ;; *) echo other ;; esac",
    "for x in report.md data.csv main.py notes; do case $x in *.md|*.txt) echo \"$x doc\";; *.csv) echo \"$x data\";; *.py) echo \"$x code\";; *) echo \"$x ?\";; esac; done",
    "case 42 in [0-9][0-9]) echo two-digits;; esac",
    "case x in y) echo y;; esac; echo \"status $?\"",
    "case a in a) echo one;& b) echo two;; c) echo three;; esac",
    "case ab in a*) echo first;;& *b) echo second;; *) echo third;; esac",
    "case \"$(echo B)\" in\n  [a-z]) echo lower ;;\n  [A-Z]) echo upper ;;\nesac",
    "{ echo one; echo two; } | wc -l",
    "{ echo out; echo err >&2; } > both.txt 2>&1; cat both.txt",
    "x=outer; (x=inner; echo $x); echo $x",
    "(cd /tmp && pwd); [ \"$(pwd)\" != /tmp ] && echo back",
    "(exit 7); echo $?",
    "(echo in-subshell; exit 3) | cat; echo \"status $?\"",
    "ls | while read f; do echo \"file: $f\"; done",
    "while read -r line; do echo \"[$line]\"; done < a.txt",
    "while IFS== read -r key value; do echo \"$key -> $value\"; done < kv.txt",
    "while IFS=, read -r a b; do echo \"$b:$a\"; done < csv.txt",
    "sort nums.txt | while read n; do echo $((n * 10)); done",
    "count=0; while read -r l; do count=$((count + 1)); done < a.txt; echo $count",
    "seq 1 5 | { sum=0; while read n; do sum=$((sum + n)); done; echo $sum; }",
    "for i in 3 1 2; do echo $i; done | sort",
    "for i in 1 2 3; do echo $i; done > out.txt; wc -l < out.txt",
    "while read n; do echo \"got $n\"; done <<EOF\n1\n2\nEOF",
    // Functions.
    "greet() { echo \"hello $1\"; }; greet world; greet \"big world\"",
    "f() { echo \"$# args: $*\"; }; f a b c; f",
    "f() { return 3; }; f; echo \"returned $?\"",
    "function g { echo \"in g\"; }; g",
    "function h() {\n  echo \"args: $@\"\n}\nh x y",
    "x=global; f() { local x=local; echo $x; }; f; echo $x",
    "fact() { if [ $1 -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }; fact 6",
    "fib() { local n=$1; if [ $n -lt 2 ]; then echo $n; return; fi; echo $(( $(fib $((n-1))) + $(fib $((n-2))) )); }; fib 10",
    "f() { shift; echo \"$@\"; }; f drop keep these",
    "set -- a b c; echo $#; shift; echo \"$@\"; shift 2; echo $#",
    "up() { echo \"$1\" | tr a-z A-Z; }; for w in one two; do up $w; done",
    "isodd() { [ $(( $1 % 2 )) -eq 1 ]; }; for n in 1 2 3; do isodd $n && echo \"$n odd\" || echo \"$n even\"; done",
    "f() { echo body; } > fn.txt; f; cat fn.txt",
    // Command substitution.
    "echo \"today is $(echo Monday)\"",
    "x=$(printf 'a\\n\\n\\n'); echo \"[$x]\"",
    "echo `echo back` $(echo $(echo nested))",
    "printf '<%s>' $(echo a b) \"$(echo a b)\"; echo",
    "lines=$(wc -l < a.txt); echo \"lines: $lines\"",
    "x=$(false); echo $?",
    "echo $(seq 1 3)",
    "n=$(seq 1 10 | wc -l); echo $((n * 2))",
    "d=$(cd /tmp; pwd); echo $d",
    "echo \"$(echo \"quoted $(echo inside)\")\"",
    // Arithmetic.
    "echo $((1 + 2 * 3)) $(( (1 + 2) * 3 )) $((7 / 2)) $((7 % 3)) $((2 ** 10))",
    "a=5; echo $((a + 1)) $(($a * 2)) $((a > 3 ? 10 : 20)) $((a == 5))",
    "i=0; ((i++)); ((i += 5)); echo $i; ((i == 6)) && echo six",
    "((0)); echo $?; ((2 > 1)); echo $?",
    "echo $((0x10 + 010)) $((-7 / 2)) $((1 << 4)) $((5 & 3)) $((5 | 3)) $((5 ^ 3)) $((!0)) $((~0))",
    "echo $((9223372036854775807 + 1))",
    "let x=4 y=x*2; echo $x $y",
    "echo start; echo $((1 / 0)); echo never",
    "((1 / 0)); echo \"after $?\"",
    "x=3; x=$((x * x)); echo $x",
    // Brace expansion (this made a directory named `{js,css}` before).
    "mkdir -p build/{js,css} && ls build",
    "echo {a,b,c}",
    "echo x{a,b}y {1..5} {a..e}",
    "echo {01..10}",
    "echo {1..10..3} {5..1} {e..a}",
    "echo {a,b}{1,2} {a,{b,c}d}",
    "echo {} {x} '{a,b}' \"{1..3}\"",
    "touch f{1..3}.log && ls *.log",
    // Here-documents (an unquoted one left `$((1+1))` as written before).
    "cat <<EOF\n1+1 = $((1+1))\nEOF",
    "name=world; cat <<EOF\nhello $name\n${name:-x} $(echo sub) \\$name\nEOF",
    "cat <<'EOF'\n$HOME $((1+1))\nEOF",
    "cat <<-EOF\n\tindented $((2*3))\n\tEOF",
    // Parameter operations.
    "p=dir/sub/file.tar.gz; echo ${#p} ${p#*/} ${p##*/} ${p%.*} ${p%%.*}",
    "p=hello-world-foo; echo ${p/-/_} ${p//-/_} ${p/#hello/bye} ${p/%foo/bar}",
    "s=abcdef; echo ${s:2} ${s:1:3} ${s: -2}",
    "unset u; echo ${u:-default} ${u:=assigned} $u",
    "e=''; echo \"[${e:-empty}] [${e-unset}] [${e:+alt}]\"",
    "set -- one two three; echo $# \"$@\" ${@:2}",
    "f() { for a in \"$@\"; do echo \"<$a>\"; done; }; f 'a b' c",
    "echo ${missing:?must be set}; echo never",
    "x=ab; x+=cd; echo $x",
    "v=hello; echo ${v^^} ${v^} ${v,,}",
    "printf '[%s]\\n' $'tab\\there' $'it\\'s'",
    "IFS=$'\\n'; for l in $(printf 'a b\\nc\\n'); do echo \"<$l>\"; done",
    "f() { local IFS=:; echo \"$*\"; }; f a b c",
    "set -e; x=$(false; echo no); echo \"[$x]\"",
    "x=1; echo {$x,y} {\"a\",b}c a{'x,y'}",
    "declare n=5; f() { declare n=6; echo $n; }; f; echo $n",
    "command -v echo; command -v no-such-command || echo missing",
    "echo() { printf 'wrapped: %s\\n' \"$*\"; }; echo hi; command echo plain",
    // `[[ ]]`.
    "[[ abc == a* ]] && echo match",
    "[[ abc == 'a*' ]] || echo literal",
    "x='a b'; [[ $x == 'a b' ]] && echo nosplit",
    "[[ -f a.txt && ! -d a.txt ]] && echo file",
    // Process substitution `<(...)`.
    "sort -n <(printf '10\\n2\\n33\\n')",
    "comm -12 <(sort nums.txt) <(printf '1\\n3\\n')",
    "while read -r w; do echo \"<$w>\"; done < <(cut -d' ' -f1 a.txt)",
    "diff <(sort nums.txt) <(printf '1\\n2\\n3\\n') && echo same; paste -d: <(seq 3) <(seq 4 6)",
    // `>(...)`, last on its line: bash runs it beside the command, so anything after it races.
    "echo abc > >(tr a-z A-Z)",
    "printf 'a\\nb\\n' | tee >(wc -l) > /dev/null",
    "ls -d a.txt gone 2> >(sed 's/^/E: /')",
    // bash's `printf -v`, `declare -i`/`-p`, `shopt`, `trap`, `unset -f`, `$RANDOM`.
    "printf -v out '%03d|%s' 7 x; echo \"[$out]\"",
    "declare -i n=3+4; echo $n; n=n*2; echo $n; declare -p n; declare +i n; n=1+1; echo $n",
    "f() { local -i k=2*3; echo $k; }; f; x='a\"b$c'; declare -p x",
    "shopt -s nullglob; for f in *.nomatch; do echo $f; done; echo done; shopt nullglob; shopt -p failglob",
    "g() { echo g; }; unset -f g; type g >/dev/null 2>&1 || echo gone",
    "trap 'echo bye' EXIT; echo hi; (trap 'echo sub' EXIT; echo in); echo out",
    "trap 'echo err $?' ERR; false; { false; }; f() { false; echo inf; }; f; (exit 3); true",
    "trap 'echo it'\\''s' INT; trap -p; echo $((RANDOM < 32768))",
    "type -t cd if ls; time echo timed; time -p false || echo failed",
    "mkdir -p p1/p2; pushd p1 >/dev/null; pushd p2 >/dev/null; dirs -p | wc -l; basename $(pwd); popd >/dev/null; popd >/dev/null; ls -d p1; popd || echo empty",
    "aa_1=x; aa_2=y; echo ${!aa_*}; n=aa_2; echo ${!n}",
    "x=\"it's a\"; z=$'t\\tn\\n'; echo ${x@Q} ${z@Q} ${x@U} ${x@u}; echo ${x@A}; declare -i n=2; echo ${n@A} ${n@a}; set -- 'p q' r; echo ${@@Q}",
    "time -p; timeout -s 9 0.2 sleep 3; echo $?; timeout -s usr1 0.2 sleep 3; echo $?",
    "printf 'x\\ny\\n' | find . -maxdepth 1 -name 'a*' -exec sh -c 'read l; echo \"$l\"' \\;",
    "timeout 5 echo fast; timeout 0.2 sleep 3; echo $?; timeout -s KILL 0.2 sleep 3; echo $?; timeout 2 sh -c 'exit 3'; echo $?",
    // `find -exec`, which the shell runs for the toolbox's find.
    "find . -name '*.txt' -exec wc -l {} + | sort",
    "find . -name 'a*' -type f -exec grep -c . {} \\; -exec echo counted {} \\; | sort",
    "find . -maxdepth 1 -name '*.txt' -exec sh -c 'echo \"<$1>\"' _ {} \\; | sort",
    // `-nt`/`-ot`: nanosecond times, and a missing file older than any.
    "touch old; sleep 0.05; touch new; [ new -nt old ] && echo newer; [ old -ot new ] && echo older; [[ new -ot old ]] || echo not-older",
    "for e in 'a.txt -ot gone' 'gone -ot a.txt' 'a.txt -nt gone' 'gone -nt a.txt' 'gone -ot gone2'; do test $e; echo \"$e: $?\"; done",
    "[[ ab12 =~ ^[a-z]+[0-9]+$ ]] && echo regex",
    "[[ 2 -lt 10 ]] && [[ b > a ]] && echo compare",
    // `read`, `eval`, `:`.
    "read a b <<< \"one two three\"; echo \"$a|$b\"",
    "echo \"x y\" | { read p q; echo $q $p; }",
    "cmd=\"echo evaluated\"; eval $cmd",
    "eval 'v=42'; echo $v",
    ": ignored; echo $?",
    // Indexed arrays.
    "files=(*.txt); echo ${#files[@]} \"${files[0]}\" \"${files[@]: -1}\"",
    "mapfile -t lines < a.txt; echo \"${#lines[@]}: ${lines[1]}\"; for l in \"${lines[@]}\"; do echo \"[${l% *}]\"; done",
    "a=(x \"y z\" w); a+=(v); a[7]=s; echo \"${!a[@]}\"; printf '<%s>' \"${a[@]}\"; echo; declare -p a",
    "IFS=, read -ra f <<< \"q,r,,s\"; echo ${#f[@]} \"${f[*]}\"; unset 'f[0]'; echo \"${f[@]^^}\" \"${!f[@]}\"",
    "a=($(cut -d' ' -f2 a.txt)); echo $(( a[0] + a[1] * a[2] )); (( a[1]++ )); echo \"${a[@]}\" ${#a[1]}",
    "f() { local -a l=(\"$@\"); echo \"${#l[@]} ${l[-1]}\"; }; f 1 \"2 3\"; echo \"[${l[*]}]\"",
    "readarray -t kv < kv.txt; for i in \"${!kv[@]}\"; do echo \"$i ${kv[i]#*=}\"; done",
    "a=(one two three); echo \"${a[@]:1}\" \"${a[@]/e/E}\" \"${#a[@]}\" \"${a[*]@Q}\"; a=(); echo \"${#a[@]}[${a[@]}]\"",
    "set -u; a=(); echo \"[${a[@]}]\" ${#a[@]} \"[${b[*]}]\"; echo \"${a[0]}\"; echo no",
    "a=(x \"y z\"); echo \"${a[*]@A}\"; printf '<%s>' \"${a[@]@A}\" \"${a[@]@k}\"; echo \"${a[@]@K}\" \"${a[5]@A}\" \"${a[@]@Q}\"",
    // Declared never assigned (`declare -a e`) is not `a=()`; integer arrays; read-only lists;
    // a bare `declare` and a bare `set` list arrays in the same form.
    "declare -a e; a=(); declare -p e a; declare -ai n=(1+1 2*3); n[2]=4*4; declare -p n",
    "readonly r=(1 2); declare -p r; declare -ar r2=(x y); declare -p r2; x=(5 6); unset x[0] x[1]; declare -p x",
    "b[3]=q; s='a b'; e=; t=\"it's\"; declare -a u; declare | grep -E '^(b|s|e|t|u)='",
    "b[3]=q; s='a b'; readonly r=(5 6); set | grep -E '^(b|s|r)='",
    "declare -a e; a=(); set -u; echo ${#a[@]}; (echo ${#e[@]}); echo $?",
    // An assignment to a read-only variable abandons the rest of the line being run (in a
    // function or a loop too), not the script; `eval`'s text and a sourced file go on at their
    // next line; `x=5 cmd` complains and runs cmd with the old value.
    "bash -c $'readonly x=1; y=1 x=2 z=3; echo no\\necho \"$? y=$y z=$z\"\\nfor i in 1 2; do x[1]=6; echo no; done; echo no\\ng() { echo \"in $x\"; }; x=5 g; x=(1 2); echo no\\necho end $?'; echo outer $?",
    "bash <<'EOF'\nreadonly x=1; eval $'x=2; echo no\\necho next $?'\nf() { x=4; echo in-f; }; eval 'f; echo no'; echo after $?\n(x=2; echo no); echo sub $?; (eval $'x=2\\necho no'); echo $?\nprintf 'x=2; echo no\\necho sourced-next\\n' > l.sh; . ./l.sh; echo back $?; (. ./l.sh); echo $?; echo $(x+=1; echo no) $?\nEOF",
    // Background jobs: each runs to completion where it stands (one command at a time), which
    // is one of the orders bash allows; `wait` syncs both sides.
    "echo a & wait; echo b; (exit 3) & wait $!; echo $?; x=1 & wait; echo \"[$x]\"",
    "for f in a.txt nums.txt; do wc -l < \"$f\" > \"$f.n\" & done; wait; cat a.txt.n nums.txt.n",
    "nohup sort nums.txt > sorted.txt 2>&1 & pid=$!; wait $pid; echo $?; cat sorted.txt; false & wait -n; echo $?",
    "kill -0 $$; echo $?; kill -l 9 TERM; bash -c 'trap \"echo got\" TERM; kill $$; echo after $?'; bash -c 'echo a; kill $$; echo b'; echo $?",
    // `exec`: redirections for the rest of the script (not out of a subshell or a redirected
    // block), or a command in the script's place.
    "(exec > log.txt 2>&1; echo a; cat nosuch; echo b); cat log.txt; f() { exec 2>&1; }; f; cat nosuch; { exec >/dev/null; echo in; } > g.txt; echo out; cat g.txt",
    "(exec > k.txt; echo one; cat k.txt >&2; echo two) 2> err.txt; cat err.txt k.txt; bash -c 'trap \"echo bye\" EXIT; exec echo hi; echo no'; bash -c 'exec sh -c \"exit 3\"'; echo $?",
    // Descriptors 3 to 9: opened by exec or for one command, duplicated, swapped, closed.
    "exec 3>out.txt; echo hi >&3; echo there >&3; exec 3>&-; cat out.txt; echo x 3>f3.txt >&3; cat f3.txt; echo hi >&5; echo \"st $?\"",
    "{ echo out; echo err >&2; } 3>&1 1>&2 2>&3; cat 3<<< abc <&3; exec 3>&1; x=$(echo captured; echo direct >&3); echo \"[$x]\"",
    "exec 4<a.txt; read -r line <&4; echo $line; read -r l2 <&4; echo $l2; cat <&4; log() { echo \"$@\" >&3; }; exec 3>log.txt; log a; log b; cat log.txt",
    "while read -u 3 l; do echo \"[$l]\"; done 3< a.txt; read -u 3 x 3<<< abc; echo $x; f() { echo \"in f\" >&3; }; f 3>&1",
    // An expansion error abandons its line (bash, not in POSIX mode); `(( ))` on a read-only
    // variable fails and the line goes on.
    "bash <<'EOF'\necho $((1/0)); echo same\necho next $?\nreadonly r=1; (( r=3 )); echo \"a $?\"; echo $(( r=5 )); echo c\necho end\nEOF",
    // `set -e` and its POSIX exceptions.
    "set -e; if false; then :; fi; false || true; ! true; echo alive",
    "set -e; echo before; false; echo never",
    "set -e; f() { false; echo in-f; }; f || echo rescued",
    "true && { echo grouped; false; } || echo fallback",
];

#[tokio::test(flavor = "multi_thread")]
async fn shell_language_behaves_like_bash_on_the_same_files() -> Result<()> {
    ensure!(LINES.len() >= 80, "only {} lines", LINES.len());
    let server = Server::start().await?;
    let session = "posix";
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": session }),
        )
        .await?;
    // One copy of the fixture per line, so that no line sees what another wrote.
    let copies: Vec<(String, String)> = (0..LINES.len())
        .flat_map(|n| {
            FIXTURE
                .iter()
                .map(move |(name, text)| (format!("t{n}/{name}"), (*text).to_owned()))
        })
        .collect();
    gnu::write_files(&server, session, &copies).await?;
    let fixture: Vec<(String, String)> = (FIXTURE.iter())
        .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
        .collect();
    let mut differ = Vec::new();
    let mut printed = 0;
    for (n, line) in LINES.iter().enumerate() {
        // A subshell per line: its variables, functions and cwd end with it, on both sides.
        let script = format!("(\n{line}\n)");
        let ours = command(&server, session, &format!("cd /app/t{n} && {script}"), 30).await?;
        let (stdout, status) = gnu::natively(&fixture, &script)?;
        printed += usize::from(!stdout.is_empty());
        if ours.str("stdout") != stdout || ours.u64("exit_code") != status {
            differ.push(format!(
                "{line}\n  bash: {status} {stdout:?}\n  ours: {} {:?} (stderr {:?})",
                ours.u64("exit_code"),
                ours.str("stdout"),
                ours.str("stderr")
            ));
        }
    }
    // Nearly every line prints something: a comparison of empty outputs would prove nothing.
    ensure!(printed + 5 >= LINES.len(), "only {printed} lines printed");
    ensure!(
        differ.is_empty(),
        "{} of {} lines differ from bash:\n{}",
        differ.len(),
        LINES.len(),
        differ.join("\n")
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_language_refuses_and_bounds_what_it_must() -> Result<()> {
    let server = Server::start().await?;
    let session = "bounds";
    server
        .call(
            "create_session",
            json!({ "language": "javascript", "session_id": session }),
        )
        .await?;
    // Unsupported syntax is a syntax error (status 2) before anything runs.
    for line in [
        "echo ran; sleep 1 &;",
        "echo ran; select x in a b; do echo $x; done",
        "echo ran; exec 10> log.txt",
        "echo ran; export arr=(1 2 3)",
        "echo ran; arr=(1 2",
    ] {
        let reply = command(&server, session, line, 10).await?;
        ensure!(
            reply.u64("exit_code") == 2
                && reply.str("stdout").is_empty()
                && reply.str("error_type") == "syntax_error",
            "{line}: {reply:?}"
        );
    }
    // So are associative arrays wherever they come in (indexed ones are bash's), and the
    // script stops there: `m[a]=1` would set the indexed `m[0]`.
    for line in [
        "declare -A map",
        "typeset -A map=([k]=v)",
        "local -A m",
        "declare -A m; m[a]=1; echo ${m[a]}",
    ] {
        let reply = command(&server, session, line, 10).await?;
        ensure!(
            reply.u64("exit_code") == 2
                && reply.str("stdout").is_empty()
                && reply.str("stderr").contains("arrays"),
            "{line}: {reply:?}"
        );
    }
    // Deep nesting is refused at once, and the session goes on.
    let started = std::time::Instant::now();
    for opener in ["( ", "$(", "{ ", "if true; then ", "$(( $(( "] {
        let reply = command(&server, session, &opener.repeat(10_000), 10).await?;
        ensure!(
            reply.u64("exit_code") == 2 && reply.str("stderr").contains("nested too deeply"),
            "{opener}: {reply:?}"
        );
    }
    ensure!(started.elapsed() < Duration::from_secs(10));
    let recursion = command(&server, session, "f() { f; }; f; echo survived", 10).await?;
    ensure!(
        recursion.str("stdout") == "survived\n"
            && recursion
                .str("stderr")
                .contains("maximum function nesting level exceeded"),
        "{recursion:?}"
    );
    let braces = command(&server, session, "echo {1..10000000}", 10).await?;
    ensure!(
        braces.u64("exit_code") == 1 && braces.str("stderr").contains("brace expansion"),
        "{braces:?}"
    );
    // An endless loop ends at its deadline, as a timeout.
    let started = std::time::Instant::now();
    let endless = command(&server, session, "while true; do :; done", 1).await?;
    ensure!(endless.str("error_type") == "timeout", "{endless:?}");
    ensure!(
        started.elapsed() < Duration::from_secs(8),
        "stopped late: {:?}",
        started.elapsed()
    );
    let after = command(&server, session, "for i in 1 2; do echo $i; done", 10).await?;
    ensure!(after.str("stdout") == "1\n2\n", "{after:?}");
    server.stop().await
}
