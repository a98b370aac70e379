//! Vendored Python packages (`/data/site-packages`, built by `runtimes/vendor-python.sh` from
//! `vendor/python/requirements.lock`): every locked distribution imports inside the sandbox
//! without any `sys.path` change and does one real thing, `/data` stays read-only, and
//! `vendor/python/import-fuel.json` has a measurement for every distribution.

use std::collections::BTreeSet;

use anyhow::bail;
use sandbox_tests::Server;
use serde_json::{Value, json};

const LOCK: &str = include_str!("../../../vendor/python/requirements.lock");
const IMPORT_FUEL: &str = include_str!("../../../vendor/python/import-fuel.json");

/// One exercise of some vendored distributions: what it covers (distribution names as in the
/// lock), the code, and the exact stdout it must print. The cases share one session, in order.
struct Case {
    covers: &'static str,
    code: &'static str,
    stdout: &'static str,
}

const CASES: &[Case] = &[
    Case {
        covers: "pyyaml",
        code: r##"import yaml
doc = yaml.safe_load("a: [1, 2]\nb: {c: x}\n")
print(doc, yaml.__with_libyaml__, yaml.safe_dump({"k": [1, "two"]}, default_flow_style=True).strip())
"##,
        stdout: r##"{'a': [1, 2], 'b': {'c': 'x'}} False {k: [1, two]}
"##,
    },
    Case {
        covers: "tomli tomli-w tomlkit",
        code: r##"import tomli, tomli_w, tomlkit
doc = tomlkit.parse("# keep me\na = 1\n")
doc["a"] = 2
print(tomli.loads('x = 1\n[t]\ny = "z"\n'), repr(tomli_w.dumps({"t": {"y": "z"}})), repr(tomlkit.dumps(doc)))
"##,
        stdout: r##"{'x': 1, 't': {'y': 'z'}} '[t]\ny = "z"\n' '# keep me\na = 2\n'
"##,
    },
    Case {
        covers: "xmltodict json5 jmespath",
        code: r##"import xmltodict, json5, jmespath
print(xmltodict.parse("<r><i>1</i><i>2</i></r>"))
print(json5.loads("{a: 1, // comment\n b: 'x', c: [1,],}"))
people = {"people": [{"name": "a", "age": 20}, {"name": "b", "age": 40}]}
print(jmespath.search("people[?age > `30`].name", people))
"##,
        stdout: r##"{'r': {'i': ['1', '2']}}
{'a': 1, 'b': 'x', 'c': [1]}
['b']
"##,
    },
    Case {
        covers: "openpyxl et-xmlfile xlsxwriter",
        code: r##"import openpyxl, xlsxwriter, et_xmlfile
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Data"
ws.append(["n", "square"])
for i in range(1, 4):
    ws.append([i, i * i])
ws["C1"] = "=SUM(B2:B4)"
wb.save("/app/book.xlsx")
sheet = openpyxl.load_workbook("/app/book.xlsx")["Data"]
print([[c.value for c in row] for row in sheet.iter_rows()])
stream = openpyxl.Workbook(write_only=True)  # streams rows through et_xmlfile
rows = stream.create_sheet("s")
rows.append([1, 2])
stream.save("/app/stream.xlsx")
book = xlsxwriter.Workbook("/app/writer.xlsx")
book.add_worksheet("W").write_row(0, 0, ["x", 42])
book.close()
print(openpyxl.load_workbook("/app/stream.xlsx")["s"]["B1"].value,
      openpyxl.load_workbook("/app/writer.xlsx")["W"]["B1"].value, et_xmlfile.xmlfile.__name__)
"##,
        stdout: r##"[['n', 'square', '=SUM(B2:B4)'], [1, 1, None], [2, 4, None], [3, 9, None]]
2 42 xmlfile
"##,
    },
    Case {
        covers: "pypdf",
        code: r##"from pypdf import PdfReader, PdfWriter
content = b"BT /F1 12 Tf 10 50 Td (Hello PDF) Tj ET"
objects = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R"
    b" /Resources << /Font << /F1 5 0 R >> >> >>",
    b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
]
pdf, offsets = bytearray(b"%PDF-1.4\n"), []
for number, body in enumerate(objects, 1):
    offsets.append(len(pdf))
    pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
xref = len(pdf)
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
pdf += b"".join(b"%010d 00000 n \n" % o for o in offsets)
pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
open("/app/hello.pdf", "wb").write(pdf)
writer = PdfWriter()
writer.append("/app/hello.pdf")
writer.add_blank_page(width=300, height=100)
writer.add_metadata({"/Title": "Report"})
writer.write("/app/report.pdf")
reader = PdfReader("/app/report.pdf")
print(repr(reader.pages[0].extract_text()), len(reader.pages), reader.metadata.title)
"##,
        stdout: r##"'Hello PDF' 2 Report
"##,
    },
    Case {
        covers: "mammoth cobble",
        code: r##"import zipfile, mammoth, cobble
ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
with zipfile.ZipFile("/app/memo.docx", "w") as z:
    z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
    z.writestr("_rels/.rels", '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
    z.writestr("word/document.xml", f'<?xml version="1.0"?><w:document {ns}><w:body><w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>docx</w:t></w:r></w:p></w:body></w:document>')
with open("/app/memo.docx", "rb") as f:
    print(mammoth.convert_to_html(f).value)

@cobble.data
class Point:
    x = cobble.field()
    y = cobble.field()

print(Point(1, 2) == Point(x=1, y=2))
"##,
        stdout: r##"<p>Hello <strong>docx</strong></p>
True
"##,
    },
    Case {
        covers: "tabulate",
        code: r##"from tabulate import tabulate
print(tabulate([["apple", 3, 1.5], ["kiwi", 12, 0.25]], headers=["fruit", "n", "price"], tablefmt="github"))
"##,
        stdout: r##"| fruit   |   n |   price |
|---------|-----|---------|
| apple   |   3 |    1.5  |
| kiwi    |  12 |    0.25 |
"##,
    },
    Case {
        covers: "jinja2 markupsafe",
        code: r##"import jinja2, markupsafe
env = jinja2.Environment(autoescape=True)
template = env.from_string("{% for u in users %}<li>{{ u.name|title }}</li>{% endfor %}")
print(template.render(users=[{"name": "ada"}, {"name": "<bob>"}]))
print(markupsafe.escape("<a&b>"), markupsafe._escape_inner.__module__)
"##,
        stdout: r##"<li>Ada</li><li>&lt;Bob&gt;</li>
&lt;a&amp;b&gt; markupsafe._native
"##,
    },
    Case {
        covers: "markdown",
        code: r##"import markdown
print(markdown.markdown("# Title\n\nSome *text* and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |", extensions=["tables"]))
"##,
        stdout: r##"<h1>Title</h1>
<p>Some <em>text</em> and <code>code</code>.</p>
<table>
<thead>
<tr>
<th>a</th>
<th>b</th>
</tr>
</thead>
<tbody>
<tr>
<td>1</td>
<td>2</td>
</tr>
</tbody>
</table>
"##,
    },
    Case {
        covers: "rich pygments markdown-it-py mdurl",
        code: r##"import io, markdown_it, mdurl
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer
from rich.console import Console
from rich.table import Table
console = Console(file=io.StringIO(), width=30, color_system=None)
table = Table("key", "value")
table.add_row("a", "1")
console.print(table)
console.print("[bold]done[/bold]")
print(console.file.getvalue(), end="")
print(highlight("x = 1", PythonLexer(), HtmlFormatter(nowrap=True)), end="")
print(markdown_it.MarkdownIt().render("**b**"), end="")
print(mdurl.parse("https://example.com/a?b=1").hostname)
"##,
        stdout: r##"┏━━━━━┳━━━━━━━┓
┃ key ┃ value ┃
┡━━━━━╇━━━━━━━┩
│ a   │ 1     │
└─────┴───────┘
done
<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>
<p><strong>b</strong></p>
example.com
"##,
    },
    Case {
        covers: "python-slugify text-unidecode",
        code: r##"from slugify import slugify
from text_unidecode import unidecode
print(slugify("Héllo, Wörld! 2024"), unidecode("Ærøskøbing"))
"##,
        stdout: r##"hello-world-2024 AEroskobing
"##,
    },
    Case {
        covers: "chardet",
        code: r##"import chardet
sample = ("Съешь же ещё этих мягких французских булок, да выпей же чаю. " * 4).encode("cp1251")
print(chardet.detect(sample)["encoding"])
"##,
        stdout: r##"Windows-1251
"##,
    },
    Case {
        covers: "pyparsing sqlparse",
        code: r##"import pyparsing as pp, sqlparse
expr = pp.Word(pp.nums) + pp.one_of("+ -") + pp.Word(pp.nums)
print(expr.parse_string("12 + 30").as_list())
print(sqlparse.format("select a, b from t where x = 1", reindent=True, keyword_case="upper"))
"##,
        stdout: r##"['12', '+', '30']
SELECT a,
       b
FROM t
WHERE x = 1
"##,
    },
    Case {
        covers: "humanize",
        code: r##"import datetime, humanize
print(humanize.naturalsize(3_000_000), humanize.intcomma(1234567), humanize.ordinal(3),
      humanize.naturaldelta(datetime.timedelta(hours=2)))
"##,
        stdout: r##"3.0 MB 1,234,567 3rd 2 hours
"##,
    },
    Case {
        covers: "sympy mpmath",
        code: r##"import sympy as sp, mpmath
x = sp.symbols("x")
print(sp.solve(x**2 - 4, x), sp.integrate(sp.sin(x), x), sp.factor(x**2 + 2*x + 1))
mpmath.mp.dps = 30
print(mpmath.mp.pi)
"##,
        stdout: r##"[-2, 2] -cos(x) (x + 1)**2
3.14159265358979323846264338328
"##,
    },
    Case {
        covers: "networkx",
        code: r##"import networkx as nx
g = nx.Graph()
g.add_weighted_edges_from([("a", "b", 1), ("b", "d", 1), ("a", "c", 1), ("c", "d", 5)])
print(nx.shortest_path(g, "a", "d", weight="weight"), nx.is_connected(g), nx.degree_centrality(g)["a"])
"##,
        stdout: r##"['a', 'b', 'd'] True 0.6666666666666666
"##,
    },
    Case {
        covers: "python-dateutil six",
        code: r##"import datetime, six
from dateutil import parser, relativedelta, rrule
d = parser.parse("2024-01-31T10:00:00+02:00")
print(d.isoformat(), (d + relativedelta.relativedelta(months=1)).date(), six.PY3)
print([x.day for x in rrule.rrule(rrule.WEEKLY, count=3, dtstart=datetime.datetime(2024, 3, 1))])
"##,
        stdout: r##"2024-01-31T10:00:00+02:00 2024-02-29 True
[1, 8, 15]
"##,
    },
    Case {
        covers: "pytz tzdata",
        code: r##"import datetime, os, pytz, tzdata, zoneinfo
paris = pytz.timezone("Europe/Paris")
print(paris.localize(datetime.datetime(2024, 7, 1, 12)).isoformat())
ny = datetime.datetime(2024, 1, 1, 12, tzinfo=zoneinfo.ZoneInfo("America/New_York"))
print(ny.utcoffset(), os.path.exists("/usr/share/zoneinfo"), bool(tzdata.IANA_VERSION))
"##,
        stdout: r##"2024-07-01T12:00:00+02:00
-1 day, 19:00:00 False True
"##,
    },
    Case {
        covers: "icalendar",
        code: r##"import datetime, icalendar
cal = icalendar.Calendar()
cal.add("prodid", "-//sandbox//")
cal.add("version", "2.0")
event = icalendar.Event()
event.add("summary", "Standup")
event.add("dtstart", datetime.datetime(2024, 5, 1, 9, 30))
event.add("uid", "1@sandbox")
cal.add_component(event)
back = icalendar.Calendar.from_ical(cal.to_ical()).walk("VEVENT")[0]
print(str(back["SUMMARY"]), back.decoded("DTSTART"))
"##,
        stdout: r##"Standup 2024-05-01 09:30:00
"##,
    },
    Case {
        covers: "pydantic typing-extensions",
        code: r##"import pydantic
from typing_extensions import Literal, get_args

class Item(pydantic.BaseModel):
    name: str
    qty: int = 1
    kind: Literal["a", "b"] = "a"

print(Item(name="pen", qty="3").dict())
try:
    Item(name="x", qty="many")
except pydantic.ValidationError as e:
    print(e.errors()[0]["loc"], pydantic.VERSION.split(".")[0], pydantic.compiled, get_args(Literal["a", "b"]))
"##,
        stdout: r##"{'name': 'pen', 'qty': 3, 'kind': 'a'}
('qty',) 1 False ('a', 'b')
"##,
    },
    Case {
        covers: "jsonschema attrs pyrsistent",
        code: r##"import attr, attrs, jsonschema, pyrsistent
schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}
jsonschema.validate({"age": 3}, schema)
print([e.message for e in jsonschema.Draft7Validator(schema).iter_errors({"age": -1})])

@attrs.define
class P:
    x: int
    y: int = 0

print(P(1), attr.asdict(P(2, 3)), pyrsistent.pvector([1, 2]).append(3))
"##,
        stdout: r##"['-1 is less than the minimum of 0']
P(x=1, y=0) {'x': 2, 'y': 3} pvector([1, 2, 3])
"##,
    },
    Case {
        covers: "beautifulsoup4 soupsieve html5lib webencodings",
        code: r##"import bs4, html5lib, soupsieve, webencodings
soup = bs4.BeautifulSoup('<ul><li>a</li><li class="x">b <i>c</i></li></ul>', "html.parser")
print(soup.select_one("li.x").get_text(), [li.text for li in soupsieve.select("li", soup)])
print(bs4.BeautifulSoup("<p>unclosed", "html5lib").body)
print(html5lib.parse("<p>hi", namespaceHTMLElements=False).find(".//p").text, webencodings.lookup("latin1").name)
"##,
        stdout: r##"b c ['a', 'b c']
<body><p>unclosed</p></body>
hi windows-1252
"##,
    },
    Case {
        covers: "markdownify",
        code: r##"import markdownify
html = '<h2>T</h2><p><b>x</b> <a href="https://a.b">l</a></p><ul><li>one</li><li>two</li></ul>'
print(markdownify.markdownify(html, heading_style="ATX").strip())
"##,
        stdout: r##"## T

**x** [l](https://a.b)

* one
* two
"##,
    },
    Case {
        covers: "idna",
        code: r##"import idna
print(idna.encode("münchen.de"), idna.decode("xn--mnchen-3ya.de"))
"##,
        stdout: r##"b'xn--mnchen-3ya.de' münchen.de
"##,
    },
    Case {
        covers: "more-itertools toolz",
        code: r##"import more_itertools as mi, toolz
print(list(mi.chunked(range(5), 2)), mi.first([7, 8]), toolz.groupby(len, ["a", "bb", "c"]), toolz.pipe(3, lambda v: v + 1, str))
"##,
        stdout: r##"[[0, 1], [2, 3], [4]] 7 {1: ['a', 'c'], 2: ['bb']} 4
"##,
    },
    Case {
        covers: "packaging",
        code: r##"from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
print(Version("1.10") > Version("1.9"), "1.5" in SpecifierSet(">=1,<2"), Requirement("pkg[x]>=2; python_version>'3'").name)
"##,
        stdout: r##"True True pkg
"##,
    },
    Case {
        covers: "sortedcontainers cachetools",
        code: r##"import cachetools, sortedcontainers
numbers = sortedcontainers.SortedList([5, 1, 3])
numbers.add(2)
cache = cachetools.LRUCache(maxsize=2)
cache["a"], cache["b"] = 1, 2
cache["a"]
cache["c"] = 3
print(list(numbers), numbers.bisect_left(3), sorted(cache))
"##,
        stdout: r##"[1, 2, 3, 5] 2 ['a', 'c']
"##,
    },
    Case {
        covers: "tqdm",
        code: r##"import io, tqdm
bar = io.StringIO()
print(sum(tqdm.tqdm(range(100), file=bar, mininterval=0)), "100/100" in bar.getvalue())
"##,
        stdout: r##"4950 True
"##,
    },
    Case {
        covers: "faker",
        code: r##"from faker import Faker
fake = Faker()
Faker.seed(7)
first = fake.name()
Faker.seed(7)
print(first == fake.name(), "@" in fake.email())
"##,
        stdout: r##"True True
"##,
    },
];

