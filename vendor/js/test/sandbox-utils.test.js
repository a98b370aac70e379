// Tests for sandbox-utils under Node: `node --test vendor/js/test/`.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const u = require("../sandbox-utils");

test("table of objects: union of keys, numbers right-aligned", () => {
  const t = u.table([{ name: "a", n: 1 }, { name: "bbb", n: 22.5, note: { x: 1 } }]);
  assert.equal(
    t,
    [
      "| name |    n | note    |",
      "|------|-----:|---------|",
      "| a    |    1 |         |",
      "| bbb  | 22.5 | {\"x\":1} |",
    ].join("\n"),
  );
});

test("table of arrays, clipping, row limit", () => {
  assert.equal(u.table([[1, "x"], [2]]), "| 0 | 1 |\n|--:|---|\n| 1 | x |\n| 2 |   |");
  const t = u.table([{ s: "abcdefghij" }, { s: "b" }, { s: "c" }], { maxWidth: 4, maxRows: 2 });
  assert.equal(t, "| s    |\n|------|\n| abc… |\n| b    |\n… 1 more rows");
  assert.equal(u.table([]), "(no rows)");
});

test("stats", () => {
  const r = u.stats([3, 1, 4, 1, 5, "2", "x", null, ""]);
  assert.equal(r.count, 6);
  assert.equal(r.sum, 16);
  assert.equal(r.median, 2.5);
  assert.equal(r.min, 1);
  assert.equal(r.max, 5);
  assert.equal(r.p25, 1.25);
  assert.ok(Math.abs(r.stdev - 1.63299) < 1e-4);
  assert.equal(u.stats([{ v: 2 }, { v: 4 }, {}], { key: "v" }).mean, 3);
  assert.ok(Number.isNaN(u.stats([]).mean));
  assert.equal(u.percentile([1, 2, 3, 4], 50), 2.5);
});

test("formatBytes and formatDuration", () => {
  assert.equal(u.formatBytes(10), "10 B");
  assert.equal(u.formatBytes(1536), "1.5 KiB");
  assert.equal(u.formatBytes(5 * 1024 ** 3, { decimals: 2 }), "5 GiB");
  assert.equal(u.formatBytes(-2048), "-2 KiB");
  assert.equal(u.formatDuration(0.25), "250µs");
  assert.equal(u.formatDuration(5.123), "5.12ms");
  assert.equal(u.formatDuration(1500), "1.5s");
  assert.equal(u.formatDuration(93500), "1m 33.5s");
  assert.equal(u.formatDuration(90061000), "1d 1h 1m 1s");
});

test("timeit", () => {
  let calls = 0;
  const r = u.timeit(() => ++calls, { iterations: 5, warmup: 2 });
  assert.equal(calls, 7);
  assert.equal(r.result, 7);
  assert.equal(r.iterations, 5);
  assert.ok(r.minMs <= r.meanMs && r.meanMs <= r.maxMs + 1e-9);
  assert.throws(() => u.timeit(5), TypeError);
});

test("barChart", () => {
  assert.equal(u.barChart({ a: 1, bb: 2 }, { width: 4 }), "a  | ██ 1\nbb | ████ 2");
  assert.equal(u.barChart([["z", 0]]), "z | 0");
  assert.equal(u.barChart({}), "");
});

test("tree from listFiles", () => {
  globalThis.listFiles = () => ["a/", "a/b/", "a/b/x.txt", "a/y.txt", "z.txt"];
  try {
    assert.equal(
      u.tree("."),
      [".", "├── a/", "│   ├── b/", "│   │   └── x.txt", "│   └── y.txt", "└── z.txt"].join("\n"),
    );
    assert.equal(u.tree(".", { maxEntries: 2 }), [".", "├── a/", "│   ├── b/", "… 3 more entries"].join("\n"));
  } finally {
    delete globalThis.listFiles;
  }
});
