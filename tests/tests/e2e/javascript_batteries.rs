//! JavaScript "batteries": the QuickJS `std`/`os` globals and their tuple conventions, the file
//! helpers, path confinement, file handles across a rollback, the vendored packages under
//! `/data/js` (needs `runtimes/vendor-js.sh target/runtimes/data`), and the catalogue that
//! `list_runtimes` embeds, whose examples must all run.

use anyhow::{Context, Result, ensure};
use sandbox_tests::{Reply, Server};
use serde_json::{Value, json};

/// The catalogue the supervisor embeds; every example in it is run below.
const CATALOG: &str = include_str!("../../../vendor/js/catalog.json");

/// Runs `code` in the connection's default JavaScript session and expects success.
async fn ok(server: &Server, code: &str) -> Result<Reply> {
    let reply = server.exec("javascript", code, json!({})).await?;
    ensure!(!reply.is_error, "{code}\n-> {reply:?}");
    Ok(reply)
}

/// Runs `code`, whose completion value must be `JSON.stringify(...)` of something, and returns
/// that something.
async fn value(server: &Server, code: &str) -> Result<Value> {
    let reply = ok(server, code).await?;
    let repr: String = serde_json::from_str(reply.str("result"))
        .with_context(|| format!("result of {code} is not a string: {reply:?}"))?;
    serde_json::from_str(&repr).with_context(|| format!("result of {code} is not JSON: {repr}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn helpers_read_write_and_list_under_app() -> Result<()> {
    let server = Server::start().await?;
    let got = value(
        &server,
        r#"writeJson("a.json", {x: 1, list: [1, 2]});
           writeText("notes/today.txt", "héllo\n");      // creates notes/
           appendText("notes/today.txt", "world\n");
           writeText("/tmp/scratch.txt", "t");
           JSON.stringify({
             x: readJson("a.json").x,
             raw: readText("/app/a.json"),
             text: readText("notes/today.txt"),
             tmp: readText("/tmp/scratch.txt"),
             exists: [fileExists("a.json"), fileExists("notes"), fileExists("nope.txt")],
             flat: listFiles(),
             deep: listFiles(".", {recursive: true}),
           })"#,
    )
    .await?;
    assert_eq!(got["x"], 1);
    assert_eq!(
        got["raw"],
        "{\n  \"x\": 1,\n  \"list\": [\n    1,\n    2\n  ]\n}\n"
    );
    assert_eq!(got["text"], "héllo\nworld\n");
    assert_eq!(got["tmp"], "t");
    assert_eq!(got["exists"], json!([true, true, false]));
    assert_eq!(got["flat"], json!(["a.json", "notes/"]));
    assert_eq!(got["deep"], json!(["a.json", "notes/", "notes/today.txt"]));

    let errors = value(
        &server,
        r#"const caught = (f) => { try { f(); return null } catch (e) { return [e.name, e.code, e.errno, e.path, e.message] } };
           JSON.stringify([
             caught(() => readText("missing.txt")),
             caught(() => readJson("notes/today.txt")),
             caught(() => writeText("x.txt", {a: 1})),
             caught(() => writeText("/data/x.txt", "read-only")),
             caught(() => readText("notes")),
           ])"#,
    )
    .await?;
    assert_eq!(errors[0][0], "Error");
    assert_eq!(errors[0][1], "ENOENT");
    assert_eq!(errors[0][2], 44);
    assert_eq!(errors[0][3], "/app/missing.txt");
    assert_eq!(
        errors[0][4],
        "ENOENT: No such file or directory, readText 'missing.txt' (/app/missing.txt)"
    );
    assert_eq!(errors[1][0], "SyntaxError");
    assert!(
        errors[1][4]
            .as_str()
            .unwrap_or("")
            .starts_with("readJson 'notes/today.txt': "),
        "{errors}"
    );
    assert_eq!(errors[2][0], "TypeError");
    assert!(
        errors[2][4]
            .as_str()
            .unwrap_or("")
            .contains("use writeJson"),
        "{errors}"
    );
    assert_eq!(
        errors[3][1], "EPERM",
        "writing under /data must fail: {errors}"
    );
    assert!(
        errors[3][4]
            .as_str()
            .unwrap_or("")
            .ends_with("; /data is read-only"),
        "{errors}"
    );
    assert_eq!(errors[4][1], "EISDIR", "{errors}");

    // An uncaught helper error points at the user's line, not at the library.
    let thrown = server
        .exec("javascript", "\nreadText('gone.txt')", json!({}))
        .await?;
    assert!(thrown.is_error);
    assert_eq!(thrown.str("error_type"), "runtime_error");
    assert!(
        thrown.str("stderr").contains("<cell 3>:2"),
        "{}",
        thrown.str("stderr")
    );
    assert!(
        !thrown.str("stderr").contains("<sandbox:"),
        "{}",
        thrown.str("stderr")
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn std_and_os_keep_quickjs_conventions() -> Result<()> {
    let server = Server::start().await?;
    let got = value(
        &server,
        r#"const f = std.open("t.txt", "w+");
           f.puts("one\n", "two\n"); f.printf("%03d|%-4s|%.2f|%x|%ld\n", 7, "ab", 3.14159, 255, 2n ** 40n);
           const pos = f.tell();
           f.seek(0, std.SEEK_SET);
           const lines = [f.getline(), f.getline(), f.getline(), f.getline(), f.eof()];
           f.seek(4, std.SEEK_SET);
           const rest = f.readAsString();
           const closed = f.close();
           let afterClose; try { f.getline() } catch (e) { afterClose = e.name + ": " + e.message }
           const errObj = {};
           const [st, stErr] = os.stat("t.txt");
           JSON.stringify({
             pos, lines, rest, closed, afterClose,
             missing: [std.open("missing.txt", "r", errObj), errObj.errno, std.loadFile("missing.txt")],
             loaded: std.loadFile("t.txt").length,
             stat: [st.size, (st.mode & os.S_IFMT) === os.S_IFREG, stErr, typeof st.mtime],
             statMissing: os.stat("missing.txt"),
             cwd: os.getcwd(),
             mkdir: [os.mkdir("d"), os.mkdir("d") === -std.Error.EEXIST],
             readdir: os.readdir("d"),
             readdirMissing: os.readdir("missing"),
             rename: [os.rename("t.txt", "d/t.txt"), os.readdir("d")[0].includes("t.txt")],
             realpath: [os.realpath("d/../d/t.txt"), os.realpath("missing")],
             remove: [os.remove("d"), os.remove("d/t.txt"), os.remove("d"), os.remove("d")],
             chdir: [os.chdir("/tmp"), os.getcwd()[0], (writeText("rel.txt", "x"), fileExists("/tmp/rel.txt")), os.chdir("/app")],
             strerror: std.strerror(std.Error.ENOENT),
             env: [std.getenv("HOME"), std.getenv("NOPE")],
             sprintf: std.sprintf("%5s|%-3d|%c|%e", "x", 4, 65, 1234.5),
             ext: std.parseExtJSON("{a: 1, // comment\n 'b': [0x10, +2,], /* c */ c: 'x',}"),
             platform: os.platform,
           })"#,
    )
    .await?;
    assert_eq!(got["pos"], 39);
    assert_eq!(
        got["lines"],
        json!(["one", "two", "007|ab  |3.14|ff|1099511627776", null, true])
    );
    assert_eq!(got["rest"], "two\n007|ab  |3.14|ff|1099511627776\n");
    assert_eq!(got["closed"], 0);
    assert_eq!(got["afterClose"], "TypeError: invalid file handle");
    assert_eq!(got["missing"], json!([null, 44, null]));
    assert_eq!(got["loaded"], 39);
    assert_eq!(got["stat"], json!([39, true, 0, "number"]));
    assert_eq!(got["statMissing"], json!([null, 44]));
    assert_eq!(got["cwd"], json!(["/app", 0]));
    assert_eq!(got["mkdir"], json!([0, true]));
    assert_eq!(got["readdir"], json!([[".", ".."], 0]));
    assert_eq!(got["readdirMissing"], json!([[], 44]));
    assert_eq!(got["rename"], json!([0, true]));
    assert_eq!(got["realpath"], json!([["/app/d/t.txt", 0], ["", 44]]));
    assert_eq!(
        got["remove"],
        json!([-55, 0, 0, -44]),
        "ENOTEMPTY, ok, ok, ENOENT"
    );
    assert_eq!(got["chdir"], json!([0, "/tmp", true, 0]));
    assert_eq!(got["strerror"], "No such file or directory");
    assert_eq!(got["env"], json!(["/app", null]));
    assert_eq!(got["sprintf"], "    x|4  |A|1.234500e+03");
    assert_eq!(got["ext"], json!({"a": 1, "b": [16, 2], "c": "x"}));
    assert_eq!(got["platform"], "wasi");

    let out = ok(
        &server,
        r#"std.puts("a"); std.out.puts("b\n"); std.printf("%d\n", 3); std.err.puts("e\n"); console.warn("w"); std.in.getline()"#,
    )
    .await?;
    assert_eq!(out.str("stdout"), "ab\n3\n");
    assert_eq!(out.str("stderr"), "e\nw\n");
    assert_eq!(out.str("result"), "null");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn paths_outside_the_mounts_do_not_exist() -> Result<()> {
    let server = Server::start().await?;
    let got = value(
        &server,
        r#"const caught = (f) => { try { f(); return "no error" } catch (e) { return e.code + " " + e.path } };
           JSON.stringify({
             climb: caught(() => readText("../../etc/passwd")),
             absolute: caught(() => readText("/etc/passwd")),
             write: caught(() => writeText("/etc/evil", "x")),
             deepClimb: caught(() => readText("/app/../../../../etc/shadow")),
             exists: fileExists("/etc/passwd"),
             stdLoad: std.loadFile("/etc/passwd"),
             stdOpen: std.open("/proc/self/environ", "r"),
             stat: os.stat("../../etc/passwd"),
             realpath: os.realpath("/etc"),
             readdirEtc: os.readdir("/etc"),
             root: os.readdir("/")[0],
             rootList: listFiles("/"),
             mkdir: os.mkdir("/evil"),
             chdir: os.chdir("/etc"),
             rename: os.rename("/etc/hosts", "stolen"),
           })"#,
    )
    .await?;
    assert_eq!(got["climb"], "ENOENT /etc/passwd");
    assert_eq!(got["absolute"], "ENOENT /etc/passwd");
    assert_eq!(got["write"], "ENOENT /etc/evil");
    assert_eq!(got["deepClimb"], "ENOENT /etc/shadow");
    assert_eq!(got["exists"], false);
    assert_eq!(got["stdLoad"], Value::Null);
    assert_eq!(got["stdOpen"], Value::Null);
    assert_eq!(got["stat"], json!([null, 44]));
    assert_eq!(got["realpath"], json!(["", 44]));
    assert_eq!(got["readdirEtc"], json!([[], 44]));
    assert_eq!(got["root"], json!([".", "..", "app", "data", "tmp"]));
    assert_eq!(got["rootList"], json!(["app/", "data/", "tmp/"]));
    assert_eq!(got["mkdir"], -44);
    assert_eq!(got["chdir"], -44);
    assert_eq!(got["rename"], -44);

    let message = server
        .exec("javascript", "readText('../../etc/passwd')", json!({}))
        .await?;
    assert!(message.is_error);
    assert!(
        message.str("stderr").contains(
            "ENOENT: No such file or directory, readText '../../etc/passwd' (/etc/passwd); only /app, /data, /tmp exist"
        ),
        "{}",
        message.str("stderr")
    );
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn open_files_fail_cleanly_after_a_rollback() -> Result<()> {
    let server = Server::start().await?;
    ok(
        &server,
        r#"var kept = std.open("kept.txt", "w"); kept.puts("before\n");
           var fd = os.open("raw.bin", os.O_RDWR | os.O_CREAT);"#,
    )
    .await?;
    // Exhausting the stack traps the module; the host restores the snapshot into a fresh
    // instance whose WASI context has the preopens but not these two files.
    let deep = server
        .exec(
            "javascript",
            "function down(n) { let a = [n, n + 1, n + 2]; return down(n + 1) + a[0] } down(0)",
            json!({}),
        )
        .await?;
    assert_eq!(deep.str("error_type"), "stack_overflow", "{deep:?}");
    let got = value(
        &server,
        r#"let stale; try { kept.puts("after\n") } catch (e) { stale = [e.code, e.message] }
           const fresh = std.open("fresh.txt", "w"); fresh.puts("new\n"); fresh.close();
           JSON.stringify({
             stale,
             tell: (() => { try { kept.tell(); return "no error" } catch (e) { return e.code } })(),
             osWrite: os.write(fd, new ArrayBuffer(1), 0, 1),
             osClose: os.close(fd),
             close: kept.close(),
             closeAgain: (() => { try { kept.close(); return "no error" } catch (e) { return e.message } })(),
             fresh: readText("fresh.txt"),
             kept: readText("kept.txt"),
           })"#,
    )
    .await?;
    assert_eq!(got["stale"][0], "EBADF");
    assert!(
        got["stale"][1]
            .as_str()
            .unwrap_or("")
            .contains("open it again"),
        "{got}"
    );
    assert_eq!(got["tell"], "EBADF");
    assert_eq!(got["osWrite"], -8);
    assert_eq!(got["osClose"], -8);
    assert_eq!(got["close"], 0);
    assert_eq!(got["closeAgain"], "invalid file handle");
    assert_eq!(got["fresh"], "new\n");
    assert_eq!(got["kept"], "before\n");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn vendored_packages_load_and_work() -> Result<()> {
    let server = Server::start().await?;
    let got = value(
        &server,
        r#"const csv = requireVendor("csv-simple");
           const ju = requireVendor("json-utils");
           const s = requireVendor("string-utils");
           const u = requireVendor("sandbox-utils");
           const _ = requireVendor("lodash");
           const dayjs = requireVendor("dayjs");
           dayjs.extend(requireVendor("dayjs/plugin/utc"));
           const yaml = requireVendor("js-yaml");
           writeText("people.csv", 'name,age,city\nAda,36,"London, UK"\nAlan,41,Wilmslow\n');
           const people = csv.readFile("people.csv", {typed: true});
           JSON.stringify({
             csv: people,
             csvOut: csv.stringify(people, {columns: ["name", "city"]}),
             tsv: csv.parse("a\tb\n1\t2", {delimiter: "\t"}),
             get: ju.get({a: [{b: 5}]}, "a[0].b"),
             set: ju.set({}, "x.y[0]", 1),
             valid: ju.validate({id: "7"}, {type: "object", properties: {id: {type: "integer"}}}),
             diff: ju.diff({a: 1}, {a: 2, b: 3}),
             slug: s.slugify("Héllo, Wörld!"),
             cases: [s.camelCase("user_id"), s.snakeCase("parseHTTPResponse"), s.titleCase("war and peace")],
             truncate: s.truncate("a long sentence", 9),
             table: u.table([{n: "a", v: 1}]),
             stats: u.stats(people, {key: "age"}).mean,
             bytes: u.formatBytes(1536),
             lodash: [_.VERSION, _.groupBy([1.3, 2.1, 2.4], Math.floor), _.sortBy(people, "age").map((p) => p.name)],
             dayjs: [dayjs("2024-01-31").add(1, "month").format("YYYY-MM-DD"), dayjs.utc("2024-03-10T12:00:00Z").hour()],
             yaml: [yaml.load("a: 1\nb: [x, y]\n"), yaml.dump({k: [1]})],
             cached: requireVendor("lodash") === _,
             versions: ["lodash", "dayjs", "js-yaml"].map((n) => readJson("/data/js/" + n + "/package.json").version),
           })"#,
    )
    .await?;
    assert_eq!(
        got["csv"],
        json!([
            {"name": "Ada", "age": 36, "city": "London, UK"},
            {"name": "Alan", "age": 41, "city": "Wilmslow"}
        ])
    );
    assert_eq!(
        got["csvOut"],
        "name,city\nAda,\"London, UK\"\nAlan,Wilmslow\n"
    );
    assert_eq!(got["tsv"], json!([{"a": "1", "b": "2"}]));
    assert_eq!(got["get"], 5);
    assert_eq!(got["set"], json!({"x": {"y": [1]}}));
    assert_eq!(
        got["valid"],
        json!({"valid": false, "errors": [{"path": "id", "message": "expected integer, got string"}]})
    );
    assert_eq!(
        got["diff"],
        json!([{"op": "change", "path": "a", "from": 1, "to": 2}, {"op": "add", "path": "b", "to": 3}])
    );
    assert_eq!(got["slug"], "hello-world");
    assert_eq!(
        got["cases"],
        json!(["userId", "parse_http_response", "War and Peace"])
    );
    assert_eq!(got["truncate"], "a long s…");
    assert_eq!(got["table"], "| n | v |\n|---|--:|\n| a | 1 |");
    assert_eq!(got["stats"], 38.5);
    assert_eq!(got["bytes"], "1.5 KiB");
    assert_eq!(
        got["lodash"],
        json!(["4.18.1", {"1": [1.3], "2": [2.1, 2.4]}, ["Ada", "Alan"]])
    );
    assert_eq!(got["dayjs"], json!(["2024-02-29", 12]));
    assert_eq!(
        got["yaml"],
        json!([{"a": 1, "b": ["x", "y"]}, "k:\n  - 1\n"])
    );
    assert_eq!(got["cached"], true);
    assert_eq!(got["versions"], json!(["4.18.1", "1.11.23", "5.5.0"]));

    let errors = value(
        &server,
        r#"const caught = (f) => { try { f(); return "no error" } catch (e) { return e.code + ": " + e.message } };
           JSON.stringify([caught(() => requireVendor("nope")), caught(() => requireVendor("fs")), caught(() => requireVendor("../app/x"))])"#,
    )
    .await?;
    let text = errors.to_string();
    assert!(
        text.contains("no vendored package 'nope' (available: "),
        "{text}"
    );
    assert!(text.contains("lodash"), "{text}");
    assert!(text.contains("'fs' is a Node.js built-in module"), "{text}");
    assert!(text.contains("invalid package name '../app/x'"), "{text}");
    server.stop().await
}

/// `(name, result, stdout)` of every catalogue example, in the order they run. The files they
/// see are set up first: notes.txt, config.json, data.csv, sales.csv and a.txt ("hi\n").
const EXAMPLE_ANSWERS: &[(&str, Option<&str>, &str)] = &[
    ("std", Some(r#""hi\n""#), ""),
    // The file exists: its size, not an error string.
    ("os", Some("3"), ""),
    ("readText", Some(r#""n""#), ""),
    ("writeText", None, ""),
    ("appendText", None, ""),
    ("readJson", Some("8080"), ""),
    ("writeJson", None, ""),
    ("fileExists", Some("true"), ""),
    (
        "listFiles",
        Some(
            "[\n  \"a.txt\", \"config.json\", \"data.csv\", \"log.txt\", \"notes.txt\", \"out/\",\n  \"out/report.md\", \"result.json\", \"sales.csv\"\n]",
        ),
        "",
    ),
    ("requireVendor", None, ""),
    ("csv-simple", Some(r#"[ { item: "pen", qty: 2 } ]"#), ""),
    ("json-utils", Some(r#""h1""#), ""),
    ("string-utils", Some(r#""hello-world""#), ""),
    (
        "sandbox-utils",
        None,
        "| city | n |\n|------|--:|\n| Oslo | 1 |\n",
    ),
    (
        "lodash",
        Some(r#"{ Oslo: [ { city: "Oslo", n: 1 } ] }"#),
        "",
    ),
    ("dayjs", Some(r#""2024-02-29""#), ""),
    ("js-yaml", Some("{ a: 1 }"), ""),
];

#[tokio::test(flavor = "multi_thread")]
async fn catalog_is_compact_and_its_examples_run() -> Result<()> {
    assert!(
        CATALOG.len() < 6 * 1024,
        "catalog.json is {} bytes",
        CATALOG.len()
    );
    let catalog: Value = serde_json::from_str(CATALOG)?;
    let mut examples = Vec::new();
    for section in ["modules", "helpers", "packages"] {
        let entries = catalog[section].as_object().context("catalog section")?;
        assert!(!entries.is_empty(), "{section}");
        for (name, entry) in entries {
            assert!(
                entry["signatures"]
                    .as_array()
                    .is_some_and(|s| !s.is_empty()),
                "{name}"
            );
            assert!(
                entry["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}"
            );
            let example = entry["example"].as_str().context("example")?;
            examples.push((name.clone(), example.to_owned()));
        }
    }
    for helper in [
        "readText",
        "writeText",
        "appendText",
        "readJson",
        "writeJson",
        "fileExists",
        "listFiles",
        "requireVendor",
    ] {
        assert!(catalog["helpers"].get(helper).is_some(), "{helper} missing");
    }

    // Every example has its exact answer below, and runs in this order (later ones see the
    // files earlier ones wrote); an example without an expectation fails the test.
    let names: std::collections::BTreeSet<&str> =
        examples.iter().map(|(name, _)| name.as_str()).collect();
    let expected: std::collections::BTreeSet<&str> =
        EXAMPLE_ANSWERS.iter().map(|(name, ..)| *name).collect();
    assert_eq!(names, expected, "one expected answer per catalogue example");

    let server = Server::start().await?;
    // What the examples refer to.
    ok(
        &server,
        r#"writeText("notes.txt", "n"); writeJson("config.json", {port: 8080});
           writeText("data.csv", "a\n1\n"); writeText("sales.csv", "item,qty\npen,2\n");
           writeText("a.txt", "hi\n");
           var cfg = {db: {hosts: ["h1"]}}; var rows = [{city: "Oslo", n: 1}];"#,
    )
    .await?;
    for (name, result, stdout) in EXAMPLE_ANSWERS {
        let example = &examples.iter().find(|(n, _)| n == name).expect("listed").1;
        // A block per example, so their `const`s do not collide in the shared session.
        let reply = server
            .exec("javascript", &format!("{{\n{example}\n}}"), json!({}))
            .await?;
        assert!(
            !reply.is_error,
            "example of {name} failed: {example}\n{reply:?}"
        );
        assert_eq!(
            (
                reply.opt_str("result"),
                reply.str("stdout"),
                reply.str("stderr")
            ),
            (*result, *stdout, ""),
            "example of {name}: {example}"
        );
    }
    // Package versions in the catalogue are the vendored ones.
    for (name, entry) in catalog["packages"].as_object().context("packages")? {
        let version = value(
            &server,
            &format!("JSON.stringify(readJson('/data/js/{name}/package.json').version)"),
        )
        .await?;
        assert_eq!(version, entry["version"], "{name}");
    }
    server.stop().await
}