/// The distribution names pinned in the lock (`name==version \`, hashes and comments indented).
fn locked_distributions() -> BTreeSet<&'static str> {
    LOCK.lines()
        .filter(|line| !line.starts_with([' ', '#']))
        .filter_map(|line| line.split_once("==").map(|(name, _)| name))
        .collect()
}

#[test]
fn every_locked_distribution_is_exercised_and_measured() {
    let locked = locked_distributions();
    assert!(locked.len() >= 30, "{locked:?}");
    let covered: BTreeSet<&str> = CASES
        .iter()
        .flat_map(|case| case.covers.split_whitespace())
        .collect();
    assert_eq!(
        covered, locked,
        "every distribution in vendor/python/requirements.lock needs a case here, and only those"
    );

    let fuel: Value = serde_json::from_str(IMPORT_FUEL).expect("import-fuel.json parses");
    let modules = fuel["python"].as_object().expect("a `python` object");
    let measured: BTreeSet<&str> = modules
        .values()
        .filter(|entry| entry["available"] == true && entry["fuel"].as_u64().is_some())
        .filter_map(|entry| entry["package"].as_str())
        .collect();
    let unmeasured: Vec<_> = locked.difference(&measured).collect();
    assert!(
        unmeasured.is_empty(),
        "run runtimes/measure-imports.py: no measurement for {unmeasured:?}"
    );
    let stdlib = modules
        .values()
        .filter(|entry| entry["package"] == "stdlib")
        .count();
    assert!(stdlib >= 40, "{stdlib} stdlib modules measured");
}

