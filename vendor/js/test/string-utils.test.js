// Tests for string-utils under Node: `node --test vendor/js/test/`.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const s = require("../string-utils");

test("words and case conversions", () => {
  assert.deepEqual(s.words("parseHTTPResponse2xx"), ["parse", "HTTP", "Response", "2", "xx"]);
  assert.deepEqual(s.words("  hello_world-again  "), ["hello", "world", "again"]);
  assert.equal(s.camelCase("user_id"), "userId");
  assert.equal(s.camelCase("XMLHttpRequest"), "xmlHttpRequest");
  assert.equal(s.pascalCase("hello world"), "HelloWorld");
  assert.equal(s.snakeCase("parseHTTPResponse"), "parse_http_response");
  assert.equal(s.kebabCase("Hello World"), "hello-world");
  assert.equal(s.constantCase("maxRetryCount"), "MAX_RETRY_COUNT");
  assert.equal(s.titleCase("the lord of the rings"), "The Lord of the Rings");
  assert.equal(s.titleCase("war and peace: a novel"), "War and Peace: a Novel");
  assert.equal(s.capitalize("hello WORLD"), "Hello world");
  assert.equal(s.camelCase(null), "");
});

test("deburr and slugify", () => {
  assert.equal(s.deburr("Crème brûlée"), "Creme brulee");
  assert.equal(s.slugify("Héllo, World & Co!"), "hello-world-and-co");
  assert.equal(s.slugify("It's  --  fine"), "its-fine");
  assert.equal(s.slugify("A B C", { separator: "_", lower: false }), "A_B_C");
  assert.equal(s.slugify("one two three", { maxLength: 8 }), "one-two");
});

test("truncate", () => {
  assert.equal(s.truncate("a long sentence", 9), "a long s…");
  assert.equal(s.truncate("a long sentence", 12, { wordBoundary: true }), "a long…");
  assert.equal(s.truncate("short", 10), "short");
  assert.equal(s.truncate("abcdef", 5, { ellipsis: "..." }), "ab...");
  assert.equal(s.truncate("😀😀😀😀", 3), "😀😀…");
  assert.throws(() => s.truncate("x", -1), RangeError);
});

test("padding and centering count code points", () => {
  assert.equal(s.padStart(5, 3, "0"), "005");
  assert.equal(s.padEnd("é", 3), "é  ");
  assert.equal(s.padStart("abc", 2), "abc");
  assert.equal(s.center("ab", 7, "*"), "**ab***");
  assert.equal(s.padStart("x", 6, "ab"), "ababax");
});

test("wrap", () => {
  assert.equal(s.wrap("the quick brown fox jumps", 10), "the quick\nbrown fox\njumps");
  assert.equal(s.wrap("abcdefghij", 4), "abcd\nefgh\nij");
  assert.equal(s.wrap("a\n\nb", 5), "a\n\nb");
});

test("escaping", () => {
  assert.equal(s.escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  assert.equal(s.unescapeHtml("&lt;b&gt; &#39;x&#x27; &amp;amp; &bogus;"), "<b> 'x' &amp; &bogus;");
  assert.ok(new RegExp("^" + s.escapeRegExp("a.b*c(d)[e]$") + "$", "u").test("a.b*c(d)[e]$"));
  assert.equal(s.plural(1, "file"), "1 file");
  assert.equal(s.plural(0, "box", "boxes"), "0 boxes");
});
