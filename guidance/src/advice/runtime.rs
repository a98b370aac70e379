//! Advice for `runtime_error`, the code raised or threw. First the evidence is checked for
//! what is not a bug in the logic: a file operation (files), a capability the sandbox lacks
//! (processes, network, threads, stdin), a missing module (names), the JavaScript host
//! (js_host). Otherwise the exception is quoted with its place in the code, and its name picks
//! the usual causes: the message-dependent ones here, the fixed ones from the tables of each
//! family.

use super::super::analyze::is_file_call;
use super::super::docs::{JAVASCRIPT, PYTHON};
use super::draft::Draft;
use super::evidence::{divisor, indexed_sequence, operand_of_member};
use super::js_host::JS_EXCEPTION_FIXES;
use super::names::NAME_EXCEPTION_FIXES;

/// Fixes for Python exceptions whose advice does not depend on the message.
const PYTHON_EXCEPTION_FIXES: &[(&str, [&str; 2])] = &[
    (
        "IndexError",
        [
            "The sequence is shorter than the index: print `len(x)` before indexing; an empty list usually means an earlier filter, split or parse found nothing.",
            "Guard it (`if x:` / `x[-1] if x else None`) or use slicing, which never raises (`x[:1]`).",
        ],
    ),
    (
        "ZeroDivisionError",
        [
            "A denominator is zero: guard it (`x / n if n else 0`); an average over an empty list is the usual cause.",
            "Check why the count is 0: an earlier filter or parse may have matched nothing.",
        ],
    ),
    (
        "UnicodeDecodeError",
        [
            "The file is not UTF-8: open it with `encoding='latin-1'` (never fails) or `errors='replace'`, or read bytes with 'rb'.",
            "Use encoding='utf-8-sig' for files that start with a byte-order mark (Excel CSV exports).",
        ],
    ),
    (
        "UnicodeEncodeError",
        [
            "The text has characters the target encoding cannot represent: write files with `encoding='utf-8'` (or pass `errors='replace'`), and encode with 'utf-8' rather than 'ascii'.",
            "If an ASCII-only result is required, replace the characters explicitly first (e.g. `unicodedata.normalize('NFKD', s).encode('ascii', 'ignore')`).",
        ],
    ),
    (
        "FileExistsError",
        [
            "Use `os.makedirs(path, exist_ok=True)`; open with mode 'w' to overwrite a file.",
            "Files persist in /app between calls, so setup code that creates them fails on the second run unless it tolerates existing files.",
        ],
    ),
    (
        "AssertionError",
        [
            "Print the values the assert checks just before it to see which condition failed.",
            "Give the assert a message: `assert cond, f'x={x!r}'`.",
        ],
    ),
    (
        "StopIteration",
        [
            "next() reached the end of an iterator: use `next(it, None)` and check for None.",
            "Iterators are consumed once: re-create them (e.g. reopen the file) for a second pass.",
        ],
    ),
    (
        "OverflowError",
        [
            "The number is too large for a float: use integers, decimal.Decimal, or work with logarithms.",
            "Check for runaway growth (exponentials in a loop).",
        ],
    ),
];

impl Draft<'_, '_> {
    pub(super) fn runtime_error(&mut self) {
        let name = self.f.error_name.unwrap_or("");
        let lower = self.evidence().to_lowercase();
        self.doc(if self.python() { PYTHON } else { JAVASCRIPT });
        // Evidence that points at something other than a bug in the logic.
        let explained = self.file_failure(&lower)
            || if self.python() {
                self.python_capability_failure(name, &lower)
            } else {
                self.js_host_failure(name, &lower)
            };
        if !explained {
            self.exception_advice(name, &lower);
            self.state_note();
        }
    }

