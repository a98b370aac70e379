// json-utils: paths into JSON-like data, a small schema validator, deep
// equality and diff, flattening.
//
//   const ju = requireVendor("json-utils");
//   ju.get(cfg, "servers[0].host", "localhost")
//   ju.set(cfg, "a.b.c", 1)                       // creates a.b as needed
//   ju.validate(user, { type: "object", required: ["id"] })  // { valid, errors }
//   ju.diff(before, after)                        // [{ op, path, from, to }]
//   ju.flatten({ a: { b: [1, 2] } })             // { "a.b[0]": 1, "a.b[1]": 2 }
//
// Paths are "a.b[0].c", 'a["key.with.dots"]', or an array ["a", "b", 0].
// See README.md.
"use strict";

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const IDENT = /^[A-Za-z_$][\w$]*$/;

/** Split a path into keys: strings, and numbers for [n] indexes. */
function parsePath(path) {
  if (Array.isArray(path)) return path.slice();
  if (typeof path === "number") return [path];
  if (typeof path !== "string") throw new TypeError("json-utils: path must be a string or an array");
  const keys = [];
  let i = 0;
  const n = path.length;
  while (i < n) {
    const c = path[i];
    if (c === ".") {
      i++;
      continue;
    }
    if (c === "[") {
      const q = path[i + 1];
      if (q === '"' || q === "'") {
        let key = "";
        let j = i + 2;
        while (j < n && path[j] !== q) {
          if (path[j] === "\\" && j + 1 < n) j++;
          key += path[j++];
        }
        if (path[j + 1] !== "]") throw new SyntaxError("json-utils: bad path " + JSON.stringify(path));
        keys.push(key);
        i = j + 2;
      } else {
        const end = path.indexOf("]", i);
        if (end < 0) throw new SyntaxError("json-utils: bad path " + JSON.stringify(path));
        const inner = path.slice(i + 1, end).trim();
        keys.push(/^\d+$/.test(inner) ? Number(inner) : inner);
        i = end + 1;
      }
      continue;
    }
    let j = i;
    while (j < n && path[j] !== "." && path[j] !== "[") j++;
    keys.push(path.slice(i, j));
    i = j;
  }
  return keys;
}

/** Render keys as a path string: a.b[0]["x y"]. */
function formatPath(keys) {
  let out = "";
  for (const k of keys) {
    if (typeof k === "number") out += "[" + k + "]";
    else if (IDENT.test(k)) out += (out ? "." : "") + k;
    else out += "[" + JSON.stringify(k) + "]";
  }
  return out;
}

const isObject = (v) => v !== null && typeof v === "object";

/** The value at `path`, or `defaultValue` when any step is missing. */
function get(obj, path, defaultValue) {
  let cur = obj;
  for (const k of parsePath(path)) {
    if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, k)) return defaultValue;
    cur = cur[k];
  }
  return cur === undefined ? defaultValue : cur;
}

/** Whether `path` exists (own properties only). */
function has(obj, path) {
  let cur = obj;
  for (const k of parsePath(path)) {
    if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, k)) return false;
    cur = cur[k];
  }
  return true;
}

/**
 * Set the value at `path`, creating missing objects (or arrays, when the
 * next key is a number) on the way. Returns `obj`. Refuses __proto__,
 * constructor and prototype keys (prototype pollution).
 */
function set(obj, path, value) {
  const keys = parsePath(path);
  if (keys.length === 0) throw new TypeError("json-utils: empty path");
  let cur = obj;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (UNSAFE_KEYS.has(String(k))) throw new TypeError("json-utils: refusing to set key " + k);
    if (!isObject(cur)) throw new TypeError("json-utils: cannot set " + formatPath(keys.slice(0, i + 1)) + " on a non-object");
    if (i === keys.length - 1) {
      cur[k] = value;
    } else {
      if (!isObject(cur[k])) cur[k] = typeof keys[i + 1] === "number" ? [] : {};
      cur = cur[k];
    }
  }
  return obj;
}

/** Delete the value at `path`; returns whether something was deleted. */
function unset(obj, path) {
  const keys = parsePath(path);
  const last = keys.pop();
  const parent = keys.length ? get(obj, keys) : obj;
  if (!isObject(parent)) return false;
  if (Array.isArray(parent) && typeof last === "number") {
    if (last >= parent.length) return false;
    parent.splice(last, 1); // holes count as elements
    return true;
  }
  if (!Object.prototype.hasOwnProperty.call(parent, last)) return false;
  delete parent[last];
  return true;
}

/** Structural equality of JSON-like values (Dates by time). */
function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (!isObject(a) || !isObject(b)) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
  }
  return true;
}

/**
 * Differences from `a` to `b`: [{ op: "add"|"remove"|"change", path, from?, to? }],
 * recursing into objects and arrays (arrays compared by index).
 */
