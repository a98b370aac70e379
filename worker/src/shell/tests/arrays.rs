//! bash's indexed arrays: every expected output (stdout and status) below was produced by
//! bash 5.2 running the same command line (messages on stderr differ in their prefix only).

use super::Sandbox;
use crate::shell::exec;

/// Command lines and what bash 5.2 prints and returns for them.
const BASH_CHECKED: &[(&str, &str, i32)] = &[
    (
        r#"a=(x y "z w"); echo "${a[1]}" "$a" ${#a[@]}; for i in "${a[@]}"; do echo "[$i]"; done"#,
        r#"y x 3
[x]
[y]
[z w]
"#,
        0,
    ),
    (
        r#"a=(); echo ${#a[@]}; a+=(p q); a+=(r); echo "${a[*]}"; declare -p a"#,
        r#"0
p q r
declare -a a=([0]="p" [1]="q" [2]="r")
"#,
        0,
    ),
    (
        r#"a=(1 2 3); a[5]=six; echo "${!a[@]}"; echo "${a[-1]}" "${a[-4]}"; declare -p a"#,
        r#"0 1 2 5
six 3
declare -a a=([0]="1" [1]="2" [2]="3" [5]="six")
"#,
        0,
    ),
    (
        r#"i=2; a[i+1]=v; a[$i]=w; declare -p a"#,
        r#"declare -a a=([2]="w" [3]="v")
"#,
        0,
    ),
    (
        r#"a=(x y); a+=z; echo "${a[@]}"; a=q; declare -p a"#,
        r#"xz y
declare -a a=([0]="q" [1]="y")
"#,
        0,
    ),
    (
        r#"a=(one two three four); echo "${a[@]:1:2}" "|" "${a[@]: -1}" "|" "${#a[2]}" "|" "${a[@]/o/0}" "|" "${a[@]^^}" "|" "${a[@]#t}" "|" "${a[*]%e}""#,
        r#"two three | four | 5 | 0ne tw0 three f0ur | ONE TWO THREE FOUR | one wo hree four | on two thre four
"#,
        0,
    ),
    (
        r#"a=("a b" c); IFS=,; echo "${a[*]}"; unset IFS; printf '<%s>\n' ${a[@]} "${a[@]}" "${a[*]}""#,
        r#"a b,c
<a>
<b>
<c>
<a b>
<c>
<a b c>
"#,
        0,
    ),
    (
        r#"a=(x y z); unset 'a[1]'; declare -p a; echo ${#a[@]}; unset a; echo "[${a[@]}]"; declare -p a"#,
        r#"declare -a a=([0]="x" [2]="z")
2
[]
"#,
        1,
    ),
    (
        r#"a=({1..3} {x,y}); echo "${a[@]}"; b=($(printf 'l1\nl2 w\n')); declare -p b"#,
        r#"1 2 3 x y
declare -a b=([0]="l1" [1]="l2" [2]="w")
"#,
        0,
    ),
    (
        r#"a=(
  first   # comment
  second
); declare -p a"#,
        r#"declare -a a=([0]="first" [1]="second")
"#,
        0,
    ),
    (
        r#"printf 'l1\nl2\nl3\n' > /tmp/arrtest_f.txt; mapfile -t arr < /tmp/arrtest_f.txt; declare -p arr; readarray -t -s 1 -n 1 r < /tmp/arrtest_f.txt; declare -p r"#,
        r#"declare -a arr=([0]="l1" [1]="l2" [2]="l3")
declare -a r=([0]="l2")
"#,
        0,
    ),
    (
        r#"printf 'a,b,c\n' > /tmp/arrtest_g.txt; mapfile -d , m < /tmp/arrtest_g.txt; declare -p m; printf 'l1\nl2\n' > /tmp/arrtest_h.txt; mapfile x < /tmp/arrtest_h.txt; declare -p x"#,
        r#"declare -a m=([0]="a," [1]="b," [2]=$'c\n')
declare -a x=([0]=$'l1\n' [1]=$'l2\n')
"#,
        0,
    ),
    (
        r#"read -a w <<< "  one two   three "; declare -p w; IFS=: read -ra p <<< "a::b:"; declare -p p"#,
        r#"declare -a w=([0]="one" [1]="two" [2]="three")
declare -a p=([0]="a" [1]="" [2]="b")
"#,
        0,
    ),
    (
        r#"f() { local -a l=(1 2); l+=(3); echo "${l[@]}"; local m=(q); echo "$m"; }; l=(g h); f; declare -p l; echo "[$m]""#,
        r#"1 2 3
q
declare -a l=([0]="g" [1]="h")
[]
"#,
        0,
    ),
    (
        r#"declare -a d=(x "y z"); declare -p d; declare -a e; declare -p e; e[3]=t; declare -p e"#,
        r#"declare -a d=([0]="x" [1]="y z")
declare -a e
declare -a e=([3]="t")
"#,
        0,
    ),
    (
        r#"a=(1 2); echo "${a[@]@Q}" "${a[1]@Q}"; s=(x); echo "${s[@]:-def}" "${n[@]:-def}" "${s[@]:+alt}""#,
        r#"'1' '2' '2'
x def alt
"#,
        0,
    ),
    (
        r#"x=scalar; echo "${x[0]}" "${x[@]}" "${#x[@]}"; x[1]=more; declare -p x"#,
        r#"scalar scalar 1
declare -a x=([0]="scalar" [1]="more")
"#,
        0,
    ),
    (
        r#"a=(5 6 7); echo $(( ${a[1]} + 1 )); n=${#a[@]}; echo $n; for ((i=0;i<${#a[@]};i++)); do echo "$i=${a[i]}"; done"#,
        r#"7
3
0=5
1=6
2=7
"#,
        0,
    ),
    (
        r#"a=("x y" z); b=("${a[@]}"); declare -p b; c="${a[@]}"; echo "$c"; set -- "${a[@]}"; echo $#"#,
        r#"declare -a b=([0]="x y" [1]="z")
x y z
2
"#,
        0,
    ),
    (
        r#"a=(b a c); for k in "${!a[@]}"; do echo "$k:${a[$k]}"; done; echo "${a[@]:0:0}|""#,
        r#"0:b
1:a
2:c
|
"#,
        0,
    ),
    (
        r#"a=(1 2); echo ${a[-5]}x; echo st=$?"#,
        r#"x
st=0
"#,
        0,
    ),
    (
        r#"a=(x); a[2]+=y; a[0]+=z; declare -p a"#,
        r#"declare -a a=([0]="xz" [2]="y")
"#,
        0,
    ),
    (
        r#"a=($'t\tab' 'q"d' 'd$'); declare -p a"#,
        r#"declare -a a=([0]=$'t\tab' [1]="q\"d" [2]="d\$")
"#,
        0,
    ),
    (
        r#"a=(1 2 3); echo "${a[@]:1}" "${a[*]:0:2}"; v=$(echo "${a[@]}"); echo "$v""#,
        r#"2 3 1 2
1 2 3
"#,
        0,
    ),
    (
        r#"a=(k); export a; env | grep -c '^a=' ; printenv a; echo st=$?"#,
        r#"0
st=1
"#,
        0,
    ),
    (
        r#"a=(1 2 3); (( a[1]++ )); (( a[2] += 10 )); echo $(( a[0] + a[1] )) "${a[@]}"; i=0; (( a[i+2] = 7 )); echo "${a[*]}"; echo $(( a[-1] * 2 ))"#,
        r#"4 1 3 13
1 3 7
14
"#,
        0,
    ),
    (
        r#"a=(x y); b=${a[1]}; echo "${a[@]}" "$b"; a=("${a[@]}" z); echo "${#a[@]} ${a[2]}""#,
        r#"x y y
3 z
"#,
        0,
    ),
    (
        r#"files=(*.nosuch); echo "${#files[@]} ${files[0]}""#,
        r#"1 *.nosuch
"#,
        0,
    ),
    (
        r#"a=(3 1 2); for x in ${a[@]}; do s=$((s+x)); done; echo $s; echo "${a[@]:1:1}""#,
        r#"6
1
"#,
        0,
    ),
    (
        r#"a=(x y); echo "${!a[*]}"; b=(); echo "[${b[@]}]" "${#b[@]}" "[${!b[@]}]""#,
        r#"0 1
[] 0 []
"#,
        0,
    ),
    (
        r#"a=(1 2 3); unset 'a[-1]'; declare -p a; unset a[0]; declare -p a"#,
        r#"declare -a a=([0]="1" [1]="2")
declare -a a=([1]="2")
"#,
        0,
    ),
    (
        r#"set -u; a=(1); echo "${a[@]}"; echo "${a[3]}"; echo notreached"#,
        r#"1
"#,
        127,
    ),
    // `set -u`: `[@]`/`[*]` of nothing is no error (bash 4.4 on), an unset element is.
    (
        r#"set -u; echo "[${a[@]}]" "[${a[*]}]" "[${!a[@]}]"; a=(); echo "[${a[@]}]" ${#a[@]}; echo "${a[0]}"; echo no"#,
        r#"[] [] []
[] 0
"#,
        127,
    ),
    // ... and counting the elements of what is no array is, with status 1.
    (
        r#"set -u; echo start; echo ${#u[@]}; echo no"#,
        r#"start
"#,
        1,
    ),
    (
        r#"set -u; x=1; echo "${x[@]}"; echo ${#x[@]}; echo no"#,
        r#"1
"#,
        1,
    ),
    (
        r#"set -u; a=(1); echo ${#a[5]}:${#a[@]}; echo "${a[5]}"; echo no"#,
        r#"0:1
"#,
        127,
    ),
    // The `@` operators on arrays: `@A`, `@K` and `@k` on the whole array, the others on
    // each element.
    (
        r#"a=(x "y z" $'t\tq' "it's"); echo "${a[@]@Q}"; echo "${a[*]@A}"; printf "<%s>" "${a[@]@A}"; echo; echo "${a[@]@K}"; printf "<%s>" "${a[@]@k}"; echo; echo "${a[@]@a}" "${a[@]@U}" "${a[@]@u}" "${a[*]@L}" "${a[@]@E}""#,
        "'x' 'y z' $'t\\tq' 'it'\\''s'\ndeclare -a a=([0]=\"x\" [1]=\"y z\" [2]=$'t\\tq' [3]=\"it's\")\n\
         <declare><-a><a=([0]=\"x\" [1]=\"y z\" [2]=$'t\\tq' [3]=\"it's\")>\n\
         0 \"x\" 1 \"y z\" 2 $'t\\tq' 3 \"it's\"\n<0><x><1><y z><2><t\tq><3><it's>\n\
         a a a a X Y Z T\tQ IT'S X Y z T\tq It's x y z t\tq it's x y z t\tq it's\n",
        0,
    ),
    (
        r#"a=(x); a[5]=y; echo "${a[1]@A}|${a[5]@A}|${a[0]@A}|${a[5]@a}|${a[9]@a}"; x=1; echo "${x[@]@A}" "[${u[@]@A}]" "${x[@]@K}" "${x[@]@k}"; declare -i n; echo "${n@A}"; IFS=,; echo "${a[*]@k}" "${a[*]@A}""#,
        r#"declare -a a|declare -a a='y'|declare -a a='x'|a|a
x='1' [] '1' '1'
declare -i n
0,x,5,y declare -a a=([0]="x" [5]="y")
"#,
        0,
    ),
    (
        r#"x="a\`b"; declare -p x; y=$'t\tx'; declare -p y; declare -r y; echo "${y@A}""#,
        r#"declare -- x="a\`b"
declare -- y=$'t\tx'
declare -r y=$'t\tx'
"#,
        0,
    ),
];

