// Convenience globals for scripts: readText, writeText, appendText, readJson,
// writeJson, fileExists, listFiles, and requireVendor for the pure-JS
// packages vendored under /data/js. See library.rs.
//
// Unlike std/os (which keep QuickJS's C-style return codes), these throw an
// ordinary Error when something fails, worded like Node's fs errors and
// carrying `code` ("ENOENT"), `errno` (WASI number), `path` (resolved) and
// `syscall` (the helper's name). Relative paths resolve against the working
// directory, /app unless os.chdir() changed it.
//
// Evaluated right after stdlib.js, on first use (loader.js); built-ins are
// captured then.
(function (N, lib) {
  "use strict";

  const StringCtor = String;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const SyntaxErrorCtor = SyntaxError;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const MapCtor = Map;
  const mapGet = Function.prototype.call.bind(Map.prototype.get);
  const mapSet = Function.prototype.call.bind(Map.prototype.set);
  const mapDelete = Function.prototype.call.bind(Map.prototype.delete);
  const arrayPush = Function.prototype.call.bind(Array.prototype.push);
  const arraySort = Function.prototype.call.bind(Array.prototype.sort);
  const arrayJoin = Function.prototype.call.bind(Array.prototype.join);
  const strSlice = Function.prototype.call.bind(String.prototype.slice);
  const strLastIndexOf = Function.prototype.call.bind(String.prototype.lastIndexOf);
  const strStartsWith = Function.prototype.call.bind(String.prototype.startsWith);
  const strEndsWith = Function.prototype.call.bind(String.prototype.endsWith);
  const strSplit = Function.prototype.call.bind(String.prototype.split);
  const strIndexOf = Function.prototype.call.bind(String.prototype.indexOf);
  const reTest = Function.prototype.call.bind(RegExp.prototype.test);
  const fnCall = Function.prototype.call.bind(Function.prototype.call);
  const isView = ArrayBuffer.isView;
  const { errnoName, errno, toData, userError } = lib;

  const WRITE_APPEND = 1;
  const WRITE_PARENTS = 2;
  const KIND_DIR = 1;
  const failed = (r) => typeof r === "number" && r < 0;
  const byName = (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

  function pathArg(who, path) {
    if (typeof path !== "string" || path === "") {
      throw userError(new TypeErrorCtor(who + ": path must be a non-empty string, got " + describe(path)));
    }
    return path;
  }

  function describe(v) {
    if (v === null) return "null";
    if (typeof v === "string") return jsonStringify(v);
    if (typeof v === "object") return isView(v) ? "a typed array" : "an object";
    return typeof v === "function" ? "a function" : StringCtor(v);
  }

  function insideMounts(abs) {
    const mounts = N.mounts();
    for (let i = 0; i < mounts.length; i++) {
      const m = mounts[i];
      if (abs === m || strStartsWith(abs, m + "/")) return true;
    }
    return false;
  }

  // Node-style: "ENOENT: No such file or directory, readText 'x.txt' (/app/x.txt)".
  function fsError(syscall, path, code) {
    const abs = N.resolve(path);
    const name = errnoName(code);
    let message = name + ": " + N.strerror(code) + ", " + syscall + " '" + path + "'";
    if (typeof abs === "string" && abs !== path) message += " (" + abs + ")";
    if (code === errno.ENOENT && typeof abs === "string" && !insideMounts(abs)) {
      message +=
        "; only " + arrayJoin(N.mounts(), ", ") + " exist in the sandbox (relative paths start at /app)";
    }
    const denied = code === errno.EPERM || code === errno.EACCES || code === errno.EROFS;
    if (denied && typeof abs === "string" && (abs === "/data" || strStartsWith(abs, "/data/"))) {
      message += "; /data is read-only";
    }
    const e = new ErrorCtor(message);
    e.code = name;
    e.errno = code;
    e.path = typeof abs === "string" ? abs : path;
    e.syscall = syscall;
    return userError(e);
  }

  function check(syscall, path, r) {
    if (failed(r)) throw fsError(syscall, path, -r);
    return r;
  }

  // ------------------------------------------------------------- files --
  function readText(path) {
    pathArg("readText", path);
    return check("readText", path, N.readFile(path, false));
  }

  function textArg(who, text) {
    switch (typeof text) {
      case "string":
        return text;
      case "number":
      case "boolean":
      case "bigint":
        return StringCtor(text);
      case "object":
        if (text !== null && isView(text)) return toData(text);
        if (text !== null) {
          const binary = toData(text); // an ArrayBuffer becomes bytes
          if (typeof binary !== "string") return binary;
        }
    }
    throw userError(new TypeErrorCtor(
      who + ": text must be a string (or bytes), got " + describe(text) +
        (who === "writeText" ? "; use writeJson(path, value) for objects" : ""),
    ));
  }

  function writeText(path, text) {
    pathArg("writeText", path);
    check("writeText", path, N.writeFile(path, textArg("writeText", text), WRITE_PARENTS));
  }

  function appendText(path, text) {
    pathArg("appendText", path);
    check(
      "appendText",
      path,
      N.writeFile(path, textArg("appendText", text), WRITE_APPEND | WRITE_PARENTS),
    );
  }

  function readJson(path) {
    const text = readText(path);
    try {
      return jsonParse(text);
    } catch (e) {
      throw userError(new SyntaxErrorCtor("readJson '" + path + "': " + (e && e.message)));
    }
  }

  function writeJson(path, value, indent = 2) {
    pathArg("writeJson", path);
    const text = jsonStringify(value, null, indent);
    if (text === undefined) {
      throw userError(new TypeErrorCtor("writeJson: " + typeof value + " cannot be written as JSON"));
    }
    check("writeJson", path, N.writeFile(path, text + "\n", WRITE_PARENTS));
  }

  function fileExists(path) {
    if (typeof path !== "string" || path === "") return false;
    return !failed(N.stat(path, true));
  }

  function listFiles(dir = ".", options) {
    pathArg("listFiles", dir);
    const recursive = options === true || !!(options && options.recursive);
    const out = [];
    const walk = (path, prefix, depth) => {
      const entries = check("listFiles", path, N.readdir(path));
      arraySort(entries, byName);
      for (let i = 0; i < entries.length; i++) {
        const [name, kind] = entries[i];
        if (kind === KIND_DIR) {
          arrayPush(out, prefix + name + "/");
          // Symlinks are listed but not followed, so a link loop cannot
          // recurse forever; the depth cap bounds pathological trees.
          if (recursive && depth < 64) walk(path + "/" + name, prefix + name + "/", depth + 1);
        } else {
          arrayPush(out, prefix + name);
        }
      }
    };
    walk(dir, "", 0);
    return out;
  }

  // ------------------------------------------------------ requireVendor --
  const VENDOR_ROOT = "/data/js";
  const INSTALLED_ROOT = "/app/node_modules";
  const NODE_BUILTINS =
    " assert buffer child_process crypto dns events fs http https net os path process " +
    "querystring readline stream string_decoder timers tls tty url util vm worker_threads zlib ";
  const modules = new MapCtor(); // resolved filename -> module record

  const isFile = (p) => {
    const st = N.stat(p, true);
    return !failed(st) && (st.mode & 0o170000) === 0o100000;
  };
  const isDir = (p) => {
    const st = N.stat(p, true);
    return !failed(st) && (st.mode & 0o170000) === 0o040000;
  };

  function available() {
    const entries = N.readdir(VENDOR_ROOT);
    if (failed(entries)) return [];
    const names = [];
    for (let i = 0; i < entries.length; i++) {
      if (entries[i][1] === KIND_DIR) arrayPush(names, entries[i][0]);
    }
    return arraySort(names);
  }

  function notFound(message) {
    const e = new ErrorCtor(message);
    e.code = "MODULE_NOT_FOUND";
    return userError(e);
  }

  // Node's file resolution, minus node_modules: exact, .js, .json, directory.
  function resolveFile(p) {
    if (isFile(p)) return p;
    if (isFile(p + ".js")) return p + ".js";
    if (isFile(p + ".json")) return p + ".json";
    if (isDir(p)) return resolveDir(p);
    return null;
  }

  function resolveDir(dir) {
    const pj = dir + "/package.json";
    if (isFile(pj)) {
      let main;
      try {
        main = jsonParse(readText(pj)).main;
      } catch (e) {
        main = undefined;
      }
      if (typeof main === "string" && main !== "") {
        const f = resolveFile(N.resolve(dir + "/" + main));
        if (f) return f;
      }
    }
    return isFile(dir + "/index.js") ? dir + "/index.js" : null;
  }

  function load(file) {
    const cached = mapGet(modules, file);
    if (cached) return cached.exports;
    const module = { id: file, filename: file, exports: {}, loaded: false };
    // Cached before it runs, so require cycles see the partial exports, as
    // in Node.
    mapSet(modules, file, module);
    try {
      let source = readText(file);
      if (strEndsWith(file, ".json")) {
        module.exports = jsonParse(source);
      } else {
        if (strStartsWith(source, "#!")) source = "//" + source;
        const dirname = strSlice(file, 0, strLastIndexOf(file, "/"));
        const fn = N.evalScript(
          "(function (exports, require, module, __filename, __dirname) {" + source + "\n})",
          file,
          0,
        );
        fnCall(fn, module.exports, module.exports, makeRequire(dirname), module, file, dirname);
      }
      module.loaded = true;
    } catch (e) {
      mapDelete(modules, file);
      throw e;
    }
    return module.exports;
  }

  function makeRequire(dirname) {
    return function require(spec) {
      spec = StringCtor(spec);
      if (spec === "." || spec === ".." || strStartsWith(spec, "./") || strStartsWith(spec, "../")) {
        const file = resolveFile(N.resolve(dirname + "/" + spec));
        if (!file) throw notFound("Cannot find module '" + spec + "' from " + dirname);
        return load(file);
      }
      return requireVendor(spec);
    };
  }

  function requireVendor(name) {
    name = StringCtor(name);
    if (strStartsWith(name, "node:") || strIndexOf(NODE_BUILTINS, " " + name + " ") >= 0) {
      throw notFound(
        "'" + name + "' is a Node.js built-in module; this is QuickJS, not Node: use " +
          "readText/writeText/listFiles or the std and os globals for files",
      );
    }
    const parts = strSplit(name, "/");
    const scoped = strStartsWith(name, "@");
    const pkg = scoped ? parts[0] + "/" + parts[1] : parts[0];
    const valid =
      reTest(/^(@[A-Za-z0-9][\w.-]*\/)?[A-Za-z0-9][\w.-]*(\/[\w.@+-]+)*$/, name) &&
      !reTest(/(^|\/)\.\.?(\/|$)/, name);
    if (!valid) throw notFound("requireVendor: invalid package name '" + name + "'");
    // Packages installed into the session (install_package) come first, then the vendored set.
    let root = INSTALLED_ROOT + "/" + pkg;
    if (!isDir(root)) root = VENDOR_ROOT + "/" + pkg;
    if (!isDir(root)) {
      const have = available();
      throw notFound(
        "requireVendor: no vendored package '" + pkg + "'" +
          (have.length
            ? " (available: " + arrayJoin(have, ", ") + ")"
            : " (no packages under " + VENDOR_ROOT + ")"),
      );
    }
    const sub = strSlice(name, pkg.length + 1);
    const file = sub ? resolveFile(root + "/" + sub) : resolveDir(root);
    if (!file) throw notFound("requireVendor: cannot find '" + name + "' under " + root);
    return load(file);
  }

  // ---------------------------------------------------------------------
  return {
    readText,
    writeText,
    appendText,
    readJson,
    writeJson,
    fileExists,
    listFiles,
    requireVendor,
  };
});
