// csv-simple: RFC 4180 CSV parsing and writing, small and dependency-free.
//
//   const csv = requireVendor("csv-simple");
//   csv.parse("name,age\nAda,36\n")            // [{ name: "Ada", age: "36" }]
//   csv.parse(text, { typed: true })           // numbers/booleans converted
//   csv.parse(text, { header: false })         // arrays of strings
//   csv.stringify([{ a: 1, b: "x,y" }])        // 'a,b\n1,"x,y"\n'
//
// See README.md for every option.
"use strict";

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function checkDelimiter(d) {
  if (typeof d !== "string" || d.length !== 1 || d === '"' || d === "\n" || d === "\r") {
    throw new TypeError("csv-simple: delimiter must be one character other than a quote or newline");
  }
  return d;
}

// Split text into rows of raw string fields. Quoted fields may contain the
// delimiter, doubled quotes ("") and newlines. CRLF, LF and lone CR all end
// a row. Fields are sliced out of the text, not built a character at a time,
// so large files parse in linear time.
function parseRows(text, delimiter) {
  const rows = [];
  const n = text.length;
  const d = delimiter.charCodeAt(0);
  let row = [];
  let i = 0;
  let line = 1;
  while (i < n) {
    let field;
    if (text.charCodeAt(i) === 34) {
      const startLine = line;
      field = "";
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) {
          throw new SyntaxError("csv-simple: unterminated quoted field starting on line " + startLine);
        }
        const chunk = text.slice(i, q);
        for (let k = chunk.indexOf("\n"); k >= 0; k = chunk.indexOf("\n", k + 1)) line++;
        field += chunk;
        if (text.charCodeAt(q + 1) === 34) {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      // Text between the closing quote and the next delimiter is kept
      // (lenient, like spreadsheet programs).
      const rest = i;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === d || c === 10 || c === 13) break;
        i++;
      }
      field += text.slice(rest, i);
    } else {
      const start = i;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === d || c === 10 || c === 13) break;
        i++;
      }
      field = text.slice(start, i);
    }
    row.push(field);
    if (i >= n) break;
    const c = text.charCodeAt(i);
    if (c === d) {
      i++;
      if (i === n) row.push(""); // a trailing delimiter ends with an empty field
    } else {
      rows.push(row);
      row = [];
      i += c === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1;
      line++;
    }
  }
  if (row.length > 0) rows.push(row);
  return rows;
}

function convert(value) {
  if (NUMBER.test(value)) {
    const num = Number(value);
    // Keep identifiers such as zip codes ("02134") and huge integers as text.
    const leadingZero = /^[+-]?0\d/.test(value);
    if (Number.isFinite(num) && !leadingZero && !(Number.isInteger(num) && !Number.isSafeInteger(num))) {
      return num;
    }
    return value;
  }
  if (value === "true") return true;
  if (value === "false") return false;
  return value;
}

// Header names made unique: "a,a,b" -> a, a_2, b; empty -> column_N.
function uniqueHeaders(names) {
  const seen = new Map();
  return names.map((raw, i) => {
    let name = raw === "" ? "column_" + (i + 1) : raw;
    const count = seen.get(name) || 0;
    seen.set(name, count + 1);
    if (count > 0) name = name + "_" + (count + 1);
    return name;
  });
}

/**
 * Parse CSV text.
 * @param {string} text
 * @param {object} [options]
 * @param {string} [options.delimiter=","] one character, e.g. ";" or "\t"
 * @param {boolean|string[]} [options.header=true] true: the first row names
 *   the columns and rows become objects; false: rows are arrays; an array:
 *   these column names, every row is data
 * @param {boolean} [options.typed=false] convert numbers and true/false
 * @param {boolean} [options.trim=false] trim white space around fields
 * @param {boolean} [options.skipEmptyLines=true] drop rows that are empty
 * @returns {object[]|string[][]}
 */
function parse(text, options = {}) {
  if (typeof text !== "string") throw new TypeError("csv-simple: parse expects a string");
  const delimiter = checkDelimiter(options.delimiter === undefined ? "," : options.delimiter);
  const header = options.header === undefined ? true : options.header;
  const skipEmpty = options.skipEmptyLines !== false;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // byte order mark
  let rows = parseRows(text, delimiter);
  if (skipEmpty) rows = rows.filter((r) => !(r.length === 1 && r[0] === ""));
  const cell = (v) => {
    const t = options.trim ? v.trim() : v;
    return options.typed ? convert(t) : t;
  };
  if (header === false) return rows.map((r) => r.map(cell));
  let names;
  if (Array.isArray(header)) {
    names = uniqueHeaders(header.map(String));
  } else {
    if (rows.length === 0) return [];
    names = uniqueHeaders(rows.shift().map((h) => h.trim()));
  }
  return rows.map((r) => {
    const obj = {};
    for (let i = 0; i < names.length; i++) obj[names[i]] = i < r.length ? cell(r[i]) : "";
    if (r.length > names.length) obj._extra = r.slice(names.length).map(cell);
    return obj;
  });
}

function formatValue(v) {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return isNaN(v) ? "" : v.toISOString();
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function quote(s, delimiter, quoteAll) {
  const needs =
    quoteAll ||
    s.includes(delimiter) ||
    s.includes('"') ||
    s.includes("\n") ||
    s.includes("\r") ||
    s !== s.trim();
  return needs ? '"' + s.replace(/"/g, '""') + '"' : s;
}

/**
 * Write rows as CSV text (always ending with a newline when non-empty).
 * @param {object[]|Array[]} rows objects (columns = options.columns or every
 *   key, in first-seen order) or arrays
 * @param {object} [options]
 * @param {string} [options.delimiter=","]
 * @param {string[]} [options.columns] column order (objects only)
 * @param {boolean} [options.header=true] write the header row (objects only)
 * @param {string} [options.eol="\n"]
 * @param {boolean} [options.quoteAll=false]
 * @returns {string}
 */
function stringify(rows, options = {}) {
  if (!Array.isArray(rows)) throw new TypeError("csv-simple: stringify expects an array of rows");
  const delimiter = checkDelimiter(options.delimiter === undefined ? "," : options.delimiter);
  const eol = options.eol === undefined ? "\n" : options.eol;
  const line = (values) =>
    values.map((v) => quote(formatValue(v), delimiter, !!options.quoteAll)).join(delimiter) + eol;
  if (rows.length === 0) return "";
  if (Array.isArray(rows[0]) && !options.columns) return rows.map(line).join("");
  let columns = options.columns;
  if (!columns) {
    const seen = new Set();
    for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
    columns = [...seen];
  }
  let out = options.header === false ? "" : line(columns);
  for (const r of rows) out += line(Array.isArray(r) ? r : columns.map((c) => r[c]));
  return out;
}

function fileApi(name) {
  const fn = globalThis[name];
  if (typeof fn !== "function") {
    throw new Error("csv-simple: " + name + "() is not available (run inside the sandbox)");
  }
  return fn;
}

/** parse(readText(path), options) */
function readFile(path, options) {
  return parse(fileApi("readText")(path), options);
}

/** writeText(path, stringify(rows, options)) */
function writeFile(path, rows, options) {
  fileApi("writeText")(path, stringify(rows, options));
}

module.exports = { parse, stringify, readFile, writeFile };