function diff(a, b) {
  const out = [];
  const walk = (x, y, keys) => {
    if (deepEqual(x, y)) return;
    const bothArrays = Array.isArray(x) && Array.isArray(y);
    const bothObjects = isObject(x) && isObject(y) && !Array.isArray(x) && !Array.isArray(y) &&
      !(x instanceof Date) && !(y instanceof Date);
    if (bothArrays) {
      const n = Math.max(x.length, y.length);
      for (let i = 0; i < n; i++) {
        if (i >= x.length) out.push({ op: "add", path: formatPath([...keys, i]), to: y[i] });
        else if (i >= y.length) out.push({ op: "remove", path: formatPath([...keys, i]), from: x[i] });
        else walk(x[i], y[i], [...keys, i]);
      }
    } else if (bothObjects) {
      for (const k of Object.keys(x)) {
        if (!Object.prototype.hasOwnProperty.call(y, k)) {
          out.push({ op: "remove", path: formatPath([...keys, k]), from: x[k] });
        } else {
          walk(x[k], y[k], [...keys, k]);
        }
      }
      for (const k of Object.keys(y)) {
        if (!Object.prototype.hasOwnProperty.call(x, k)) out.push({ op: "add", path: formatPath([...keys, k]), to: y[k] });
      }
    } else {
      out.push({ op: "change", path: formatPath(keys), from: x, to: y });
    }
  };
  walk(a, b, []);
  return out;
}

/** { "a.b[0]": leaf, ... } for every leaf (empty objects/arrays kept as leaves). */
function flatten(obj) {
  const out = {};
  const walk = (v, keys) => {
    if (isObject(v) && !(v instanceof Date) && Object.keys(v).length > 0) {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...keys, i]));
      else for (const k of Object.keys(v)) walk(v[k], [...keys, k]);
    } else {
      out[formatPath(keys)] = v;
    }
  };
  walk(obj, []);
  return out;
}

/** The inverse of flatten. */
function unflatten(flat) {
  const out = {};
  for (const [path, v] of Object.entries(flat)) set(out, path, v);
  return out;
}

// ------------------------------------------------------------ validation --
// A JSON Schema subset: type (string, or array of types; "integer" too),
// enum, const, properties, required, additionalProperties (boolean or
// schema), items, minItems, maxItems, uniqueItems, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern,
// anyOf, oneOf, allOf, not.

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(v, type) {
  const t = typeOf(v);
  return t === type || (type === "number" && t === "integer");
}

function check(value, schema, keys, errors) {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    errors.push({ path: formatPath(keys), message: "no value is allowed here" });
    return;
  }
  const fail = (message) => errors.push({ path: formatPath(keys) || "(root)", message });
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(value, t))) {
      fail("expected " + types.join(" or ") + ", got " + typeOf(value));
      return;
    }
  }
  if (schema.enum && !schema.enum.some((e) => deepEqual(e, value))) {
    fail("must be one of " + JSON.stringify(schema.enum));
  }
  if ("const" in schema && !deepEqual(schema.const, value)) fail("must equal " + JSON.stringify(schema.const));
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) fail("must be >= " + schema.minimum);
    if (schema.maximum !== undefined && value > schema.maximum) fail("must be <= " + schema.maximum);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) fail("must be > " + schema.exclusiveMinimum);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) fail("must be < " + schema.exclusiveMaximum);
  }
  if (typeof value === "string") {
    const len = [...value].length;
    if (schema.minLength !== undefined && len < schema.minLength) fail("must have at least " + schema.minLength + " characters");
    if (schema.maxLength !== undefined && len > schema.maxLength) fail("must have at most " + schema.maxLength + " characters");
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) fail("must match /" + schema.pattern + "/");
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) fail("must have at least " + schema.minItems + " items");
    if (schema.maxItems !== undefined && value.length > schema.maxItems) fail("must have at most " + schema.maxItems + " items");
    if (schema.uniqueItems && value.some((v, i) => value.findIndex((w) => deepEqual(v, w)) !== i)) fail("items must be unique");
    if (schema.items !== undefined) value.forEach((v, i) => check(v, schema.items, [...keys, i], errors));
  } else if (isObject(value)) {
    for (const k of schema.required || []) {
      if (!Object.prototype.hasOwnProperty.call(value, k)) {
        errors.push({ path: formatPath([...keys, k]), message: "is required" });
      }
    }
    const props = schema.properties || {};
    for (const k of Object.keys(value)) {
      if (Object.prototype.hasOwnProperty.call(props, k)) check(value[k], props[k], [...keys, k], errors);
      else if (schema.additionalProperties === false) errors.push({ path: formatPath([...keys, k]), message: "is not allowed" });
      else if (isObject(schema.additionalProperties)) check(value[k], schema.additionalProperties, [...keys, k], errors);
    }
  }
  const count = (list) => list.filter((s) => validate(value, s).valid).length;
  if (schema.allOf) for (const s of schema.allOf) check(value, s, keys, errors);
  if (schema.anyOf && count(schema.anyOf) === 0) fail("must match at least one schema in anyOf");
  if (schema.oneOf && count(schema.oneOf) !== 1) fail("must match exactly one schema in oneOf");
  if (schema.not && validate(value, schema.not).valid) fail("must not match the schema in not");
}

/** Validate `value` against `schema`: { valid, errors: [{ path, message }] }. */
function validate(value, schema) {
  const errors = [];
  check(value, schema, [], errors);
  return { valid: errors.length === 0, errors };
}

module.exports = {
  get,
  set,
  has,
  unset,
  parsePath,
  formatPath,
  deepEqual,
  diff,
  flatten,
  unflatten,
  validate,
};
