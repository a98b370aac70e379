// sandbox-utils: readable output and quick measurements for scripts whose
// only interface is text.
//
//   const u = requireVendor("sandbox-utils");
//   console.log(u.table([{ name: "a", n: 1 }, { name: "bb", n: 22 }]))
//   u.stats([3, 1, 4, 1, 5])        // { count, sum, mean, median, min, max, stdev, p25, p75 }
//   u.formatBytes(1536)             // "1.5 KiB"
//   u.formatDuration(93500)         // "1m 33.5s"
//   u.timeit(() => work(), { iterations: 100 })  // { iterations, totalMs, meanMs, minMs, maxMs }
//   console.log(u.barChart({ a: 3, b: 7 }))
//   console.log(u.tree("."))        // directory tree (inside the sandbox)
//
// See README.md.
"use strict";

const codePoints = (s) => [...s].length;

function cellText(v) {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return isNaN(v) ? "Invalid Date" : v.toISOString();
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function clip(s, width) {
  const cps = [...s];
  return cps.length <= width ? s : cps.slice(0, Math.max(0, width - 1)).join("") + "…";
}

/**
 * A text table of an array of objects (columns: options.columns or every
 * key in first-seen order) or of arrays ("(no rows)" when empty). Numbers
 * are right-aligned; cells
 * longer than options.maxWidth (40) are clipped; options.maxRows (50) rows
 * are shown, then a "… N more rows" line.
 * @returns {string}
 */
function table(rows, options = {}) {
  if (!Array.isArray(rows)) throw new TypeError("sandbox-utils: table expects an array");
  const maxWidth = options.maxWidth === undefined ? 40 : options.maxWidth;
  const maxRows = options.maxRows === undefined ? 50 : options.maxRows;
  if (rows.length === 0 && !options.columns) return "(no rows)";
  const arrays = rows.length > 0 && rows.every(Array.isArray);
  let columns = options.columns;
  if (!columns) {
    if (arrays) {
      columns = Array.from({ length: Math.max(0, ...rows.map((r) => r.length)) }, (_, i) => String(i));
    } else {
      const seen = new Set();
      for (const r of rows) {
        if (r !== null && typeof r === "object") for (const k of Object.keys(r)) seen.add(k);
        else seen.add("value");
      }
      columns = [...seen];
    }
  }
  const shown = rows.slice(0, maxRows);
  const valueAt = (r, c, i) => {
    if (arrays) return r[i];
    if (r === null || typeof r !== "object") return c === "value" ? r : undefined;
    return r[c];
  };
  const numeric = columns.map((c, i) =>
    shown.every((r) => {
      const v = valueAt(r, c, i);
      return v === null || v === undefined || typeof v === "number" || typeof v === "bigint";
    }),
  );
  const body = shown.map((r) => columns.map((c, i) => clip(cellText(valueAt(r, c, i)), maxWidth)));
  const head = columns.map((c) => clip(String(c), maxWidth));
  const widths = head.map((h, i) => Math.max(codePoints(h), ...body.map((r) => codePoints(r[i]))));
  const pad = (s, i) => {
    const fill = " ".repeat(widths[i] - codePoints(s));
    return numeric[i] ? fill + s : s + fill;
  };
  const line = (cells) => "| " + cells.map(pad).join(" | ") + " |";
  const rule = "|" + widths.map((w, i) => (numeric[i] ? "-".repeat(w + 1) + ":" : "-".repeat(w + 2))).join("|") + "|";
  const out = [line(head), rule, ...body.map(line)];
  if (rows.length > shown.length) out.push("… " + (rows.length - shown.length) + " more rows");
  return out.join("\n");
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** 1536 -> "1.5 KiB" (binary units; options.decimals, default 1). */
function formatBytes(bytes, options = {}) {
  const decimals = options.decimals === undefined ? 1 : options.decimals;
  let n = Number(bytes);
  if (!Number.isFinite(n)) return String(bytes);
  const sign = n < 0 ? "-" : "";
  n = Math.abs(n);
  let unit = 0;
  while (n >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(n) : n.toFixed(decimals).replace(/\.0+$/, "");
  return sign + text + " " + UNITS[unit];
}

/** 93500 -> "1m 33.5s"; 0.25 -> "250µs"; 90061000 -> "1d 1h 1m 1s". */
function formatDuration(ms) {
  let n = Number(ms);
  if (!Number.isFinite(n)) return String(ms);
  const sign = n < 0 ? "-" : "";
  n = Math.abs(n);
  if (n < 1) return sign + Math.round(n * 1000) + "µs";
  if (n < 1000) return sign + +n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + "ms";
  const parts = [];
  const units = [
    ["d", 86400000],
    ["h", 3600000],
    ["m", 60000],
  ];
  for (const [name, size] of units) {
    if (n >= size) {
      parts.push(Math.floor(n / size) + name);
      n %= size;
    }
  }
  // Tenths of a second below an hour, whole seconds above.
  const secs = +(n / 1000).toFixed(parts.length > 1 ? 0 : 1);
  if (secs > 0 || parts.length === 0) parts.push(secs + "s");
  return sign + parts.join(" ");
}

/** The p-th percentile (0..100) of sorted numbers, linear interpolation. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const pos = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * Descriptive statistics of the numbers (and numeric strings) in `values`,
 * ignoring anything else; options.key reads that property of each item:
 * { count, sum, mean, median, min, max, stdev, p25, p75 } (sample stdev).
 */
function stats(values, options = {}) {
  if (!Array.isArray(values)) throw new TypeError("sandbox-utils: stats expects an array");
  const key = options.key;
  const nums = [];
  for (const item of values) {
    const v = key === undefined ? item : item === null || item === undefined ? undefined : item[key];
    // Numbers, and numeric strings (CSV cells); not null, "", or booleans.
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    if (Number.isFinite(n)) nums.push(n);
  }
  nums.sort((a, b) => a - b);
  const count = nums.length;
  const sum = nums.reduce((a, b) => a + b, 0);
  const mean = count ? sum / count : NaN;
  const variance = count > 1 ? nums.reduce((a, b) => a + (b - mean) ** 2, 0) / (count - 1) : 0;
  return {
    count,
    sum,
    mean,
    median: percentile(nums, 50),
    min: count ? nums[0] : NaN,
    max: count ? nums[count - 1] : NaN,
    stdev: count ? Math.sqrt(variance) : NaN,
    p25: percentile(nums, 25),
    p75: percentile(nums, 75),
  };
}

function clock() {
  if (typeof performance === "object" && performance && typeof performance.now === "function") {
    return performance.now();
  }
  if (typeof os === "object" && os && typeof os.now === "function") return os.now() / 1000;
  return Date.now();
}

/**
 * Run fn `iterations` times (default 1; options.warmup extra untimed runs)
 * and report { iterations, totalMs, meanMs, minMs, maxMs, result } (the
 * last return value).
 */
function timeit(fn, options = {}) {
  if (typeof fn !== "function") throw new TypeError("sandbox-utils: timeit expects a function");
  const iterations = Math.max(1, Math.floor(options.iterations || 1));
  for (let i = 0; i < (options.warmup || 0); i++) fn();
  let result;
  let min = Infinity;
  let max = 0;
  let total = 0;
  for (let i = 0; i < iterations; i++) {
    const t0 = clock();
    result = fn();
    const dt = clock() - t0;
    total += dt;
    if (dt < min) min = dt;
    if (dt > max) max = dt;
  }
  return { iterations, totalMs: total, meanMs: total / iterations, minMs: min, maxMs: max, result };
}

/**
 * A horizontal bar chart of { label: number } or [[label, number], ...]:
 * bars scaled to options.width (40) characters.
 */
function barChart(data, options = {}) {
  const width = options.width === undefined ? 40 : options.width;
  const pairs = Array.isArray(data) ? data.map(([k, v]) => [String(k), Number(v)]) : Object.entries(data).map(([k, v]) => [k, Number(v)]);
  if (pairs.length === 0) return "";
  const max = Math.max(...pairs.map(([, v]) => Math.abs(v)).filter(Number.isFinite), 0);
  const labelWidth = Math.max(...pairs.map(([k]) => codePoints(k)));
  return pairs
    .map(([k, v]) => {
      const len = max > 0 && Number.isFinite(v) ? Math.round((Math.abs(v) / max) * width) : 0;
      return k + " ".repeat(labelWidth - codePoints(k)) + " | " + "█".repeat(len) + (len ? " " : "") + v;
    })
    .join("\n");
}

/**
 * The directory tree under `dir` as text, like the `tree` command (uses the
 * sandbox's listFiles). options.maxEntries (200) bounds the output.
 */
function tree(dir = ".", options = {}) {
  if (typeof listFiles !== "function") throw new Error("sandbox-utils: tree() needs the sandbox's listFiles()");
  const maxEntries = options.maxEntries === undefined ? 200 : options.maxEntries;
  const entries = listFiles(dir, { recursive: true });
  // listFiles gives "sub/" before "sub/x", so parents exist when children come.
  const root = new Map(); // name ("x" or "sub/") -> Map of children, or null
  for (const entry of entries) {
    const isDir = entry.endsWith("/");
    const parts = (isDir ? entry.slice(0, -1) : entry).split("/");
    let node = root;
    for (let i = 0; i < parts.length - 1 && node; i++) node = node.get(parts[i] + "/");
    if (node) node.set(parts[parts.length - 1] + (isDir ? "/" : ""), isDir ? new Map() : null);
  }
  const lines = [dir];
  let shown = 0;
  const render = (node, prefix) => {
    const names = [...node.keys()];
    for (let i = 0; i < names.length && shown < maxEntries; i++) {
      shown++;
      const last = i === names.length - 1;
      lines.push(prefix + (last ? "└── " : "├── ") + names[i]);
      const children = node.get(names[i]);
      if (children) render(children, prefix + (last ? "    " : "│   "));
    }
  };
  render(root, "");
  if (entries.length > shown) lines.push("… " + (entries.length - shown) + " more entries");
  return lines.join("\n");
}

module.exports = { table, formatBytes, formatDuration, stats, percentile, timeit, barChart, tree };
