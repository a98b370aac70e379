// The QuickJS `std` and `os` modules, as the globals `std` and `os` (cells are
// scripts, so they cannot `import * as std from "qjs:std"`). See library.rs.
//
// quickjs-libc does not exist in rquickjs, so this re-creates the commonly
// used part of it on top of the native functions in natives.rs, keeping
// quickjs-libc's names, arguments and return conventions exactly:
//   - functions that only report success return 0 or -errno;
//   - functions that return something return [value, err] with err = 0 or a
//     *positive* errno (os.stat, os.readdir, os.getcwd, os.realpath,
//     os.readlink), or null on failure (std.loadFile, std.open, getline);
//   - errno values are WASI's (ENOENT is 44), as in a WASI build of qjs.
// Paths are resolved against the working directory (/app) by the natives.
//
// Evaluated when a script first uses one of the library globals (loader.js);
// the built-ins it uses are captured then, so user code that replaces globals
// later cannot break these functions. `timers` are the original setTimeout &
// co, captured before any user code ran.
(function (N, timers) {
  "use strict";

  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const isView = ArrayBuffer.isView;
  const abByteLength = Function.prototype.call.bind(
    Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get,
  );
  const U8 = Uint8Array;
  const u8Set = Function.prototype.call.bind(Uint8Array.prototype.set);
  const StringCtor = String;
  const NumberCtor = Number;
  const BigIntCtor = BigInt;
  const MathFloor = Math.floor;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const SyntaxErrorCtor = SyntaxError;
  const ReferenceErrorCtor = ReferenceError;
  const PromiseCtor = Promise;
  const arrayPush = Function.prototype.call.bind(Array.prototype.push);
  const strCharCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
  const strSlice = Function.prototype.call.bind(String.prototype.slice);
  const fromCodePoint = String.fromCodePoint;
  const fromCharCode = String.fromCharCode;
  const strIndexOf = Function.prototype.call.bind(String.prototype.indexOf);
  const reTest = Function.prototype.call.bind(RegExp.prototype.test);
  const reExec = Function.prototype.call.bind(RegExp.prototype.exec);
  const parseIntFn = parseInt;
  const parseFloatFn = parseFloat;

  // WASI errno names, indexed by value (wasi-libc's <errno.h>).
  const ERRNO_NAMES = (
    "0 E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EALREADY " +
    "EBADF EBADMSG EBUSY ECANCELED ECHILD ECONNABORTED ECONNREFUSED " +
    "ECONNRESET EDEADLK EDESTADDRREQ EDOM EDQUOT EEXIST EFAULT EFBIG " +
    "EHOSTUNREACH EIDRM EILSEQ EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR " +
    "ELOOP EMFILE EMLINK EMSGSIZE EMULTIHOP ENAMETOOLONG ENETDOWN ENETRESET " +
    "ENETUNREACH ENFILE ENOBUFS ENODEV ENOENT ENOEXEC ENOLCK ENOLINK ENOMEM " +
    "ENOMSG ENOPROTOOPT ENOSPC ENOSYS ENOTCONN ENOTDIR ENOTEMPTY " +
    "ENOTRECOVERABLE ENOTSOCK ENOTSUP ENOTTY ENXIO EOVERFLOW EOWNERDEAD " +
    "EPERM EPIPE EPROTO EPROTONOSUPPORT EPROTOTYPE ERANGE EROFS ESPIPE ESRCH " +
    "ESTALE ETIMEDOUT ETXTBSY EXDEV ENOTCAPABLE"
  ).split(" ");
  const errno = {};
  for (let i = 1; i < ERRNO_NAMES.length; i++) errno[ERRNO_NAMES[i]] = i;
  const errnoName = (code) => ERRNO_NAMES[code] || "E" + code;

  const failed = (r) => typeof r === "number" && r < 0;

  // Drop this library's own frames ("<sandbox:...>") from an error's stack,
  // so it points at the user's line first.
  const arrayFilter = Function.prototype.call.bind(Array.prototype.filter);
  const arrayJoin = Function.prototype.call.bind(Array.prototype.join);
  const strSplit = Function.prototype.call.bind(String.prototype.split);
  function userError(e) {
    const stack = e.stack;
    if (typeof stack === "string") {
      e.stack = arrayJoin(
        arrayFilter(strSplit(stack, "\n"), (line) => strIndexOf(line, "<sandbox:") < 0),
        "\n",
      );
    }
    return e;
  }
  const toPath = (p) => StringCtor(p);

  // A string stays a string (written as UTF-8); ArrayBuffers and views become
  // a Uint8Array over the same bytes; undefined is "", anything else String().
  function toData(data) {
    if (typeof data === "string") return data;
    if (data === undefined) return "";
    if (isView(data)) return new U8(data.buffer, data.byteOffset, data.byteLength);
    if (typeof data === "object" && data !== null) {
      try {
        abByteLength(data); // brand check: throws unless an ArrayBuffer
        return new U8(data);
      } catch (e) {
        // not an ArrayBuffer
      }
    }
    return StringCtor(data);
  }

  // The bytes of an ArrayBuffer or view, as a Uint8Array (for FILE.read and
  // FILE.write with a position and length).
  function bytesOf(buffer, who) {
    if (isView(buffer)) return new U8(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    try {
      abByteLength(buffer);
    } catch (e) {
      throw userError(new TypeErrorCtor(who + ": expected an ArrayBuffer"));
    }
    return new U8(buffer);
  }

  // position/length clamping exactly as quickjs-libc's FILE.read/write.
  function span(size, args) {
    let pos = args.length > 1 ? toIndex(args[1]) : 0;
    let len = args.length > 2 ? toIndex(args[2]) : 0;
    if (pos > size) pos = size;
    if (args.length < 3) len = size - pos;
    if (pos + len > size) len = size - pos;
    return [pos, len];
  }

  function toIndex(v) {
    const n = NumberCtor(v);
    if (!(n >= 0)) return 0;
    return MathFloor(n);
  }

  // ---------------------------------------------------------------- FILE --
  const STDIO = 3; // handles 0, 1, 2

  // FILE objects are native (file_class.rs): their finalizer closes the
  // handle when the script drops the last reference, like quickjs-libc's.
  const idOf = (file) => N.fileId(file); // TypeError "invalid file handle"

  const FILE_PROTO = {
    close() {
      const r = N.fclose(idOf(this)); // throws for stdio
      N.fileDetach(this);
      return r;
    },
    puts(...args) {
      const id = idOf(this);
      for (let i = 0; i < args.length; i++) N.fwrite(id, StringCtor(args[i]));
    },
    printf(...args) {
      const id = idOf(this);
      const r = N.fwrite(id, N.sprintf(...args));
      return failed(r) ? 0 : r;
    },
    flush() {
      N.fflags(idOf(this)); // checks the handle; writes are unbuffered
    },
    seek(offset, whence) {
      const r = N.fseek(idOf(this), NumberCtor(offset), NumberCtor(whence) | 0);
      return failed(r) ? r : 0;
    },
    tell() {
      return N.ftell(idOf(this));
    },
    tello() {
      return BigIntCtor(N.ftell(idOf(this)));
    },
    eof() {
      return (N.fflags(idOf(this)) & 1) !== 0;
    },
    error() {
      return (N.fflags(idOf(this)) & 2) !== 0;
    },
    clearerr() {
      N.fclearerr(idOf(this));
    },
    fileno() {
      return idOf(this);
    },
    read(buffer, ...rest) {
      const id = idOf(this);
      const bytes = bytesOf(buffer, "read");
      const [pos, len] = span(bytes.length, [buffer, ...rest]);
      const got = N.fread(id, len, false);
      if (failed(got)) return 0;
      u8Set(bytes, got, pos);
      return got.length;
    },
    write(buffer, ...rest) {
      const id = idOf(this);
      let data;
      if (typeof buffer === "string" && rest.length === 0) {
        data = buffer;
      } else {
        const bytes = typeof buffer === "string" ? N.encode(buffer) : bytesOf(buffer, "write");
        const [pos, len] = span(bytes.length, [buffer, ...rest]);
        data = new U8(bytes.buffer, bytes.byteOffset + pos, len);
      }
      const r = N.fwrite(id, data);
      return failed(r) ? 0 : r;
    },
    getline() {
      const r = N.fgetline(idOf(this));
      return typeof r === "string" ? r : null;
    },
    readAsString(maxSize) {
      const r = N.fread(idOf(this), maxSize === undefined ? -1 : toIndex(maxSize), true);
      return failed(r) ? "" : r;
    },
    readAsArrayBuffer(maxSize) {
      const r = N.fread(idOf(this), maxSize === undefined ? -1 : toIndex(maxSize), false);
      return failed(r) ? new ArrayBuffer(0) : r.buffer;
    },
    getByte() {
      return N.fgetByte(idOf(this));
    },
    putByte(c) {
      const r = N.fwrite(idOf(this), new U8([NumberCtor(c) & 255]));
      return failed(r) ? -1 : NumberCtor(c) | 0;
    },
  };
  defineProperty(FILE_PROTO, Symbol.toStringTag, { value: "FILE" });
  freeze(FILE_PROTO);

  const newFile = (id) => N.fileNew(FILE_PROTO, id);

  const stdin = newFile(0);
  const stdout = newFile(1);
  const stderr = newFile(2);

  function setErrno(errorObj, code) {
    if (errorObj !== undefined && errorObj !== null) errorObj.errno = code;
  }

  // ----------------------------------------------------------------- std --
  const std = {
    exit(n) {
      throw userError(new ErrorCtor(
        "std.exit() is not available in the sandbox: the session keeps running " +
          "between calls; return from your code (or throw) instead",
      ));
    },
    gc() {
      N.gc();
    },
    evalScript(str, options) {
      const flags =
        (options && options.async ? 1 : 0) | (options && options.backtrace_barrier ? 2 : 0);
      return N.evalScript(StringCtor(str), "<evalScript>", flags);
    },
    loadScript(filename) {
      const path = toPath(filename);
      const source = N.readFile(path, false);
      if (failed(source)) throw userError(new ReferenceErrorCtor("could not load '" + path + "'"));
      return N.evalScript(source, N.resolve(path), 0);
    },
    getenv(name) {
      return N.getenv(StringCtor(name));
    },
    setenv(name, value) {
      N.setenv(StringCtor(name), StringCtor(value));
    },
    unsetenv(name) {
      N.unsetenv(StringCtor(name));
    },
    getenviron() {
      return N.getenviron();
    },
    loadFile(filename, options) {
      const binary = !!(options && options.binary);
      const r = N.readFile(toPath(filename), binary);
      return failed(r) ? null : r;
    },
    writeFile(filename, data) {
      const path = toPath(filename);
      const r = N.writeFile(path, toData(data), 0);
      if (failed(r)) {
        throw userError(new ErrorCtor(
          "error writing to " + path + ": " + N.strerror(-r) + " (" + errnoName(-r) + ")",
        ));
      }
    },
    strerror(code) {
      return N.strerror(NumberCtor(code) | 0);
    },
    open(filename, mode, errorObj) {
      const path = toPath(filename);
      const r = N.fopen(path, StringCtor(mode));
      setErrno(errorObj, failed(r) ? -r : 0);
      return failed(r) ? null : newFile(r);
    },
    fdopen(fd, mode, errorObj) {
      const id = NumberCtor(fd);
      if (id === 0 || id === 1 || id === 2) {
        setErrno(errorObj, 0);
        return [stdin, stdout, stderr][id];
      }
      if (N.fstate(id) !== 0) {
        setErrno(errorObj, errno.EBADF);
        return null;
      }
      setErrno(errorObj, 0);
      return newFile(id);
    },
    puts(str) {
      N.fwrite(1, StringCtor(str));
    },
    printf(...args) {
      const r = N.fwrite(1, N.sprintf(...args));
      return failed(r) ? 0 : r;
    },
    sprintf(...args) {
      return N.sprintf(...args);
    },
    parseExtJSON(str) {
      return parseExtJSON(StringCtor(str));
    },
    in: stdin,
    out: stdout,
    err: stderr,
    SEEK_SET: 0,
    SEEK_CUR: 1,
    SEEK_END: 2,
    Error: freeze({
      EINVAL: errno.EINVAL,
      EIO: errno.EIO,
      EACCES: errno.EACCES,
      EEXIST: errno.EEXIST,
      ENOSPC: errno.ENOSPC,
      ENOSYS: errno.ENOSYS,
      EBUSY: errno.EBUSY,
      ENOENT: errno.ENOENT,
      EPERM: errno.EPERM,
      EPIPE: errno.EPIPE,
      EBADF: errno.EBADF,
    }),
  };

  // ------------------------------------------------------------------ os --
  // WASI-libc values, as a WASI build of quickjs-libc exposes them.
  const O_RDONLY = 0x04000000;
  const O_WRONLY = 0x10000000;

  // A handle for os.* descriptor functions: -EBADF instead of a throw.
  function fdOk(fd) {
    return N.fstate(NumberCtor(fd)) === 0;
  }

  const os = {
    open(filename, flags, mode) {
      return N.fopenFlags(toPath(filename), NumberCtor(flags) | 0);
    },
    close(fd) {
      const id = NumberCtor(fd);
      if (N.fstate(id) === 2) N.fclose(id); // stale: forget it, but say EBADF
      if (!fdOk(id)) return -errno.EBADF;
      if (id < STDIO) return 0; // the sandbox's stdio stays open
      return N.fclose(id);
    },
    seek(fd, offset, whence) {
      const big = typeof offset === "bigint";
      const r = fdOk(fd)
        ? N.fseek(NumberCtor(fd), NumberCtor(offset), NumberCtor(whence) | 0)
        : -errno.EBADF;
      return big ? BigIntCtor(r) : r;
    },
    read(fd, buffer, offset, length) {
      if (!fdOk(fd)) return -errno.EBADF;
      const bytes = bytesOf(buffer, "os.read");
      const pos = toIndex(offset);
      const len = toIndex(length);
      if (pos + len > bytes.length) throw userError(new RangeError("read/write array buffer overflow"));
      const got = N.fread(NumberCtor(fd), len, false);
      if (failed(got)) return got;
      u8Set(bytes, got, pos);
      return got.length;
    },
    write(fd, buffer, offset, length) {
      if (!fdOk(fd)) return -errno.EBADF;
      const bytes = bytesOf(buffer, "os.write");
      const pos = toIndex(offset);
      const len = toIndex(length);
      if (pos + len > bytes.length) throw userError(new RangeError("read/write array buffer overflow"));
      return N.fwrite(NumberCtor(fd), new U8(bytes.buffer, bytes.byteOffset + pos, len));
    },
    isatty(fd) {
      return false;
    },
    remove(filename) {
      return N.remove(toPath(filename));
    },
    rename(oldname, newname) {
      return N.rename(toPath(oldname), toPath(newname));
    },
    realpath(path) {
      const r = N.realpath(toPath(path));
      return failed(r) ? ["", -r] : [r, 0];
    },
    getcwd() {
      return [N.getcwd(), 0];
    },
    chdir(path) {
      return N.chdir(toPath(path));
    },
    mkdir(path, mode) {
      return N.mkdir(toPath(path), false);
    },
    readdir(path) {
      const r = N.readdir(toPath(path));
      if (failed(r)) return [[], -r];
      const names = [".", ".."];
      for (let i = 0; i < r.length; i++) arrayPush(names, r[i][0]);
      return [names, 0];
    },
    stat(path) {
      const r = N.stat(toPath(path), true);
      return failed(r) ? [null, -r] : [r, 0];
    },
    lstat(path) {
      const r = N.stat(toPath(path), false);
      return failed(r) ? [null, -r] : [r, 0];
    },
    readlink(path) {
      const r = N.readlink(toPath(path));
      return failed(r) ? ["", -r] : [r, 0];
    },
    utimes(path, atime, mtime) {
      return N.utimes(toPath(path), NumberCtor(atime), NumberCtor(mtime));
    },
    sleep(delayMs) {
      N.sleep(NumberCtor(delayMs));
    },
    sleepAsync(delayMs) {
      return new PromiseCtor((resolve) => timers.setTimeout(resolve, NumberCtor(delayMs)));
    },
    now() {
      // Microseconds, like quickjs-libc.
      return MathFloor(N.now() * 1000);
    },
    exePath() {
      return undefined;
    },
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    setInterval: timers.setInterval,
    clearInterval: timers.clearInterval,
    platform: "wasi",
    O_RDONLY,
    O_WRONLY,
    O_RDWR: O_RDONLY | O_WRONLY,
    O_APPEND: 0x0001,
    O_CREAT: 0x1000,
    O_EXCL: 0x4000,
    O_TRUNC: 0x8000,
    S_IFMT: 0o170000,
    S_IFIFO: 0o010000,
    S_IFCHR: 0o020000,
    S_IFDIR: 0o040000,
    S_IFBLK: 0o060000,
    S_IFREG: 0o100000,
    S_IFSOCK: 0o140000,
    S_IFLNK: 0o120000,
    S_ISGID: 0o2000,
    S_ISUID: 0o4000,
  };

  // ------------------------------------------------------- parseExtJSON --
  // JSON plus the extensions of QuickJS's std.parseExtJSON: comments,
  // unquoted (identifier) keys, trailing commas, single-quoted strings, \f
  // and \v as white space, a leading +, 0x/0o/0b integers; also Infinity and
  // NaN. QuickJS-NG dropped its C implementation, so this one is in JS.
  const MAX_DEPTH = 1000;

  function parseExtJSON(text) {
    let i = 0;
    const n = text.length;
    const code = (k) => strCharCodeAt(text, k);

    function fail(what) {
      let line = 1;
      let col = 1;
      for (let k = 0; k < i && k < n; k++) {
        if (code(k) === 10) {
          line++;
          col = 1;
        } else {
          col++;
        }
      }
      throw userError(new SyntaxErrorCtor(what + " at line " + line + ", column " + col));
    }

    function skip() {
      while (i < n) {
        const c = code(i);
        if (c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff) {
          i++;
        } else if (c === 47 && code(i + 1) === 47) {
          while (i < n && code(i) !== 10 && code(i) !== 13) i++;
        } else if (c === 47 && code(i + 1) === 42) {
          const start = i;
          i += 2;
          while (i < n && !(code(i) === 42 && code(i + 1) === 47)) i++;
          if (i >= n) {
            i = start;
            fail("unterminated comment");
          }
          i += 2;
        } else {
          break;
        }
      }
    }

    const isIdStart = (c) =>
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95;
    const isIdPart = (c) => isIdStart(c) || (c >= 48 && c <= 57);

    function word() {
      const start = i;
      while (i < n && isIdPart(code(i))) i++;
      return strSlice(text, start, i);
    }

    function hex(len) {
      const s = strSlice(text, i, i + len);
      if (s.length !== len || !reTest(/^[0-9a-fA-F]+$/, s)) fail("bad escape");
      i += len;
      return parseIntFn(s, 16);
    }

    function string(quote) {
      i++; // opening quote
      let out = "";
      let start = i;
      for (;;) {
        if (i >= n) fail("unterminated string");
        const c = code(i);
        if (c === quote) break;
        if (c === 10 || c === 13) fail("unterminated string");
        if (c !== 92) {
          i++;
          continue;
        }
        out += strSlice(text, start, i);
        i++;
        const e = code(i);
        i++;
        switch (e) {
          case 34: out += '"'; break;
          case 39: out += "'"; break;
          case 92: out += "\\"; break;
          case 47: out += "/"; break;
          case 98: out += "\b"; break;
          case 102: out += "\f"; break;
          case 110: out += "\n"; break;
          case 114: out += "\r"; break;
          case 116: out += "\t"; break;
          case 118: out += "\v"; break;
          case 48: out += "\0"; break;
          case 120: out += fromCodePoint(hex(2)); break;
          case 117:
            if (code(i) === 123) {
              i++;
              const end = strIndexOf(text, "}", i);
              if (end < 0 || end - i > 6) fail("bad escape");
              const cp = hex(end - i);
              if (cp > 0x10ffff) fail("bad escape");
              i++;
              out += fromCodePoint(cp);
            } else {
              out += fromCharCode(hex(4));
            }
            break;
          case 10: break; // line continuation
          case 13:
            if (code(i) === 10) i++;
            break;
          default:
            i--;
            fail("bad escape");
        }
        start = i;
      }
      out += strSlice(text, start, i);
      i++; // closing quote
      return out;
    }

    function number() {
      const start = i;
      let sign = 1;
      if (code(i) === 43 || code(i) === 45) {
        if (code(i) === 45) sign = -1;
        i++;
      }
      if (code(i) === 48) {
        const p = code(i + 1) | 32;
        const radix = p === 120 ? 16 : p === 111 ? 8 : p === 98 ? 2 : 0;
        if (radix) {
          i += 2;
          const digits = word();
          const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[01]+$/;
          if (!reTest(valid, digits)) fail("bad number");
          return sign * parseIntFn(digits, radix);
        }
      }
      if (isIdStart(code(i))) {
        const w = word();
        if (w === "Infinity") return sign * Infinity;
        if (w === "NaN") return NaN;
        i = start;
        fail("unexpected token");
      }
      const m = reExec(/^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/, strSlice(text, i, i + 400));
      if (!m) fail("bad number");
      i += m[0].length;
      return sign * parseFloatFn(m[0]);
    }

    function value(depth) {
      if (depth > MAX_DEPTH) fail("too deeply nested");
      skip();
      if (i >= n) fail("unexpected end of input");
      const c = code(i);
      if (c === 123) return object(depth);
      if (c === 91) return array(depth);
      if (c === 34 || c === 39) return string(c);
      if (c === 43 || c === 45 || (c >= 48 && c <= 57)) return number();
      if (isIdStart(c)) {
        const start = i;
        const w = word();
        if (w === "true") return true;
        if (w === "false") return false;
        if (w === "null") return null;
        if (w === "Infinity") return Infinity;
        if (w === "NaN") return NaN;
        i = start;
      }
      fail("unexpected character");
    }

    function object(depth) {
      i++;
      const obj = {};
      for (;;) {
        skip();
        if (code(i) === 125) {
          i++;
          return obj;
        }
        let key;
        const c = code(i);
        if (c === 34 || c === 39) key = string(c);
        else if (isIdStart(c)) key = word();
        else if (c >= 48 && c <= 57) key = StringCtor(number());
        else fail("expected a property name");
        skip();
        if (code(i) !== 58) fail("expected ':'");
        i++;
        // defineProperty: a "__proto__" key is an own property, as in JSON.parse.
        defineProperty(obj, key, {
          value: value(depth + 1),
          writable: true,
          enumerable: true,
          configurable: true,
        });
        skip();
        if (code(i) === 44) {
          i++;
        } else if (code(i) !== 125) {
          fail("expected ',' or '}'");
        }
      }
    }

    function array(depth) {
      i++;
      const arr = [];
      for (;;) {
        skip();
        if (code(i) === 93) {
          i++;
          return arr;
        }
        arrayPush(arr, value(depth + 1));
        skip();
        if (code(i) === 44) {
          i++;
        } else if (code(i) !== 93) {
          fail("expected ',' or ']'");
        }
      }
    }

    const result = value(0);
    skip();
    if (i < n) fail("unexpected character after the value");
    return result;
  }

  // Unlike quickjs-libc, every member is enumerable, so that
  // `Object.keys(std)` (or just evaluating `os`) shows what is there.
  return { std, os, errnoName, errno, toData, userError };
});