#[test]
fn arrays_behave_as_in_bash() {
    for (script, stdout, status) in BASH_CHECKED {
        let mut s = Sandbox::new();
        let (out, err, code) = s.sh(script);
        assert_eq!((out.as_str(), code), (*stdout, *status), "{script}\n{err}");
    }
}

#[test]
fn arrays_persist_and_are_not_exported() {
    let mut s = Sandbox::new();
    s.ok("a=(x 'y z'); a[4]=w");
    assert_eq!(
        s.ok("declare -p a"),
        "declare -a a=([0]=\"x\" [1]=\"y z\" [4]=\"w\")\n"
    );
    assert_eq!(s.ok("printf '<%s>' \"${a[@]}\"; echo"), "<x><y z><w>\n");
    assert_eq!(s.sh("env | grep -c '^a='").0, "0\n");
    assert_eq!(s.ok("a=s; unset a; echo \"[${a[@]}] ${#a[@]}\""), "[] 0\n");
    // A function's local array hides the caller's, which comes back.
    assert_eq!(
        s.ok("g=(1 2 3); f() { local g=(x); echo ${#g[@]}; }; f; echo ${#g[@]}"),
        "1\n3\n"
    );
    let (_, err, code) = s.sh("readonly r=1; r[1]=2");
    assert!(code == 1 && err.contains("readonly"), "{err}");
    let (_, err, code) = s.sh("a[1]=x echo hi");
    assert!(code == 2 && err.contains("not supported"), "{err}");
}

#[test]
fn arrays_count_against_the_variables_bound() {
    let mut s = Sandbox::new();
    let (out, err, code) =
        s.sh("big=$(printf '%1048575s' x); while a+=(\"$big\"); do :; done; echo ${#a[@]}");
    assert!(err.contains("variables too large"), "{err}");
    let n: usize = out.trim().parse().unwrap();
    assert!(code == 0 && n > 20 && n <= exec::MAX_VARS >> 20, "{out}");
    let total = s.state.arrays.bytes() + s.state.vars.values().map(String::len).sum::<usize>();
    assert!(total <= exec::MAX_VARS);
    // Empty elements count too: the loop ends, it does not take the worker's memory.
    let (_, err, _) = s.sh("unset a big; while b[i++]=; do :; done");
    assert!(err.contains("variables too large"), "{err}");
    assert!(s.state.arrays.bytes() <= exec::MAX_VARS);
}
