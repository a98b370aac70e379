//! jq's behaviour, natively: filters on values, options, input lines and error words, against
//! what jq 1.6 gives for the same (the end-to-end tests compare whole command lines).

use super::*;

/// The outputs of `program` on `input` (JSON), compact, or the error's message.
fn eval(program: &str, input: &str) -> Result<Vec<String>, String> {
    let filter = compile(program, &[])?;
    let inputs = RcIter::new(std::iter::empty());
    let inputs: &RcIter<dyn Iterator<Item = Result<Val, String>>> = &inputs;
    let vars = [Val::from_map([]).unwrap(), Val::from_map([]).unwrap()];
    let input = parse_json(input).expect("input JSON");
    let mut out = Vec::new();
    for v in filter.run((Ctx::new(vars, inputs), input)) {
        match v {
            Ok(v) => out.push(print::value(&v, Style::COMPACT)),
            Err(e) => return Err(describe(&e).0),
        }
    }
    Ok(out)
}

fn one(program: &str, input: &str) -> String {
    eval(program, input).expect(program).join(" ")
}

#[test]
fn filters_as_jq_1_6_answers_them() {
    let cases = [
        (".a", r#"{"a":1}"#, "1"),
        (".a.b.c", "{}", "null"),
        (".[1]", "null", "null"),
        ("[.[] | . * 2]", "[1,2.5]", "[2,5]"),
        ("map(select(. > 1))", "[1,2,3]", "[2,3]"),
        ("10 / 4, 10 / 2", "null", "2.5 5"),
        (r#""\(1.0) \(10/2) \([1,2])""#, "null", r#""1 5 [1,2]""#),
        ("tostring, tojson", "[1,1.5]", r#""[1,1.5]" "[1,1.5]""#),
        (
            "keys, keys_unsorted",
            r#"{"b":1,"a":2}"#,
            r#"["a","b"] ["b","a"]"#,
        ),
        ("to_entries", r#"{"a":1}"#, r#"[{"key":"a","value":1}]"#),
        (r#"join("-")"#, r#"["a",1,null,true]"#, r#""a-1--true""#),
        ("@csv", r#"[1,"a\"b",null,true]"#, r#""1,\"a\"\"b\",,true""#),
        ("@tsv", r#"["a\tb","c"]"#, r#""a\\tb\tc""#),
        ("@sh", r#"["it's",1]"#, r#""'it'\\''s' 1""#),
        ("@html", r#""<'&\">""#, r#""&lt;&apos;&amp;&quot;&gt;""#),
        ("@uri", r#""a b/é""#, r#""a%20b%2F%C3%A9""#),
        ("@base64, (@base64 | @base64d)", r#""hi""#, r#""aGk=" "hi""#),
        (r#"test("B"; "i"), test("^b")"#, r#""abc""#, "true false"),
        (
            r#"[match("(?<x>o+)(z)?")]"#,
            r#""foo""#,
            r#"[{"offset":1,"length":2,"string":"oo","captures":[{"offset":1,"length":2,"string":"oo","name":"x"},{"offset":-1,"string":null,"length":0,"name":null}]}]"#,
        ),
        (
            r#"capture("(?<a>.)(?<b>.)")"#,
            r#""xy""#,
            r#"{"a":"x","b":"y"}"#,
        ),
        (
            r#"sub("o"; "0"), gsub("o"; "0")"#,
            r#""foo""#,
            r#""f0o" "f00""#,
        ),
        (
            r#"gsub("(?<d>[0-9])"; "<\(.d)>")"#,
            r#""a1b2""#,
            r#""a<1>b<2>""#,
        ),
        (
            r#"[scan("[0-9]+")], split(", *"; null)"#,
            r#""1, 22,3""#,
            r#"["1","22","3"] ["1","22","3"]"#,
        ),
        (
            "[limit(0; 1, 2)], [limit(2; range(9))]",
            "null",
            "[1] [0,1]",
        ),
        ("ltrimstr(1), ltrimstr(\"a\")", r#""ab""#, r#""ab" "b""#),
        ("[paths]", r#"{"a":[1]}"#, r#"[["a"],["a",0]]"#),
        ("[tostream]", "[1,[2]]", "[[[0],1],[[1,0],2],[[1,0]],[[1]]]"),
        ("setpath([\"a\",1]; 5)", "null", r#"{"a":[null,5]}"#),
        ("delpaths([[0],[2]])", "[1,2,3]", "[2]"),
        (".a[2] = 1", "{}", r#"{"a":[null,null,1]}"#),
        ("from_entries", r#"[{"key":"a","value":1}]"#, r#"{"a":1}"#),
        (
            "1e1000, -0.0, 1e17, 1e-5, 100000000000000000000",
            "null",
            "1.7976931348623157e+308 -0 1e+17 1e-05 1e+20",
        ),
        (
            "todate, (todate | fromdate)",
            "1425599621",
            r#""2015-03-05T23:53:41Z" 1425599621"#,
        ),
        (
            r#"strftime("%Y-%m-%d"), gmtime"#,
            "0",
            r#""1970-01-01" [1970,0,1,0,0,0,4,0]"#,
        ),
        ("[.[] | numbers]", r#"[1,"a",null]"#, "[1]"),
        ("$__loc__", "null", r#"{"file":"<top-level>","line":1}"#),
    ];
    for (program, input, want) in cases {
        assert_eq!(one(program, input), want, "{program} on {input}");
    }
}

#[test]
fn errors_in_jq_words() {
    let cases = [
        (".a", "1", r#"Cannot index number with string "a""#),
        (".[0]", r#""x""#, "Cannot index string with number"),
        (".[]", "1", "Cannot iterate over number (1)"),
        (
            ". + 1",
            r#"{"a":1}"#,
            r#"object ({"a":1}) and number (1) cannot be added"#,
        ),
        (
            ". - 1",
            "[]",
            "array ([]) and number (1) cannot be subtracted",
        ),
        (
            ". / 0",
            "1",
            "number (1) and number (0) cannot be divided because the divisor is zero",
        ),
        ("length", "true", "boolean (true) has no length"),
        ("keys", "1", "number (1) has no keys"),
        ("error(\"custom\")", "null", "custom"),
        (
            r#"test("a"; "q")"#,
            r#""a""#,
            "q is not a valid modifier string",
        ),
        ("input", "null", "No more inputs"),
        (
            ". + 1",
            r#"{"aaaaaaaaaaaaaaaaaaa":1}"#,
            r#"object ({"aaaaaaaaa...) and number (1) cannot be added"#,
        ),
    ];
    for (program, input, want) in cases {
        assert_eq!(
            eval(program, input),
            Err(want.to_owned()),
            "{program} on {input}"
        );
    }
}

#[test]
fn compile_errors_name_what_is_missing() {
    let e = compile("foo", &[]).err().unwrap();
    assert!(e.starts_with("jq: error: foo/0 is not defined"), "{e}");
    assert!(e.ends_with("jq: 1 compile error"), "{e}");
    let e = compile("$x", &[]).err().unwrap();
    assert!(e.contains("$x is not defined"), "{e}");
    let e = compile("map(", &[]).err().unwrap();
    assert!(e.contains("syntax error"), "{e}");
    assert!(compile("$x", &[("x".into(), Val::Null)]).is_ok());
}

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_owned).collect()
}

#[test]
fn options_as_jq_reads_them() {
    let o = parse_options(&words("-rc .a f.json --arg x 1 --argjson y [2] g.json"))
        .ok()
        .unwrap();
    assert!(o.raw_out && o.style.indent == 0);
    assert_eq!(o.program.as_deref(), Some(".a"));
    assert_eq!(o.files, ["f.json", "g.json"]);
    assert_eq!(o.named.len(), 2);
    let o = parse_options(&words("-n --args $ARGS a b")).ok().unwrap();
    assert_eq!(o.positional.len(), 2);
    assert!(o.files.is_empty());
    let o = parse_options(&words("--tab -S -e -j .")).ok().unwrap();
    assert!(o.style.tab && o.style.sort_keys && o.exit_status && o.join);
    let o = parse_options(&words("-n -1")).ok().unwrap();
    assert_eq!(o.program.as_deref(), Some("-1"));
    let o = parse_options(&words("--indent 3 .")).ok().unwrap();
    assert_eq!(o.style.indent, 3);
    for refused in [
        "-C .",
        "-Z .",
        "-rZ .",
        "--foo .",
        "--indent 9 .",
        "--arg x",
        "--run-tests",
    ] {
        let Err(Stop(msg, code)) = parse_options(&words(refused)) else {
            panic!("{refused} taken");
        };
        assert_eq!(code, 2, "{refused}: {msg}");
    }
    let Err(Stop(msg, _)) = parse_options(&words("-C .")) else {
        panic!("-C taken");
    };
    assert!(msg.contains("-C") && msg.contains("colour"), "{msg}");
}

#[test]
fn input_lines_as_jq_counts_them() {
    let lines = |text: &str| -> Vec<usize> { parse_stream(text).0.iter().map(|v| v.1).collect() };
    assert_eq!(lines("1\n2\n3\n"), [1, 2, 3]);
    assert_eq!(lines("1 2\n3"), [1, 1, 1]);
    assert_eq!(lines("{\n \"a\": 1\n}\n"), [3]);
    assert_eq!(lines("{\n \"a\": 1\n}"), [2]);
    assert_eq!(lines("[1,\n2]\n\n\n"), [2]);
    let (values, error) = parse_stream("1 {bad");
    assert_eq!(values.len(), 1);
    assert!(error.is_some());
}

#[test]
fn pretty_output_as_jq_writes_it() {
    let v = parse_json(r#"{"b":[1,{}],"a":[],"c":"é"}"#).unwrap();
    let style = Style {
        indent: 2,
        ..Style::default()
    };
    assert_eq!(
        print::value(&v, style),
        "{\n  \"b\": [\n    1,\n    {}\n  ],\n  \"a\": [],\n  \"c\": \"é\"\n}"
    );
    let sorted = Style {
        sort_keys: true,
        ascii: true,
        ..Style::COMPACT
    };
    assert_eq!(
        print::value(&v, sorted),
        r#"{"a":[],"b":[1,{}],"c":"\u00e9"}"#
    );
    let tab = Style {
        tab: true,
        ..Style::COMPACT
    };
    assert_eq!(print::value(&parse_json("[1]").unwrap(), tab), "[\n\t1\n]");
}
