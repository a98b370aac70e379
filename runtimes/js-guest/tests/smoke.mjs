// Smoke test for the JS guest's host ABI, run under Node's WASI.
//
//   node runtimes/js-guest/tests/smoke.mjs path/to/quickjs-ng.wasm
//
// Instantiates the reactor the way the host does (_initialize, sb_init,
// sb_alloc + sb_eval per cell, `sandbox.should_interrupt` import), captures
// fd 1 / fd 2 into temp files, and checks the behaviours the host relies on.
// Prints one line per check and a final "N passed, N failed"; exits 1 on any
// failure.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WASI } from "node:wasi";

const wasmPath = process.argv[2];
if (!wasmPath) {
  console.error("usage: node smoke.mjs path/to/quickjs-ng.wasm");
  process.exit(2);
}
const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "js-guest-smoke-"));

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail === undefined ? "" : `\n     got: ${detail}`}`);
  }
}

// One sandbox instance, as the host would hold it.
async function makeSandbox(memoryLimit, tag, preopens = {}) {
  const outPath = path.join(tmp, `${tag}.stdout`);
  const errPath = path.join(tmp, `${tag}.stderr`);
  const outFd = fs.openSync(outPath, "w+");
  const errFd = fs.openSync(errPath, "w+");
  const wasi = new WASI({
    version: "preview1",
    args: [],
    env: {},
    preopens,
    stdout: outFd,
    stderr: errFd,
    returnOnExit: true,
  });
  const sb = {
    polls: 0,
    interruptAfter: Infinity, // number of polls before should_interrupt says 1
    outPos: 0,
    errPos: 0,
    cell: 0,
  };
  const instance = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.wasiImport,
    sandbox: {
      should_interrupt() {
        sb.polls++;
        return sb.polls > sb.interruptAfter ? 1 : 0;
      },
    },
  });
  const ex = instance.exports;
  if (ex._initialize) wasi.initialize(instance);
  const rc = ex.sb_init(memoryLimit, 0);
  if (rc !== 0) throw new Error(`sb_init returned ${rc}`);

  const read = (p, from) => {
    const buf = fs.readFileSync(p);
    return buf.subarray(from).toString("utf8");
  };
  sb.exports = ex;
  sb.eval = (code) => {
    const ex = sb.exports; // replaced when a test restores into a new instance
    const bytes = Buffer.from(code, "utf8");
    const ptr = ex.sb_alloc(bytes.length);
    new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
    const cell = ++sb.cell;
    const r = ex.sb_eval(ptr, bytes.length, cell);
    const big = BigInt.asUintN(64, r);
    const rptr = Number(big >> 32n);
    const rlen = Number(big & 0xffffffffn);
    const text = Buffer.from(new Uint8Array(ex.memory.buffer, rptr, rlen)).toString("utf8");
    const res = JSON.parse(text);
    res.cell = cell;
    res.raw = text;
    return res;
  };
  // Output written since the last call.
  sb.stdout = () => {
    const s = read(outPath, sb.outPos);
    sb.outPos += Buffer.byteLength(s);
    return s;
  };
  sb.stderr = () => {
    const s = read(errPath, sb.errPos);
    sb.errPos += Buffer.byteLength(s);
    return s;
  };
  return sb;
}

const ok = (r, value) => r.ok === true && r.value === value;
const show = (r) => r.raw;

// ---------------------------------------------------------------- basics
const sb = await makeSandbox(64 << 20, "main");

{
  const r1 = sb.eval("var v = 1; let x = 41; const c = 'k'; function f() { return 2 } class K { m() { return 3 } }");
  check("cell 1 declarations complete with value null", ok(r1, null), show(r1));
  const r2 = sb.eval("x + f()");
  check("let + function persist across cells (x + f() === 43)", ok(r2, "43"), show(r2));
  const r3 = sb.eval("[v, c, new K().m()]");
  check("var/const/class persist across cells", ok(r3, '[ 1, "k", 3 ]'), show(r3));
  const r4 = sb.eval("x = 100; x");
  check("top-level let is reassignable in a later cell", ok(r4, "100"), show(r4));
}

{
  const cases = [
    ['"abc"', '"abc"'],
    ["'a\"b\\n'", '"a\\"b\\n"'],
    ["42", "42"],
    ["-0", "-0"],
    ["1.5e300 * 10", "1.5e+301"],
    ["10n ** 20n", "100000000000000000000n"],
    ["true", "true"],
    ["null", "null"],
    ["undefined", null],
    ["void 0", null],
    ["({ a: 1, b: 'x', 'c-d': [1, 2] })", '{ a: 1, b: "x", "c-d": [ 1, 2 ] }'],
    ["[1, 2, 3]", "[ 1, 2, 3 ]"],
    ["[]", "[]"],
    ["({})", "{}"],
    ["[1, , 3]", "[ 1, <1 empty item>, 3 ]"],
    ["(function foo() {})", "[Function: foo]"],
    ["(() => {})", "[Function (anonymous)]"],
    ["(async function af() {})", "[AsyncFunction: af]"],
    ["(class Foo {})", "[class Foo]"],
    ["new TypeError('bad')", "TypeError: bad"],
    ["Symbol('s')", "Symbol(s)"],
    ["new Map([['a', 1], [2, { b: true }]])", 'Map(2) { "a" => 1, 2 => { b: true } }'],
    ["new Set([1, 'two'])", 'Set(2) { 1, "two" }'],
    ["new Date(0)", "1970-01-01T00:00:00.000Z"],
    ["/ab+c/gi", "/ab+c/gi"],
    ["new Uint8Array([1, 2, 3])", "Uint8Array(3) [ 1, 2, 3 ]"],
    ["class P { constructor() { this.q = 1 } }; new P()", "P { q: 1 }"],
    ["Object.create(null)", "[Object: null prototype] {}"],
    ["({ get g() { return 1 } })", "{ g: [Getter] }"],
    ["const cyc = { name: 'c' }; cyc.self = cyc; cyc", '{ name: "c", self: [Circular] }'],
    ["({ a: { b: { c: { d: { e: { f: 1 } } } } } })", "{ a: { b: { c: { d: { e: [Object] } } } } }"],
    ["({ alpha: 'aaaaaaaaaaaaaaaaaaaa', beta: 'bbbbbbbbbbbbbbbbbbbb', gamma: 'cccccccccccccccccccc' })", '{\n  alpha: "aaaaaaaaaaaaaaaaaaaa",\n  beta: "bbbbbbbbbbbbbbbbbbbb",\n  gamma: "cccccccccccccccccccc"\n}'],
    ["Promise.resolve(5).then(x => x * 2)", "10"],
  ];
  for (const [src, want] of cases) {
    const r = sb.eval(src);
    check(`repr of ${src.replace(/\n/g, " ")}`, ok(r, want), show(r));
  }
  const big = sb.eval("'x'.repeat(50000)");
  check("long repr capped near 10,000 chars", big.ok && big.value.length < 10100 && big.value.length >= 10000, big.value?.length);
  const arr = sb.eval("Array.from({ length: 1000 }, (_, i) => i)");
  check("long array shows 100 items then '... 900 more items'", arr.ok && arr.value.includes("... 900 more items"), arr.value?.slice(-60));
}

// ---------------------------------------------------------------- console
{
  sb.stdout();
  sb.stderr();
  const r = sb.eval("console.log('hello', 1, { a: [1, 2] }, 'x'); console.info('%s=%d', 'n', 42); console.error('oops', new Error('E1').message); console.warn('careful'); 7");
  const out = sb.stdout();
  const err = sb.stderr();
  check("console cell value", ok(r, "7"), show(r));
  check("console.log/info -> stdout, one line each", out === "hello 1 { a: [ 1, 2 ] } x\nn=42\n", JSON.stringify(out));
  check("console.error/warn -> stderr", err === "oops E1\ncareful\n", JSON.stringify(err));
}

// ---------------------------------------------------------------- errors
{
  const r = sb.eval("function bad() {\n  let o = null;\n  return o.prop;\n}\nbad()");
  check(
    "TypeError: kind runtime, name TypeError, stack mentions <cell N>",
    r.ok === false && r.kind === "runtime" && r.name === "TypeError" && r.stack.includes(`<cell ${r.cell}>:3`),
    show(r),
  );
  console.log(`     (message: ${JSON.stringify(r.message)}, stack: ${JSON.stringify(r.stack)})`);
  const s = sb.eval("let = ;");
  check("`let = ;` gives kind syntax, name SyntaxError", s.ok === false && s.kind === "syntax" && s.name === "SyntaxError", show(s));
  console.log(`     (message: ${JSON.stringify(s.message)}, stack: ${JSON.stringify(s.stack)})`);
  const e = sb.eval("eval('let = ;')");
  check("SyntaxError from eval() at run time is kind runtime", e.ok === false && e.kind === "runtime" && e.name === "SyntaxError", show(e));
  const t = sb.eval("throw 5");
  check("throw 5 -> name Uncaught, message 5", t.ok === false && t.kind === "runtime" && t.name === "Uncaught" && t.message === "5", show(t));
  const o = sb.eval("throw { code: 1 }");
  check("throw object -> message is its repr", o.ok === false && o.message === "{ code: 1 }", show(o));
  const after = sb.eval("x");
  check("context still usable after errors", ok(after, "100"), show(after));
  const partial = sb.eval("let y1 = 1; throw new Error('half')");
  const y1 = sb.eval("typeof y1");
  check("bindings made before a throw stay (REPL semantics)", partial.ok === false && ok(y1, '"number"'), show(y1));
}

// ---------------------------------------------------------------- promises
{
  const r = sb.eval("new Promise(res => setTimeout(() => res('late'), 50))");
  check("completion Promise replaced by its resolved value", ok(r, '"late"'), show(r));
  const rj = sb.eval("Promise.reject(new RangeError('nope'))");
  check("completion Promise rejected -> error result", rj.ok === false && rj.kind === "runtime" && rj.name === "RangeError" && rj.message === "nope", show(rj));
  const tla = sb.eval("const fetched = await new Promise(res => setTimeout(() => res(21), 10)); fetched * 2");
  check("top-level await (script recompiled in async mode)", ok(tla, "42"), show(tla));
  const tla2 = sb.eval("fetched");
  check("top-level await cell's const persists", ok(tla2, "21"), show(tla2));
  const tla3 = sb.eval("await Promise.reject(new Error('awaited'))");
  check("top-level await rejection -> error", tla3.ok === false && tla3.kind === "runtime" && tla3.message === "awaited", show(tla3));
  const asyncFn = sb.eval("async function g() { await null; return 'g' } g()");
  check("async function result", ok(asyncFn, '"g"'), show(asyncFn));
  const pending = sb.eval("new Promise(() => {})");
  check("never-settling Promise shows as pending", ok(pending, "Promise { <pending> }"), show(pending));
  sb.stderr();
  const unhandled = sb.eval("Promise.reject(new Error('lost')); 1");
  const err = sb.stderr();
  check("unhandled rejection reported on stderr, cell still ok", ok(unhandled, "1") && err.startsWith("Uncaught (in promise) Error: lost"), JSON.stringify(err));
  sb.stdout();
  const qm = sb.eval("queueMicrotask(() => console.log('micro')); Promise.resolve().then(() => console.log('then')); console.log('sync')");
  check("queueMicrotask + promise job order", sb.stdout() === "sync\nmicro\nthen\n");
}

// ---------------------------------------------------------------- timers
{
  sb.stdout();
  const r = sb.eval(`
    const order = [];
    setTimeout(() => order.push('t100'), 100);
    setTimeout(() => order.push('t0'));
    setTimeout((a, b) => order.push('t10:' + a + b), 10, 'x', 'y');
    const cancelled = setTimeout(() => order.push('never'), 5);
    clearTimeout(cancelled);
    let n = 0;
    const iv = setInterval(() => { order.push('iv' + (++n)); if (n === 3) clearInterval(iv); }, 30);
    Promise.resolve().then(() => order.push('micro'));
    order.push('sync');
    new Promise(res => setTimeout(() => res(order.join(',')), 1000))`);
  check(
    "setTimeout/setInterval ordering by due time",
    ok(r, '"sync,micro,t0,t10:xy,iv1,iv2,iv3,t100"'),
    show(r),
  );
  const t0 = Date.now();
  const r2 = sb.eval("setTimeout(() => console.log('from timer'), 500); 'returned'");
  const waited = Date.now() - t0;
  check("call returns only after pending timers ran", ok(r2, '"returned"') && sb.stdout() === "from timer\n", show(r2));
  check("a timer fires after its delay, not before", waited >= 500, `${waited} ms`);
  sb.stderr();
  const r3 = sb.eval("setTimeout(() => { throw new Error('in timer') }, 1); setTimeout(() => console.log('next timer'), 2); 'main'");
  const err = sb.stderr();
  check("error in a timer callback -> stderr 'Uncaught ...', other timers still run", ok(r3, '"main"') && err.startsWith("Uncaught Error: in timer") && sb.stdout() === "next timer\n", JSON.stringify(err));
}

// ---------------------------------------------------------------- interrupt
{
  sb.polls = 0;
  sb.interruptAfter = 3;
  const t0 = Date.now();
  const r = sb.eval("for (;;) {}");
  const ms = Date.now() - t0;
  sb.interruptAfter = Infinity;
  check("for(;;){} -> kind interrupted once should_interrupt returns 1", r.ok === false && r.kind === "interrupted", show(r));
  console.log(`     (${sb.polls} polls, ${ms} ms; name=${r.name} message=${r.message})`);
  const tc = (() => {
    sb.polls = 0;
    sb.interruptAfter = 3;
    const res = sb.eval("let caught = false; try { for (;;) {} } catch (e) { caught = true } caught");
    sb.interruptAfter = Infinity;
    return res;
  })();
  check("interrupt is uncatchable by try/catch", tc.ok === false && tc.kind === "interrupted", show(tc));
  sb.polls = 0;
  sb.interruptAfter = 3;
  const ti = sb.eval("setInterval(() => {}, 1); 'spin'");
  sb.interruptAfter = Infinity;
  check("runaway setInterval is stopped by the interrupt", ti.ok === false && ti.kind === "interrupted", show(ti));
  for (const [label, src] of [
    ["busy loop inside a timer callback", "setTimeout(() => { for (;;) {} }, 10); 'scheduled'"],
    ["endless microtask chain", "(async () => { for (;;) await null })()"],
  ]) {
    sb.polls = 0;
    sb.interruptAfter = 3;
    const r = sb.eval(src);
    sb.interruptAfter = Infinity;
    check(`interrupt fires in ${label}`, r.ok === false && r.kind === "interrupted", show(r));
  }
  const again = sb.eval("x + 1");
  check("context usable after interrupts, no leftover timers", ok(again, "101"), show(again));
}

// ---------------------------------------------------------------- memory
{
  const small = await makeSandbox(16 << 20, "oom");
  const r = small.eval("const big = []; for (let i = 0; ; i++) big.push('x'.repeat(1024) + i);");
  check("growing allocation -> kind out_of_memory", r.ok === false && r.kind === "out_of_memory", show(r));
  const r2 = small.eval("'y'.repeat(2 ** 29).length");
  check("one huge allocation -> kind out_of_memory", r2.ok === false && r2.kind === "out_of_memory", show(r2));
  const r3 = small.eval("[1, 2, 3].map(v => v * 2)");
  check("context still works after out_of_memory", ok(r3, "[ 2, 4, 6 ]"), show(r3));
  const r4 = small.eval("const kept = big.length > 0; big.length = 0; kept");
  check("bindings of the out_of_memory cell survive and can be freed", ok(r4, "true"), show(r4));
  const r5 = small.eval("Array.from({ length: 1e5 }, (_, i) => 'v' + i).length");
  check("memory is reusable after freeing", ok(r5, "100000"), show(r5));
}

// ---------------------------------------------------------------- recursion
{
  // QuickJS-NG turns off its own stack check on WASI. Report what happens
  // at increasing depths, each on a fresh instance since a trap kills it.
  for (const depth of [1000, 5000, 10000, 50000, 1000000]) {
    const rec = await makeSandbox(256 << 20, `rec${depth}`);
    let outcome;
    try {
      const r = rec.eval(`function down(n) { return n === 0 ? 0 : 1 + down(n - 1) } down(${depth})`);
      outcome = r.ok ? `ok value=${r.value}` : `error kind=${r.kind} name=${r.name} message=${r.message}`;
    } catch (e) {
      outcome = `TRAP ${e.constructor.name}: ${e.message}`;
    }
    console.log(`info recursion depth ${depth}: ${outcome}`);
  }
}

// ------------------------------------------------------- snapshot/restore
{
  // The host snapshots linear memory after each successful call and, after
  // a trap, copies the last snapshot into a fresh instance without calling
  // sb_init again. Simulate that: trap instance A, restore into B.
  const a = await makeSandbox(64 << 20, "snapA");
  a.eval("let kept = { n: 1 }; function bump() { return ++kept.n }");
  a.eval("bump()");
  const snapshot = new Uint8Array(a.exports.memory.buffer).slice();
  let trapped = false;
  try {
    a.eval("function down(n) { return n === 0 ? 0 : 1 + down(n - 1) } down(1e6)");
  } catch {
    trapped = true;
  }
  check("deep recursion traps instance A (host must restore)", trapped);

  const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
  const b = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.wasiImport,
    sandbox: { should_interrupt: () => 0 },
  });
  wasi.initialize(b); // runs _initialize on the fresh memory, as a host may
  const mem = b.exports.memory;
  const pages = snapshot.length / 65536 - mem.buffer.byteLength / 65536;
  if (pages > 0) mem.grow(pages);
  new Uint8Array(mem.buffer).set(snapshot);
  b.exports._initialize(); // must be a harmless no-op on restored memory
  const evalIn = (ex, code, cell) => {
    const bytes = Buffer.from(code, "utf8");
    const ptr = ex.sb_alloc(bytes.length);
    new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
    const r = BigInt.asUintN(64, ex.sb_eval(ptr, bytes.length, cell));
    return JSON.parse(Buffer.from(new Uint8Array(ex.memory.buffer, Number(r >> 32n), Number(r & 0xffffffffn))).toString("utf8"));
  };
  const r = evalIn(b.exports, "bump()", 10);
  check("state restored into a fresh instance without sb_init (bump() === 3)", ok(r, "3"), JSON.stringify(r));
  const r2 = evalIn(b.exports, "await new Promise(res => setTimeout(res, 5, 'timer ok'))", 11);
  check("timers and promises work after restore", ok(r2, '"timer ok"'), JSON.stringify(r2));
}

// ------------------------------------------------------------------ files
{
  // The host preopens /app (read-write, the working directory), /tmp and
  // /data; nothing else exists. Node's WASI stands in for it here.
  const dirs = {};
  for (const d of ["app", "tmp", "data"]) {
    dirs[d] = path.join(tmp, "fs-" + d);
    fs.mkdirSync(dirs[d]);
  }
  fs.mkdirSync(path.join(dirs.data, "js", "demo"), { recursive: true });
  fs.writeFileSync(path.join(dirs.data, "js", "demo", "package.json"), '{"main": "lib/main.js"}');
  fs.mkdirSync(path.join(dirs.data, "js", "demo", "lib"));
  fs.writeFileSync(path.join(dirs.data, "js", "demo", "lib", "main.js"), "exports.twice = require('./util').twice;");
  fs.writeFileSync(path.join(dirs.data, "js", "demo", "lib", "util.js"), "exports.twice = (x) => 2 * x;");
  const preopens = { "/app": dirs.app, "/tmp": dirs.tmp, "/data": dirs.data };
  const f = await makeSandbox(64 << 20, "files", preopens);
  const json = (code) => {
    const r = f.eval(`JSON.stringify(${code})`);
    return r.ok ? JSON.parse(JSON.parse(r.value)) : r;
  };
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  const helpers = json(`(writeJson("a.json", {x: 1}), writeText("sub/t.txt", "one\\n"), appendText("sub/t.txt", "two\\n"),
    [readJson("a.json").x, readText("/app/sub/t.txt"), fileExists("sub"), fileExists("nope"), listFiles(".", {recursive: true})])`);
  check("helpers write and read under /app (relative paths)", same(helpers, [1, "one\ntwo\n", true, false, ["a.json", "sub/", "sub/t.txt"]]), JSON.stringify(helpers));
  check("helpers' files are on the host", fs.readFileSync(path.join(dirs.app, "a.json"), "utf8") === '{\n  "x": 1\n}\n');

  const tuples = json(`[os.stat("a.json")[0].size, os.stat("nope"), os.readdir("sub"), os.getcwd(), os.mkdir("d"), os.mkdir("d"), os.remove("d"), os.realpath("sub/../a.json")]`);
  check("os tuple returns ([value, errno]) and -errno codes", same(tuples, [13, [null, 44], [[".", "..", "t.txt"], 0], ["/app", 0], 0, -20, 0, ["/app/a.json", 0]]), JSON.stringify(tuples));

  const file = json(`(() => { const h = std.open("sub/t.txt", "r"); const r = [h.getline(), h.tell(), h.readAsString(), h.eof(), h.getline()]; h.close(); return r })()`);
  check("std.open FILE: getline, tell, readAsString, eof", same(file, ["one", 4, "two\n", true, null]), JSON.stringify(file));

  const escapes = json(`[std.loadFile("../../etc/passwd"), os.stat("/etc/passwd")[1], os.readdir("/")[0], (() => { try { readText("/etc/passwd") } catch (e) { return e.code } })()]`);
  check("paths outside the preopens do not exist", same(escapes, [null, 44, [".", "..", "app", "data", "tmp"], "ENOENT"]), JSON.stringify(escapes));

  const vendor = json(`[requireVendor("demo").twice(21), requireVendor("demo") === requireVendor("demo/lib/main")]`);
  check("requireVendor loads /data/js/<name> with relative requires, cached", same(vendor, [42, true]), JSON.stringify(vendor));

  const fmt = json(`[std.sprintf("%05.1f|%-3s|%x|%ld", 3.14159, "a", 255, 2n ** 40n), std.parseExtJSON("{a: 0x10, 'b': [1,], // c\\n}")]`);
  check("std.sprintf (C printf) and std.parseExtJSON", same(fmt, ["003.1|a  |ff|1099511627776", { a: 16, b: [1] }]), JSON.stringify(fmt));

  // A FILE opened before a trap points at an fd the fresh instance never
  // opened: it must fail with an Error, not crash or hit another file.
  f.eval('var held = std.open("held.txt", "w"); held.puts("kept\\n")');
  const snapshot = new Uint8Array(f.exports.memory.buffer).slice();
  const wasi = new WASI({ version: "preview1", args: [], env: {}, preopens, returnOnExit: true });
  const inst = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.wasiImport,
    sandbox: { should_interrupt: () => 0 },
  });
  wasi.initialize(inst);
  const mem = inst.exports.memory;
  const pages = snapshot.length / 65536 - mem.buffer.byteLength / 65536;
  if (pages > 0) mem.grow(pages);
  new Uint8Array(mem.buffer).set(snapshot);
  f.exports = inst.exports;
  const stale = json(`[(() => { try { held.puts("x") } catch (e) { return e.code } })(), (std.open("new.txt", "w").puts("new"), readText("new.txt")), held.close(), readText("held.txt")]`);
  check("after restore: old FILE throws EBADF, new files work, close succeeds", same(stale, ["EBADF", "new", 0, "kept\n"]), JSON.stringify(stale));
}

// ------------------------------------------------------------- edge cases
{
  const e = await makeSandbox(64 << 20, "edge");
  const empty = e.eval("");
  check("empty source -> value null", ok(empty, null), show(empty));
  const ex = e.exports;
  const bad = Buffer.from([0x27, 0xff, 0xfe, 0x27]); // '\xff\xfe' — invalid UTF-8
  const ptr = ex.sb_alloc(bad.length);
  new Uint8Array(ex.memory.buffer, ptr, bad.length).set(bad);
  const r = BigInt.asUintN(64, ex.sb_eval(ptr, bad.length, 99));
  const res = JSON.parse(Buffer.from(new Uint8Array(ex.memory.buffer, Number(r >> 32n), Number(r & 0xffffffffn))).toString("utf8"));
  check("invalid UTF-8 source gives a well-formed result document", typeof res.ok === "boolean", JSON.stringify(res));
  const lone = e.eval("'\\ud800' + 'é✓'");
  check("lone surrogate in a string repr is escaped", ok(lone, '"\\ud800é✓"'), show(lone));
  e.stdout();
  e.eval("console.log('\\ud800|é✓')");
  const out = e.stdout();
  check("console output with a lone surrogate is valid UTF-8 (U+FFFD)", out === "\ufffd|é✓\n", JSON.stringify(out));
}

{
  const again = await makeSandbox(64 << 20, "init-twice");
  check("second sb_init returns nonzero", again.exports.sb_init(0, 0) !== 0);
  const p = again.exports.sb_alloc(16);
  again.exports.sb_free(p, 16);
  check("sb_alloc / sb_free round trip", p !== 0);
}

fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
