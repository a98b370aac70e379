// Tests for csv-simple under Node: `node --test vendor/js/test/`.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const csv = require("../csv-simple");

test("headers become object keys", () => {
  assert.deepEqual(csv.parse("name,age\nAda,36\nAlan,41\n"), [
    { name: "Ada", age: "36" },
    { name: "Alan", age: "41" },
  ]);
});

test("quoted fields: delimiters, doubled quotes, newlines, CRLF", () => {
  const text = 'a,b\r\n"x,1","say ""hi""\nthere"\r\n';
  assert.deepEqual(csv.parse(text), [{ a: "x,1", b: 'say "hi"\nthere' }]);
});

test("delimiter, header: false, typed, trim", () => {
  assert.deepEqual(csv.parse("1;true; 2.5 ;007;x", { delimiter: ";", header: false, typed: true, trim: true }), [
    [1, true, 2.5, "007", "x"],
  ]);
  assert.deepEqual(csv.parse("a\tb\n1\t2", { delimiter: "\t" }), [{ a: "1", b: "2" }]);
});

test("explicit header names, short and long rows, duplicate names", () => {
  assert.deepEqual(csv.parse("1,2\n3", { header: ["x", "y"] }), [
    { x: "1", y: "2" },
    { x: "3", y: "" },
  ]);
  assert.deepEqual(csv.parse("a,a,\n1,2,3,4"), [{ a: "1", a_2: "2", column_3: "3", _extra: ["4"] }]);
});

test("empty input, blank lines, BOM, trailing delimiter", () => {
  assert.deepEqual(csv.parse(""), []);
  assert.deepEqual(csv.parse("\ufeffa,b\n\n1,\n"), [{ a: "1", b: "" }]);
  assert.deepEqual(csv.parse("a,b\n\n1,2", { skipEmptyLines: false }), [
    { a: "", b: "" },
    { a: "1", b: "2" },
  ]);
});

test("an unterminated quote names its line", () => {
  assert.throws(() => csv.parse('a\n"oops\n'), /line 2/);
});

test("stringify quotes what needs quoting and round-trips", () => {
  const rows = [
    { id: 1, text: 'a "quoted", value', note: null },
    { id: 2, text: "multi\nline", extra: " pad" },
  ];
  const text = csv.stringify(rows);
  assert.equal(
    text,
    'id,text,note,extra\n1,"a ""quoted"", value",,\n2,"multi\nline",," pad"\n',
  );
  assert.deepEqual(csv.parse(text, { typed: true }), [
    { id: 1, text: 'a "quoted", value', note: "", extra: "" },
    { id: 2, text: "multi\nline", note: "", extra: " pad" },
  ]);
});

test("stringify options and arrays", () => {
  assert.equal(csv.stringify([[1, "a;b"], [2, "c"]], { delimiter: ";" }), '1;"a;b"\n2;c\n');
  assert.equal(csv.stringify([{ a: 1, b: 2 }], { columns: ["b"], header: false, eol: "\r\n" }), "2\r\n");
  assert.equal(csv.stringify([{ d: new Date(0), o: { k: 1 } }], { quoteAll: true }), '"d","o"\n"1970-01-01T00:00:00.000Z","{""k"":1}"\n');
  assert.equal(csv.stringify([]), "");
});

test("bad arguments", () => {
  assert.throws(() => csv.parse(1), TypeError);
  assert.throws(() => csv.parse("a", { delimiter: "ab" }), TypeError);
  assert.throws(() => csv.stringify("x"), TypeError);
});

test("readFile/writeFile use the sandbox helpers", () => {
  const files = {};
  globalThis.readText = (p) => files[p];
  globalThis.writeText = (p, t) => {
    files[p] = t;
  };
  try {
    csv.writeFile("t.csv", [{ a: 1 }]);
    assert.deepEqual(csv.readFile("t.csv", { typed: true }), [{ a: 1 }]);
  } finally {
    delete globalThis.readText;
    delete globalThis.writeText;
  }
});