#[tokio::test(flavor = "multi_thread")]
async fn vendored_packages_import_and_work() -> anyhow::Result<()> {
    vendored_packages_import_and_work_on("python").await
}

/// The same cases on CPython 3.15 (issue 25: one Python), where a distribution that is also
/// compiled in is imported from the interpreter's own copy.
#[tokio::test(flavor = "multi_thread")]
async fn vendored_packages_import_and_work_on_the_scientific_runtime() -> anyhow::Result<()> {
    vendored_packages_import_and_work_on("python-scientific").await
}

async fn vendored_packages_import_and_work_on(runtime: &str) -> anyhow::Result<()> {
    let server = Server::start().await?;
    // sympy alone needs ~4.4x the default budget to import (see import-fuel.json).
    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "runtime": runtime, "session_id": "vendored", "fuel_budget": 1_000_000_000_000u64, "timeout": 300 }),
        )
        .await?;
    assert!(!created.is_error, "{created:?}");
    let session = json!({ "session_id": "vendored", "timeout": 300 });
    let probe = server
        .exec(
            "python",
            "import sys\n[p for p in sys.path if p.startswith('/data')]",
            session.clone(),
        )
        .await?;
    if probe.str("result") != "['/data/site-packages']" {
        bail!(
            "/data/site-packages is not on sys.path ({probe:?}): run `runtimes/vendor-python.sh target/runtimes/data`"
        );
    }

    let mut failures = Vec::new();
    for case in CASES {
        let reply = server.exec("python", case.code, session.clone()).await?;
        eprintln!(
            "{}: {} fuel, {:.0} ms",
            case.covers,
            reply.u64("fuel_consumed"),
            reply.elapsed.as_secs_f64() * 1000.0
        );
        if reply.is_error || reply.str("stdout") != case.stdout {
            failures.push(format!(
                "[{}]\n--- expected\n{}--- stdout\n{}--- stderr\n{}",
                case.covers,
                case.stdout,
                reply.str("stdout"),
                reply.str("stderr")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn data_is_read_only_and_holds_no_native_code() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let code = r##"import os
attempts = []
for path in ("/data/new.txt", "/data/site-packages/yaml/evil.py", "/data/site-packages/humanize/__init__.py"):
    try:
        with open(path, "a") as f:
            f.write("x")
        attempts.append("written")
    except OSError as e:
        attempts.append(type(e).__name__)
for change in (lambda: os.remove("/data/site-packages/humanize/__init__.py"),
               lambda: os.mkdir("/data/site-packages/__pycache__")):
    try:
        change()
        attempts.append("changed")
    except OSError as e:
        attempts.append(type(e).__name__)
print(attempts)
print([os.path.join(d, f) for d, dirs, files in os.walk("/data/site-packages") for f in files + dirs
       if f == "__pycache__" or f.endswith((".so", ".pyd", ".dll", ".dylib", ".pyc"))])
import humanize
print(humanize.__file__)"##;
    let reply = server.exec("python", code, json!({})).await?;
    assert!(!reply.is_error, "{reply:?}");
    assert_eq!(
        reply.str("stdout"),
        "['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError']\n[]\n/data/site-packages/humanize/__init__.py\n",
        "/data refuses every change, holds no native or compiled file, and imports work: {reply:?}"
    );
    server.stop().await
}