    /// A Python error that comes from what the sandbox lacks (processes, network, threads,
    /// stdin) or from a missing module. Advice and true; false for an ordinary error.
    fn python_capability_failure(&mut self, name: &str, lower: &str) -> bool {
        if lower.contains("does not support processes")
            || lower.contains("has no attribute 'system'")
            || lower.contains("has no attribute 'popen'")
            || lower.contains("has no attribute 'fork'")
        {
            self.rule("no_processes");
        } else if lower.contains("getaddrinfo")
            || lower.contains("urlerror")
            || lower.contains("connectionrefused")
            || lower.contains("gaierror")
            || lower.contains("network is unreachable")
        {
            self.summary =
                "The code tried to reach the network, and the sandbox has none.".to_owned();
            self.fix("Have the data passed in: put it in the code, or write it to a file under /app and read it from there.");
            self.fix("Nothing network-related can be installed around this: sockets, DNS and HTTP all fail by design.");
        } else if lower.contains("can't start new thread") {
            self.summary = "A thread could not start: the interpreter is single-threaded (no parallelism in this sandbox).".to_owned();
            self.fix(
                "Run the tasks one after another: there is no speed-up to gain from threads here.",
            );
            self.fix("For cooperative waiting use asyncio (it runs on one thread); for long work, split it across calls.");
        } else if name == "EOFError"
            && (lower.contains("reading a line")
                || self.code.calls.iter().any(|(c, _, _)| c == "input"))
        {
            self.summary =
                "input() found no stdin: the sandbox has no interactive input.".to_owned();
            self.fix("Put the values in the code (e.g. `answer = 'yes'`) or read them from a file in /app.");
            self.fix("If a library prompts for input, pass the value as an argument instead.");
        } else if name == "ModuleNotFoundError" {
            self.missing_module();
            return true;
        } else {
            return false;
        }
        self.state_note();
        true
    }

    /// An ordinary runtime error: the exception where it happened, the usual causes of its
    /// kind, and where to start looking.
    fn exception_advice(&mut self, name: &str, lower: &str) {
        let exception = self.exception();
        let where_ = self.where_text();
        let exception = exception.trim_end_matches('.');
        self.summary = match &where_ {
            Some(w) => format!("{exception} at {w}."),
            None => format!("{exception}."),
        };
        let message = self.message().to_owned();
        if self.python() && self.python2_runtime(name, &self.exception()) {
            self.where_fix(where_.as_deref());
            return;
        }
        match name {
            "KeyError" => self.key_error(&message),
            "IndexError" => {
                self.off_by_one_fix();
                self.index_error(lower);
            }
            "UnicodeEncodeError" => self.unicode_encode_error(&message),
            "ZeroDivisionError" => self.zero_division(),
            "AssertionError" => self.assertion_error(),
            "RangeError" if !self.python() && lower.contains("invalid array length") => {
                self.fix("The array length is negative, fractional or too large: `new Array(n)` and `arr.length = n` need a whole n from 0 to 2^32 - 1; check the value passed.");
            }
            "UnicodeDecodeError" if utf16_bom(lower) => {
                self.fix("The data starts with a UTF-16 byte-order mark (0xff 0xfe or 0xfe 0xff): decode it as UTF-16, `open(path, encoding='utf-16')` or `data.decode('utf-16')`.");
                // The message shows one byte only: other encodings remain possible.
                self.fixed_exception_fixes(name);
            }
            "UnicodeDecodeError" => self.unicode_decode_error(),
            "OverflowError" if lower.contains("index-sized integer") => {
                self.fix("The size or index is larger than the 32-bit WebAssembly interpreter can address (about 2 GiB at most, less in practice): allocate far less, or process the data in chunks.");
            }
            "SyntaxError" | "ReferenceError" | "InternalError" if !self.python() => {
                self.js_named_error(name, lower, &message);
            }
            "TypeError" if self.python() => self.python_type_error(lower),
            "TypeError" => self.js_type_error(lower),
            "AttributeError" => self.attribute_error(lower),
            "NameError" | "ReferenceError" => self.undefined_name(&message),
            "ValueError" => {
                if lower.contains("invalid literal") || lower.contains("could not convert") {
                    self.fix("A string is not a number: clean it first (`s.strip()`, remove thousands separators and units) and skip empty cells.");
                } else if lower.contains("unpack") {
                    self.fix("The number of values does not match the number of names: print the item to see its real shape.");
                }
                self.fix("Print the offending value with repr() just before the failing line to see exactly what it contains.");
            }
            "JSONDecodeError" => {
                if lower.contains("line 1 column 1") {
                    self.fix("The text is empty or not JSON at all (HTML, CSV, an error page): print `repr(text[:200])` to see it.");
                }
                if lower.contains("double quotes") {
                    self.fix("JSON needs double quotes; for Python-literal text (single quotes, True/None) use `ast.literal_eval`.");
                }
                self.fix("Look at the reported position (`text[pos-40:pos+40]`): trailing commas, comments and NaN are not JSON.");
            }
            "OperationalError" => {
                if lower.contains("no such table") {
                    self.fix("Create the table first (CREATE TABLE IF NOT EXISTS ...); an in-memory database (':memory:') is empty in every new connection.");
                }
                self.fix("Keep database files under /app (e.g. sqlite3.connect('data.db')).");
            }
            _ => self.fixed_exception_fixes(name),
        }
        self.where_fix(where_.as_deref());
    }

