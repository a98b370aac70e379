// Tests for json-utils under Node: `node --test vendor/js/test/`.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const ju = require("../json-utils");

test("parsePath and formatPath", () => {
  assert.deepEqual(ju.parsePath('a.b[0]["c.d"][\'e\'].f'), ["a", "b", 0, "c.d", "e", "f"]);
  assert.equal(ju.formatPath(["a", 0, "c.d", "ok_1"]), 'a[0]["c.d"].ok_1');
  assert.throws(() => ju.parsePath("a[0"), SyntaxError);
});

test("get / has with defaults", () => {
  const o = { a: { b: [{ c: 1 }, null] }, z: 0 };
  assert.equal(ju.get(o, "a.b[0].c"), 1);
  assert.equal(ju.get(o, "a.b[1].c", "dflt"), "dflt");
  assert.equal(ju.get(o, ["z"], 5), 0);
  assert.equal(ju.get(o, "a.toString", "none"), "none");
  assert.equal(ju.has(o, "a.b[1]"), true);
  assert.equal(ju.has(o, "a.x"), false);
});

test("set creates objects and arrays; unset removes", () => {
  const o = {};
  ju.set(o, "a.list[1].name", "x");
  assert.ok(Array.isArray(o.a.list));
  assert.equal(o.a.list.length, 2);
  assert.deepEqual(o.a.list[1], { name: "x" });
  assert.equal(ju.unset(o, "a.list[0]"), true);
  assert.deepEqual(o, { a: { list: [{ name: "x" }] } });
  assert.equal(ju.unset(o, "a.nope"), false);
  assert.throws(() => ju.set({}, "__proto__.polluted", 1), TypeError);
  assert.equal({}.polluted, undefined);
});

test("deepEqual", () => {
  assert.ok(ju.deepEqual({ a: [1, { b: new Date(5) }] }, { a: [1, { b: new Date(5) }] }));
  assert.ok(!ju.deepEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.ok(!ju.deepEqual([1], { 0: 1 }));
  assert.ok(ju.deepEqual(NaN, NaN));
});

test("diff", () => {
  assert.deepEqual(ju.diff({ a: 1, b: [1], c: { d: true } }, { a: 2, b: [1, 2], e: null }), [
    { op: "change", path: "a", from: 1, to: 2 },
    { op: "add", path: "b[1]", to: 2 },
    { op: "remove", path: "c", from: { d: true } },
    { op: "add", path: "e", to: null },
  ]);
  assert.deepEqual(ju.diff(1, "1"), [{ op: "change", path: "", from: 1, to: "1" }]);
  assert.deepEqual(ju.diff({ x: [1, 2] }, { x: [1, 2] }), []);
});

test("flatten / unflatten", () => {
  const o = { a: { b: [1, { c: 2 }] }, "k y": {}, n: null };
  const flat = ju.flatten(o);
  assert.deepEqual(flat, { "a.b[0]": 1, "a.b[1].c": 2, '["k y"]': {}, n: null });
  assert.deepEqual(ju.unflatten(flat), o);
});

test("validate", () => {
  const schema = {
    type: "object",
    required: ["id", "email"],
    additionalProperties: false,
    properties: {
      id: { type: "integer", minimum: 1 },
      email: { type: "string", pattern: "^[^@]+@[^@]+$" },
      tags: { type: "array", items: { type: "string", maxLength: 3 }, uniqueItems: true },
      role: { enum: ["admin", "user"] },
      score: { type: ["number", "null"], exclusiveMaximum: 10 },
    },
  };
  assert.deepEqual(ju.validate({ id: 3, email: "a@b", tags: ["x"], role: "user", score: null }, schema), {
    valid: true,
    errors: [],
  });
  const r = ju.validate({ id: 0.5, tags: ["toolong", "x", "x"], role: "root", score: 10, other: 1 }, schema);
  assert.equal(r.valid, false);
  assert.deepEqual(
    r.errors.map((e) => e.path + ": " + e.message),
    [
      "email: is required",
      "id: expected integer, got number",
      "tags: items must be unique",
      "tags[0]: must have at most 3 characters",
      'role: must be one of ["admin","user"]',
      "score: must be < 10",
      "other: is not allowed",
    ],
  );
  assert.equal(ju.validate(5, { anyOf: [{ type: "string" }, { minimum: 1 }] }).valid, true);
  assert.equal(ju.validate(5, { oneOf: [{ type: "number" }, { type: "integer" }] }).valid, false);
  assert.equal(ju.validate("x", { not: { type: "string" } }).valid, false);
  assert.deepEqual(ju.validate(1, { type: "string" }).errors, [{ path: "(root)", message: "expected string, got integer" }]);
});
