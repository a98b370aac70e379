// Value inspector used for cell results and console output (see inspect.rs).
//
// This file is evaluated once by sb_init, before any user code runs. It
// captures every built-in it needs at that moment, so later user code that
// overwrites globals or prototype methods (Array.prototype.join = null, a
// fake Symbol.toStringTag, ...) cannot break or spoof the output. Type checks
// are "brand checks": calling a captured intrinsic getter that throws on the
// wrong receiver, which a user object cannot fake.
//
// Output is Node-like but simpler: double-quoted strings everywhere, depth
// cap, entry cap, cycle detection, and a total length budget.
(function (h) {
  "use strict";
  const MAX_LEN = 10000; // total characters budget for one inspection
  const MAX_DEPTH = 4; // nesting levels shown before [Object] / [Array]
  const MAX_ITEMS = 100; // entries shown per container
  const MAX_SCAN = 100000; // array slots scanned (sparse arrays)
  const BREAK = 72; // a container longer than this goes multi-line
  const PACK_WIDTH = 76; // line width when packing short array items

  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const getProto = Object.getPrototypeOf;
  const getDesc = Object.getOwnPropertyDescriptor;
  const ownKeys = Reflect.ownKeys;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const objectIs = Object.is;
  const jsonStringify = JSON.stringify;
  const NumberCtor = Number;
  const parseIntFn = parseInt;
  const parseFloatFn = parseFloat;
  const objectToString = uncurry(Object.prototype.toString);
  const fnToString = uncurry(Function.prototype.toString);
  const strSlice = uncurry(String.prototype.slice);
  const strIndexOf = uncurry(String.prototype.indexOf);
  const strCharCodeAt = uncurry(String.prototype.charCodeAt);
  const reTest = uncurry(RegExp.prototype.test);
  const getter = (proto, key) => uncurry(getDesc(proto, key).get);
  const mapSize = getter(Map.prototype, "size");
  const setSize = getter(Set.prototype, "size");
  const mapEntries = uncurry(Map.prototype.entries);
  const setValues = uncurry(Set.prototype.values);
  const mapIterNext = uncurry(getProto(new Map().entries()).next);
  const setIterNext = uncurry(getProto(new Set().values()).next);
  const dateGetTime = uncurry(Date.prototype.getTime);
  const dateToISO = uncurry(Date.prototype.toISOString);
  const reSource = getter(RegExp.prototype, "source");
  const reToString = uncurry(RegExp.prototype.toString);
  const abByteLength = getter(ArrayBuffer.prototype, "byteLength");
  const sabByteLength =
    typeof SharedArrayBuffer === "function"
      ? getter(SharedArrayBuffer.prototype, "byteLength")
      : null;
  const typedArrayProto = getProto(Uint8Array.prototype);
  const taTag = getter(typedArrayProto, Symbol.toStringTag);
  const taLength = getter(typedArrayProto, "length");
  const dvByteLength = getter(DataView.prototype, "byteLength");
  const weakMapHas = uncurry(WeakMap.prototype.has);
  const weakSetHas = uncurry(WeakSet.prototype.has);
  const weakRefDeref =
    typeof WeakRef === "function" ? uncurry(WeakRef.prototype.deref) : null;
  const numValueOf = uncurry(Number.prototype.valueOf);
  const strValueOf = uncurry(String.prototype.valueOf);
  const boolValueOf = uncurry(Boolean.prototype.valueOf);
  const symValueOf = uncurry(Symbol.prototype.valueOf);
  const bigValueOf = uncurry(BigInt.prototype.valueOf);
  const symToString = uncurry(Symbol.prototype.toString);
  const SetCtor = Set;
  const setAdd = uncurry(Set.prototype.add);
  const setHas = uncurry(Set.prototype.has);
  const setDelete = uncurry(Set.prototype.delete);
  const toStringTag = Symbol.toStringTag;
  const IDENT = /^[A-Za-z_$][\w$]*$/;
  const PROBE = {};
  const isError = h.isError;
  const promiseState = h.promiseState;

  // True if calling `fn(v)` does not throw, i.e. `v` has the internal slots
  // the intrinsic checks for.
  function brand(fn, v) {
    try {
      fn(v);
      return true;
    } catch {
      return false;
    }
  }
  function brand2(fn, v, arg) {
    try {
      fn(v, arg);
      return true;
    } catch {
      return false;
    }
  }

  function push(arr, x) {
    arr[arr.length] = x;
  }
  function join(arr, sep) {
    let out = "";
    for (let i = 0; i < arr.length; i++) out += (i ? sep : "") + arr[i];
    return out;
  }
  function hasNewline(s) {
    return strIndexOf(s, "\n") !== -1;
  }

  function quote(s) {
    if (s.length > MAX_LEN) {
      return (
        jsonStringify(strSlice(s, 0, MAX_LEN)) +
        "... " +
        (s.length - MAX_LEN) +
        " more characters"
      );
    }
    return jsonStringify(s);
  }

  function keyRepr(k) {
    if (typeof k === "symbol") return "[" + symToString(k) + "]";
    return reTest(IDENT, k) ? k : jsonStringify(k);
  }

  // Primitives; undefined return means "not a primitive".
  function primitive(v) {
    switch (typeof v) {
      case "undefined":
        return "undefined";
      case "boolean":
        return v ? "true" : "false";
      case "number":
        return objectIs(v, -0) ? "-0" : "" + v;
      case "bigint":
        return "" + v + "n";
      case "string":
        return quote(v);
      case "symbol":
        return symToString(v);
    }
    if (v === null) return "null";
    return undefined;
  }

  // String(v) that never throws and never returns a non-string.
  function safeString(v) {
    const p = typeof v === "string" ? v : primitive(v);
    if (p !== undefined) return p;
    try {
      return "" + v;
    } catch {
      return "[object]";
    }
  }

  function functionRepr(f) {
    let name = "";
    try {
      const d = getDesc(f, "name");
      if (d && typeof d.value === "string") name = d.value;
    } catch {}
    let src = "";
    try {
      src = fnToString(f);
    } catch {}
    if (
      strSlice(src, 0, 5) === "class" &&
      !reTest(/[\w$]/, strSlice(src, 5, 6))
    ) {
      return name ? "[class " + name + "]" : "[class (anonymous)]";
    }
    let tag = "Function";
    try {
      tag = strSlice(objectToString(f), 8, -1);
    } catch {}
    return name ? "[" + tag + ": " + name + "]" : "[" + tag + " (anonymous)]";
  }

  function errorHead(e) {
    let name, message;
    try {
      name = e.name;
    } catch {}
    try {
      message = e.message;
    } catch {}
    name = typeof name === "string" && name ? name : "Error";
    message = message === undefined ? "" : safeString(message);
    return message ? name + ": " + message : name;
  }

  // Name of the nearest constructor on the prototype chain: "" if none,
  // null for a null-prototype object.
  function ctorName(v) {
    let proto;
    try {
      proto = getProto(v);
    } catch {
      return "";
    }
    if (proto === null) return null;
    for (let i = 0; proto !== null && i < 1000; i++) {
      try {
        const d = getDesc(proto, "constructor");
        if (d && typeof d.value === "function") {
          const n = getDesc(d.value, "name");
          if (n && typeof n.value === "string" && n.value) return n.value;
        }
        proto = getProto(proto);
      } catch {
        return "";
      }
    }
    return "";
  }

  function prefixFor(v, fallback) {
    const name = ctorName(v);
    let tag;
    try {
      tag = v[toStringTag];
    } catch {}
    if (name === null) {
      return typeof tag === "string" && tag
        ? "[" + fallback + ": null prototype] [" + tag + "] "
        : "[" + fallback + ": null prototype] ";
    }
    const base = name || fallback;
    if (typeof tag === "string" && tag && tag !== base) {
      return base + " [" + tag + "] ";
    }
    return base === fallback ? "" : base + " ";
  }

  function isAccessor(d) {
    return hasOwn(d, "get") || hasOwn(d, "set");
  }

  function accessorRepr(d) {
    if (d.get && d.set) return "[Getter/Setter]";
    return d.get ? "[Getter]" : "[Setter]";
  }

  function isIndexKey(k) {
    if (typeof k !== "string") return false;
    const n = k >>> 0;
    return "" + n === k && n !== 4294967295;
  }

  // Lay out a container: one line if short, else one entry per line, or
  // several short array items per line.
  function wrap(prefix, open, close, entries, indent, packable) {
    if (entries.length === 0) return prefix + open + close;
    let total = prefix.length + indent.length + 4;
    let multiline = false;
    let widest = 0;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      total += e.length + 2;
      if (e.length > widest) widest = e.length;
      if (hasNewline(e)) multiline = true;
    }
    if (!multiline && total <= BREAK) {
      return prefix + open + " " + join(entries, ", ") + " " + close;
    }
    const inner = indent + "  ";
    if (packable && !multiline && entries.length > 6 && widest <= 16) {
      const rows = [];
      let row = "";
      for (let i = 0; i < entries.length; i++) {
        const piece = entries[i] + (i < entries.length - 1 ? "," : "");
        if (row && inner.length + row.length + 1 + piece.length > PACK_WIDTH) {
          push(rows, row);
          row = piece;
        } else {
          row = row ? row + " " + piece : piece;
        }
      }
      if (row) push(rows, row);
      return prefix + open + "\n" + inner + join(rows, "\n" + inner) + "\n" + indent + close;
    }
    return (
      prefix + open + "\n" + inner + join(entries, ",\n" + inner) + "\n" + indent + close
    );
  }

  function leaf(s, st) {
    st.budget -= s.length;
    return s;
  }

  // Own enumerable properties as "key: value" entries (skipping array
  // indices when `skipIndices`).
  function propEntries(v, entries, depth, indent, st, skipIndices) {
    const keys = ownKeys(v);
    let more = 0;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (skipIndices && (isIndexKey(k) || k === "length")) continue;
      const d = getDesc(v, k);
      if (!d || !d.enumerable) continue;
      if (entries.length >= MAX_ITEMS || st.budget <= 0) {
        more++;
        continue;
      }
      const kr = leaf(keyRepr(k), st);
      const vr =
        isAccessor(d)
          ? leaf(accessorRepr(d), st)
          : fmt(d.value, depth + 1, indent + "  ", st);
      push(entries, kr + ": " + vr);
    }
    if (more) push(entries, "... " + more + " more item" + (more > 1 ? "s" : ""));
  }

  function fmt(v, depth, indent, st) {
    const p = primitive(v);
    if (p !== undefined) return leaf(p, st);
    if (typeof v === "function") return leaf(functionRepr(v), st);
    if (setHas(st.seen, v)) return leaf("[Circular]", st);
    if (isError(v)) {
      const head = errorHead(v);
      return leaf(depth === 0 && st.top ? head : "[" + head + "]", st);
    }
    if (brand(dateGetTime, v)) {
      const t = dateGetTime(v);
      return leaf(t === t ? dateToISO(v) : "Invalid Date", st);
    }
    if (brand(reSource, v)) return leaf(reToString(v), st);
    if (brand(numValueOf, v)) return leaf("[Number: " + primitive(numValueOf(v)) + "]", st);
    if (brand(strValueOf, v)) return leaf("[String: " + quote(strValueOf(v)) + "]", st);
    if (brand(boolValueOf, v)) return leaf("[Boolean: " + primitive(boolValueOf(v)) + "]", st);
    if (brand(symValueOf, v)) return leaf("[Symbol: " + primitive(symValueOf(v)) + "]", st);
    if (brand(bigValueOf, v)) return leaf("[BigInt: " + primitive(bigValueOf(v)) + "]", st);
    if (brand2(weakMapHas, v, PROBE)) return leaf("WeakMap { <items unknown> }", st);
    if (brand2(weakSetHas, v, PROBE)) return leaf("WeakSet { <items unknown> }", st);
    if (weakRefDeref && brand(weakRefDeref, v)) return leaf("WeakRef { <target> }", st);
    if (brand(abByteLength, v)) {
      return leaf("ArrayBuffer { byteLength: " + abByteLength(v) + " }", st);
    }
    if (sabByteLength && brand(sabByteLength, v)) {
      return leaf("SharedArrayBuffer { byteLength: " + sabByteLength(v) + " }", st);
    }
    if (brand(dvByteLength, v)) {
      return leaf("DataView { byteLength: " + dvByteLength(v) + " }", st);
    }

    let isArguments = false;
    try {
      isArguments = objectToString(v) === "[object Arguments]";
    } catch {}
    const array = isArray(v) || isArguments;
    if (depth > MAX_DEPTH) {
      return leaf(array ? "[Array]" : "[" + (ctorName(v) || "Object") + "]", st);
    }

    setAdd(st.seen, v);
    try {
      const entries = [];
      const inner = indent + "  ";
      const tag = taTag(v);
      if (array) {
        const len = v.length;
        let holes = 0;
        let i = 0;
        for (; i < len && i < MAX_SCAN && entries.length < MAX_ITEMS && st.budget > 0; i++) {
          const d = getDesc(v, i);
          if (d === undefined) {
            holes++;
            continue;
          }
          if (holes) {
            push(entries, "<" + holes + " empty item" + (holes > 1 ? "s" : "") + ">");
            holes = 0;
          }
          push(
            entries,
            isAccessor(d) ? leaf(accessorRepr(d), st) : fmt(d.value, depth + 1, inner, st),
          );
        }
        if (holes) push(entries, "<" + holes + " empty item" + (holes > 1 ? "s" : "") + ">");
        if (i < len) {
          const rest = len - i;
          push(entries, "... " + rest + " more item" + (rest > 1 ? "s" : ""));
        }
        if (len <= 1000) propEntries(v, entries, depth, indent, st, true);
        const name = ctorName(v);
        const prefix = isArguments
          ? "[Arguments] "
          : name === "Array"
            ? ""
            : (name || "Array") + "(" + len + ") ";
        return wrap(prefix, "[", "]", entries, indent, true);
      }
      if (tag !== undefined) {
        const len = taLength(v);
        let i = 0;
        for (; i < len && entries.length < MAX_ITEMS && st.budget > 0; i++) {
          push(entries, leaf(primitive(v[i]), st));
        }
        if (i < len) push(entries, "... " + (len - i) + " more item" + (len - i > 1 ? "s" : ""));
        return wrap(tag + "(" + len + ") ", "[", "]", entries, indent, true);
      }
      if (brand(mapSize, v)) {
        const size = mapSize(v);
        const it = mapEntries(v);
        let n = 0;
        for (let r = mapIterNext(it); !r.done; r = mapIterNext(it)) {
          if (n >= MAX_ITEMS || st.budget <= 0) break;
          const kv = r.value;
          push(entries, fmt(kv[0], depth + 1, inner, st) + " => " + fmt(kv[1], depth + 1, inner, st));
          n++;
        }
        if (n < size) push(entries, "... " + (size - n) + " more item" + (size - n > 1 ? "s" : ""));
        return wrap((ctorName(v) || "Map") + "(" + size + ") ", "{", "}", entries, indent, false);
      }
      if (brand(setSize, v)) {
        const size = setSize(v);
        const it = setValues(v);
        let n = 0;
        for (let r = setIterNext(it); !r.done; r = setIterNext(it)) {
          if (n >= MAX_ITEMS || st.budget <= 0) break;
          push(entries, fmt(r.value, depth + 1, inner, st));
          n++;
        }
        if (n < size) push(entries, "... " + (size - n) + " more item" + (size - n > 1 ? "s" : ""));
        return wrap((ctorName(v) || "Set") + "(" + size + ") ", "{", "}", entries, indent, true);
      }
      const ps = promiseState(v);
      if (ps !== undefined) {
        if (ps[0] === "pending") push(entries, "<pending>");
        else if (ps[0] === "rejected") push(entries, "<rejected> " + fmt(ps[1], depth + 1, inner, st));
        else push(entries, fmt(ps[1], depth + 1, inner, st));
        return wrap("Promise ", "{", "}", entries, indent, false);
      }
      propEntries(v, entries, depth, indent, st, false);
      return wrap(prefixFor(v, "Object"), "{", "}", entries, indent, false);
    } finally {
      setDelete(st.seen, v);
    }
  }

  // The repr of one value. `top` marks a cell result / console argument
  // (errors render as "Name: message" instead of "[Name: message]").
  function inspect(v) {
    const st = { seen: new SetCtor(), budget: MAX_LEN, top: true };
    try {
      return fmt(v, 0, "", st);
    } catch (e) {
      return "[uninspectable value]";
    }
  }

  // A top-level console argument: like inspect, but errors also print their
  // stack, as Node does.
  function consoleArg(v) {
    if (typeof v === "string") return v;
    if (isError(v)) {
      let stack;
      try {
        stack = v.stack;
      } catch {}
      const head = errorHead(v);
      if (typeof stack !== "string" || !stack) return head;
      if (stack[stack.length - 1] === "\n") stack = strSlice(stack, 0, -1);
      return head + "\n" + stack;
    }
    return inspect(v);
  }

  // console.* argument formatting with Node's printf-style directives.
  function format(args) {
    let out = "";
    let i = 0;
    const first = args[0];
    if (typeof first === "string" && args.length > 1 && strIndexOf(first, "%") !== -1) {
      i = 1;
      let last = 0;
      for (let j = 0; j < first.length - 1; j++) {
        if (strCharCodeAt(first, j) !== 37 /* % */) continue;
        const c = first[j + 1];
        let rep;
        if (c === "%") {
          rep = "%";
        } else if (i < args.length) {
          const a = args[i];
          switch (c) {
            case "s":
              rep =
                typeof a === "string"
                  ? a
                  : typeof a === "bigint"
                    ? a + "n"
                    : typeof a === "symbol"
                      ? symToString(a)
                      : (typeof a === "object" && a !== null) || typeof a === "function"
                        ? inspect(a)
                        : "" + a;
              break;
            case "d":
            case "i":
            case "f": {
              if (typeof a === "bigint") {
                rep = a + "n";
              } else if (typeof a === "symbol") {
                rep = "NaN";
              } else {
                const n = c === "d" ? NumberCtor(a) : c === "i" ? parseIntFn(a) : parseFloatFn(a);
                rep = objectIs(n, -0) ? "-0" : "" + n;
              }
              break;
            }
            case "j":
              try {
                rep = jsonStringify(a);
                if (rep === undefined) rep = "undefined";
              } catch {
                rep = "[Circular]";
              }
              break;
            case "o":
            case "O":
              rep = inspect(a);
              break;
            case "c":
              rep = "";
              break;
          }
          if (rep !== undefined) i++;
        }
        if (rep === undefined) continue;
        out += strSlice(first, last, j) + rep;
        last = j + 2;
        j++;
      }
      out += strSlice(first, last);
    }
    for (; i < args.length; i++) out += (i > 0 ? " " : "") + consoleArg(args[i]);
    return out;
  }

  return { inspect, format };
})