    /// Where to start looking: the failing line, or the traceback's last frame in the code.
    fn where_fix(&mut self, where_: Option<&str>) {
        self.fix(match where_ {
            Some(w) => format!("Start at {w}: print the values it uses just before it to see which one is not what you expect."),
            None => "Read the last frame of the traceback that points into your code (<cell N>) and print the values used there.".to_owned(),
        });
    }

    /// A loop or index that goes one past the end of a sequence, when the code shows one
    /// (`range(len(x) + 1)`, `i <= len(x)`, `x[len(x)]`, `i <= a.length`, `a[a.length]`).
    pub(super) fn off_by_one_fix(&mut self) {
        if !one_past_the_end(self.f.code) {
            return;
        }
        self.fix(if self.python() {
            "The loop or index goes one past the end: indices run from 0 to len(x) - 1, so loop with `range(len(x))` (or `for item in x`), stop pairs at `range(len(x) - 1)`, and use `x[-1]` for the last item."
        } else {
            "The loop or index goes one past the end: indices run from 0 to length - 1, so loop with `i < arr.length` (not `<=`), and use `arr[arr.length - 1]` or `arr.at(-1)` for the last item; past the end an array gives undefined."
        });
    }

    /// An IndexError: the sequence the failing line indexes (or pops from) by name, when the
    /// line shows it, else the usual causes.
    fn index_error(&mut self, lower: &str) {
        let line = self.error_line().unwrap_or("");
        let named = if lower.contains("pop from empty") {
            operand_of_member(line, "pop").map(|seq| {
                format!("`{seq}` is empty when `.pop()` runs: check it first (`if {seq}:`); an empty list usually means an earlier filter, split or parse found nothing.")
            })
        } else {
            indexed_sequence(line).map(|seq| {
                format!("`{seq}` is shorter than the index: print `len({seq})` before indexing; an empty list usually means an earlier filter, split or parse found nothing.")
            })
        };
        match named {
            Some(fix) => {
                self.fix(fix);
                // The table's second fix (guards and slicing); its first is the unnamed form.
                self.fixed_fixes_after_the_first("IndexError");
            }
            None => self.fixed_exception_fixes("IndexError"),
        }
    }

    /// The table's fixes of `name` after its first, which the caller replaced with a named form.
    fn fixed_fixes_after_the_first(&mut self, name: &str) {
        if let Some((_, [_, second])) = PYTHON_EXCEPTION_FIXES.iter().find(|(n, _)| *n == name) {
            self.fix(*second);
        }
    }

    /// A UnicodeDecodeError: the file the failing line opens, by name, when it shows one.
    fn unicode_decode_error(&mut self) {
        let line = self.error_line().unwrap_or("");
        let file = self
            .code
            .strings
            .iter()
            .find(|s| {
                s.call.as_deref().is_some_and(is_file_call)
                    && !s.text.is_empty()
                    && line.contains(s.text)
            })
            .map(|s| s.text.to_owned());
        match file {
            Some(file) => {
                self.fix(format!("'{file}' is not UTF-8: open it with `encoding='latin-1'` (never fails) or `errors='replace'`, or read bytes with 'rb'."));
                self.fixed_fixes_after_the_first("UnicodeDecodeError");
            }
            None => self.fixed_exception_fixes("UnicodeDecodeError"),
        }
    }

    /// A ZeroDivisionError: the divisor on the failing line, by name, when it shows one.
    fn zero_division(&mut self) {
        match self.error_line().and_then(divisor).map(str::to_owned) {
            Some(n) => {
                self.fix(format!("`{n}` is zero here: guard the division (`x / n if n else 0`); an average over an empty list is the usual cause."));
                self.fixed_fixes_after_the_first("ZeroDivisionError");
            }
            None => self.fixed_exception_fixes("ZeroDivisionError"),
        }
    }

    /// An AssertionError: the condition the failing assert checks, when the line shows it.
    fn assertion_error(&mut self) {
        let condition = self
            .error_line()
            .and_then(|l| l.trim().strip_prefix("assert "))
            .map(|rest| rest.split(", ").next().unwrap_or(rest).trim().to_owned())
            .filter(|c| !c.is_empty() && c.len() <= 120);
        match condition {
            Some(c) => {
                self.fix(format!("Print the values the assert checks (`{c}`) just before it to see which condition failed."));
                self.fixed_fixes_after_the_first("AssertionError");
            }
            None => self.fixed_exception_fixes("AssertionError"),
        }
    }

    /// A UnicodeEncodeError: the codec that cannot represent the text, by name.
    fn unicode_encode_error(&mut self, message: &str) {
        let codec = message
            .split(" codec can't encode")
            .next()
            .filter(|head| head.len() < message.len())
            .and_then(|head| head.rsplit(' ').next())
            .map(|c| c.trim_matches(['\'', '"']))
            .filter(|c| !c.is_empty() && c.len() <= 32);
        match codec {
            Some(codec) => {
                self.fix(format!("The text has characters the '{codec}' codec cannot represent: write files with `encoding='utf-8'` (or pass `errors='replace'`), and encode with 'utf-8' rather than '{codec}'."));
                self.fixed_fixes_after_the_first("UnicodeEncodeError");
            }
            None => self.fixed_exception_fixes("UnicodeEncodeError"),
        }
    }

    /// The fixes of an exception whose advice does not depend on the message, if it is one.
    pub(super) fn fixed_exception_fixes(&mut self, name: &str) {
        let found = PYTHON_EXCEPTION_FIXES
            .iter()
            .chain(NAME_EXCEPTION_FIXES)
            .chain(JS_EXCEPTION_FIXES)
            .find(|(n, _)| *n == name);
        if let Some((_, fixes)) = found {
            for fix in fixes {
                self.fix(*fix);
            }
        }
    }

    fn key_error(&mut self, message: &str) {
        let key = message.trim();
        // A header cell with a byte-order mark or spaces is the usual cause with DictReader.
        if self
            .code
            .calls
            .iter()
            .any(|(c, _, _)| c.ends_with("DictReader"))
        {
            self.fix("csv.DictReader keys are the header cells as written: strip spaces, and open with encoding='utf-8-sig' to drop a byte-order mark (a BOM turns 'name' into '\\ufeffname').");
        }
        self.fix(format!("The key {key} is not in the dict: print the real keys (`print(list(d.keys())[:20])`) and compare case, spaces and type (1 vs '1')."));
        self.fix(format!(
            "Use `d.get({key}, default)` or check `{key} in d` when the key may be missing."
        ));
    }

    fn python_type_error(&mut self, lower: &str) {
        if lower.contains("not subscriptable")
            && ["'dict_keys'", "'dict_values'", "'dict_items'"]
                .iter()
                .any(|v| lower.contains(v))
        {
            self.fix("dict.keys()/values()/items() are views, not lists (a change from Python 2): use `list(d.keys())[0]`, or `next(iter(d))` for the first key.");
        } else if lower.contains("bytes") && (lower.contains("str") || lower.contains("buffer")) {
            self.fix("bytes and str do not mix: decode bytes to text (`b.decode('utf-8')`) or encode text to bytes (`s.encode('utf-8')`); write bytes to a file opened with 'wb', text with 'w'.");
        } else if lower.contains("nonetype") {
            self.fix("A value is None where an object was expected: a function returned None (list.sort(), dict.update(), re.match with no match, a function without return). Check the call that produced it.");
        } else if lower.contains("not callable") {
            self.fix("A variable shadows a function (e.g. `list = ...`, `sum = 0`, `max = ...`): in a persistent session that shadowing stays for later calls too. Rename the variable and `del` it to restore the builtin.");
        } else if lower.contains("unsupported operand")
            || lower.contains("can only concatenate")
            || lower.contains("must be str")
        {
            self.fix("Mixed types in an operation: convert explicitly (`int(s)`, `float(s)`, `str(n)`) or use an f-string for text.");
        } else if lower.contains("positional argument") || lower.contains("keyword argument") {
            self.fix("The call's arguments do not match the function's signature: check `help(func)` or the definition (a method needs `self`).");
        }
        self.fix(
            "Print the types involved just before the failing line: `print(type(a), type(b))`.",
        );
    }

    fn attribute_error(&mut self, lower: &str) {
        if lower.contains("'nonetype'") {
            self.fix("The object is None: the call that produced it found nothing (re.match/search, dict.get, a function without return). Check for None first.");
        } else if let Some(module) = lower
            .split("module '")
            .nth(1)
            .and_then(|r| r.split('\'').next())
        {
            self.fix(format!("`{module}` has no such attribute: check the spelling and the version (this is Python 3.15), and make sure no file /app/{module}.py shadows the real module."));
        } else {
            self.fix("The object is of a different type than expected: `print(type(obj), dir(obj))` shows what it offers.");
        }
        self.fix("Check the exact attribute name in the library's documentation for the installed version.");
    }
}

/// True when a UnicodeDecodeError is about a UTF-16 byte-order mark at the start.
fn utf16_bom(lower: &str) -> bool {
    ["byte 0xff in position 0", "byte 0xfe in position 0"]
        .iter()
        .any(|b| lower.contains(b))
}

/// True when the code loops or indexes one past the end of a sequence: `range(len(x) + 1)`,
/// `x[i + 1]` over `range(len(x))`, `<= len(x)`, `x[len(x)]`, `i <= a.length`, `a[a.length]`.
fn one_past_the_end(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| !matches!(c, ' ' | '\t')).collect();
    let full_range = compact.contains("range(len(") && !compact.contains(")-1)");
    compact.lines().any(|line| {
        (full_range && (line.contains(")+1)") || line.contains("+1]")))
            || line.contains("<=len(")
            || indexed_by_length(line, "[len(", ")]")
            || indexed_by_length(line, "[", ".length]")
            || line.contains(".length+1")
            || (line.contains("<=") && line.contains(".length"))
    })
}

/// True when `line` indexes with the whole length: `[len(x)]` (`open` "[len(", `close` ")]")
/// or `[a.length]` (`open` "[", `close` ".length]"), not `[len(x)-1]`.
fn indexed_by_length(line: &str, open: &str, close: &str) -> bool {
    line.match_indices(open).any(|(at, _)| {
        let rest = &line[at + open.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        let name = name.strip_suffix(".length").unwrap_or(&name);
        !name.is_empty() && rest[name.len()..].starts_with(close)
    })
}
