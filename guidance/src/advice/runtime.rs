//! Advice for `runtime_error`, the code raised or threw. First the evidence is checked for
//! what is not a bug in the logic: a file operation (files), a capability the sandbox lacks
//! (processes, network, a server that cannot listen, threads, stdin), a missing module
//! (names), the JavaScript host (js_host). Otherwise the exception is quoted with its place in
//! the code (after stdin read empty, when the code read it), and its name picks
//! the usual causes: the message-dependent ones here, the fixed ones from the `exception_fixes`
//! tables of each family. The words live in `words/runtime.toml`.

use super::super::analyze::is_file_call;
use super::super::docs::{JAVASCRIPT, PYTHON};
use super::code_lines::{block, is_name};
use super::draft::Draft;
use super::evidence::{divisor, indexed_sequence, operand_of_member};
use super::stops;
use crate::words::{self, say};

/// Where the fixes of an exception whose advice does not depend on the message are, by its
/// name (`exception_fixes.IndexError`): Python's in runtime.toml, JavaScript's in js_host.toml.
const EXCEPTION_FIXES: &str = "exception_fixes.";

impl Draft<'_, '_> {
    pub(super) fn runtime_error(&mut self) {
        let name = self.f.error_name.unwrap_or("");
        let lower = self.evidence().to_lowercase();
        self.doc(if self.python() { PYTHON } else { JAVASCRIPT });
        // A shell command sent as code fails on its first word: the command is the answer.
        if matches!(name, "NameError" | "ReferenceError") && self.shell_as_code() {
            return;
        }
        // QuickJS throws `null` when an allocation fails: with memory near the cap, that is
        // running out of memory, not an exception of the code's own.
        let f = self.f;
        if !self.python()
            && self.message() == "null"
            && f.memory_cap > 0
            && f.memory_bytes.saturating_mul(2) >= f.memory_cap
        {
            return self.out_of_memory();
        }
        // Evidence that points at something other than a bug in the logic; but an error whose
        // own message has a known cause is that cause, whatever it chained from (matplotlib's
        // unknown style is an OSError raised while handling a FileNotFoundError).
        let message = self.f.error_message.unwrap_or("").to_lowercase();
        let known_by_message = !message.is_empty() && self.known_message_fix(&message).is_some();
        let explained = (!known_by_message && self.file_failure(&lower))
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

    /// The fix of the known cause of an error whose evidence (lowercased) is `lower`: a Python
    /// KeyError from an Enum member looked up by value (see [`subscripted_enum`]), or else the
    /// first entry of the language's `known_message` table that matches. The Enum check is
    /// code, not a table entry, because no needle can tell that the subscripted name is an
    /// Enum class; it goes first because the failing line itself shows the cause.
    fn known_message_fix(&self, lower: &str) -> Option<String> {
        if !self.python() {
            // Python's `'-'.join(parts)`: the fix names this code's array and separator.
            if lower.contains("not a function")
                && let Some((sep, list)) = self.error_line().and_then(separator_join)
            {
                return Some(say!("js_string_join.fix", sep = sep, list = list));
            }
            return self.known_fix("known_message.javascript", lower);
        }
        // A product whose inner sizes differ by one: an extra weight, the bias with no column
        // of ones for it.
        if let Some((big, small)) = inner_sizes(lower).filter(|(big, small)| big - small == 1) {
            return Some(say!("inner_dimension.one_extra", big = big, small = small));
        }
        // `df.apply(lambda row: row['name'])` with no axis: the lambda got columns, not rows.
        if lower.contains("keyerror")
            && let Some(param) = self.error_line().and_then(applied_per_column)
        {
            return Some(say!("key_error.apply_per_column", param = param));
        }
        if lower.contains("keyerror") && subscripted_enum(self.f.code, self.error_line()).is_some()
        {
            return Some(words::text("key_error.enum_by_name").to_owned());
        }
        // An iterator already walked to its end by an earlier line: empty the second time.
        if lower.contains("empty")
            && let Some(line) = self.location().filter(|l| l.current).map(|l| l.line)
            && let Some((name, made, used)) = exhausted_iterator(self.f.code, line as usize)
        {
            return Some(say!(
                "value_error.exhausted",
                name = name,
                made = made,
                used = used
            ));
        }
        // A key (a dict key, a column) the code writes elsewhere with other capitals or spaces:
        // that spelling is the cause, whatever the lookup went through (groupby, loc, []).
        if lower.contains("keyerror")
            && let Some((key, written)) = self.key_written_otherwise()
        {
            return Some(say!(
                "key_error.other_spelling",
                key = key,
                written = written
            ));
        }
        self.known_fix("known_message.python", lower)
    }

    /// A Python error that comes from what the sandbox lacks (processes, network, threads,
    /// stdin) or from a missing module. Advice and true; false for an ordinary error.
    fn python_capability_failure(&mut self, name: &str, lower: &str) -> bool {
        // A process pool fails on whatever it reaches first (semaphores, os.pipe, fork): the
        // code that asked for it says more than the message.
        let pool_module = self.code.imports.iter().any(|i| {
            words::list("no_process_pool.modules")
                .iter()
                .any(|m| i.module == *m || i.module.starts_with(&format!("{m}.")))
        });
        let pool = pool_module
            && self.code.calls.iter().any(|(callee, _, _)| {
                words::list("no_process_pool.callees")
                    .iter()
                    .any(|c| callee == c || callee.ends_with(&format!(".{c}")))
            });
        // A server the code starts fails wherever the socket layer gives up (bind, listen,
        // an unsupported socket option): the server, not that call, is the cause.
        let server = self.code.calls.iter().any(|(callee, _, _)| {
            let last = callee.rsplit('.').next().unwrap_or(callee);
            words::list("no_server.calls").iter().any(|c| c == last)
        });
        if pool || mentions(lower, words::list("no_process_pool.signs")) {
            self.rule("no_process_pool");
        } else if mentions(lower, words::list("no_processes.signs")) {
            self.rule("no_processes");
        } else if server
            && (mentions(lower, words::list("no_server.signs"))
                || raised_in(self.f.stderr, words::list("no_network.modules")))
        {
            self.rule("no_server");
        } else if mentions(lower, words::list("no_network.signs"))
            || raised_in(self.f.stderr, words::list("no_network.modules"))
        {
            self.rule("no_network");
        } else if lower.contains("can't start new thread") {
            self.rule("no_threads");
        } else if name == "EOFError"
            && (lower.contains("reading a line")
                || self.code.calls.iter().any(|(c, _, _)| c == "input"))
        {
            self.rule("no_stdin");
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
            Some(place) => say!("exception.at", exception = exception, place = place),
            None => format!("{exception}."),
        };
        let message = self.message().to_owned();
        // Python's `x in list` in JavaScript: `in` asks for a key (an index), so the test is
        // wrong whatever the error says.
        // An async function's result used without `await`: a Promise read as its value.
        if !self.python()
            && let Some((function, line)) = stops::promise_read_as_value(self.f.code)
        {
            self.fix(say!(
                "promise_read_as_value.fix",
                function = function,
                line = line
            ));
        }
        if !self.python()
            && let Some((value, array)) = js_in_on_array(self.f.code)
        {
            self.fix(say!("js_in_on_array.fix", value = value, array = array));
        }
        // Code that read stdin got nothing (there is none): what failed after it failed on
        // the missing input.
        if let Some((call, line)) = self.empty_stdin_read(name) {
            self.fix(say!("no_stdin.read_empty", call = call, line = line));
        }
        // The code's own check failed (an assert, a throw or raise under an if): the bug is
        // in what came before, and some bugs show in the code alone.
        if self.own_check_failed(name) {
            let table = if self.python() {
                "known_silent.python"
            } else {
                "known_silent.javascript"
            };
            if let Some(fix) = self.known_fix(table, lower) {
                self.fix(fix);
            }
        }
        if let Some(fix) = self.known_message_fix(lower) {
            self.fix(fix);
        }
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
                self.fix(words::text("range_error.invalid_array_length"));
            }
            "UnicodeDecodeError" if utf16_bom(lower) => {
                self.fix(words::text("unicode_decode_error.utf16_bom"));
                // The message shows one byte only: other encodings remain possible.
                self.fixed_exception_fixes(name);
            }
            "UnicodeDecodeError" => self.unicode_decode_error(),
            "OverflowError" if lower.contains("index-sized integer") => {
                self.fix(words::text("overflow_error.index_sized_integer"));
            }
            "SyntaxError" | "ReferenceError" | "InternalError" if !self.python() => {
                self.js_named_error(name, lower, &message);
            }
            "TypeError" if self.python() => self.python_type_error(&message, lower),
            "TypeError" => self.js_type_error(lower),
            "AttributeError" => self.attribute_error(&message, lower),
            "ImportError" if self.python() => {
                if let Some((name, module)) =
                    imported_package(&message).filter(|(name, _)| self.table.get(name).is_some())
                {
                    self.fix(say!(
                        "import_error.own_package",
                        name = name,
                        module = module
                    ));
                }
                self.fixed_exception_fixes(name);
            }
            "UnboundLocalError" => self.unbound_local(&message),
            "NameError" | "ReferenceError" => self.undefined_name(&message),
            "ValueError" => {
                if let Some(text) = decimal_for_int(&message) {
                    self.fix(say!("value_error.decimal_for_int", text = text));
                }
                if lower.contains("invalid literal") || lower.contains("could not convert") {
                    self.fix(words::text("value_error.not_a_number"));
                } else if lower.contains("unpack") {
                    if let Some((names, dict)) = self
                        .error_line()
                        .and_then(|l| dict_walked_for_pairs(l, self.f.code))
                    {
                        self.fix(say!("value_error.unpack_dict", names = names, dict = dict));
                    }
                    self.fix(words::text("value_error.unpack"));
                }
                self.fix(words::text("value_error.print_repr"));
            }
            "JSONDecodeError" => {
                if let Some(fix) = super::silent::silent_bug(self.f.code) {
                    self.fix(fix);
                }
                // A comma before a closing brace in the code's own JSON text.
                if let Some(tail) = self
                    .code
                    .strings
                    .iter()
                    .find_map(|s| trailing_comma(s.text))
                {
                    self.fix(say!("json_decode_error.trailing_comma", tail = tail));
                }
                // The very first character (`line 1 column 1 (char 0)`, not column 12).
                if lower.contains("line 1 column 1 (char 0)") {
                    self.fix(words::text("json_decode_error.not_json"));
                }
                if lower.contains("double quotes") {
                    self.fix(words::text("json_decode_error.double_quotes"));
                }
                self.fix(words::text("json_decode_error.position"));
            }
            "OperationalError" => {
                if lower.contains("no such table") {
                    // A database file the code names (not `:memory:`) and creates no table in:
                    // it may be new and empty.
                    let creates = self.f.code.to_lowercase().contains("create table");
                    let file = self.code.strings.iter().find(|s| {
                        s.call.as_deref().is_some_and(|c| c.ends_with("connect"))
                            && s.text != ":memory:"
                            && !creates
                    });
                    if let Some(file) = file {
                        let file = file.text.to_owned();
                        self.fix(say!("operational_error.new_database", file = file));
                    }
                    self.fix(words::text("operational_error.no_such_table"));
                }
                // `mode=ro`, or a path into a folder that does not exist: connect() creates a
                // missing file only where it may, so the file is simply not there.
                if lower.contains("unable to open database file") {
                    self.fix(words::text("operational_error.cannot_open"));
                }
                self.fix(words::text("operational_error.keep_under_app"));
            }
            _ => self.fixed_exception_fixes(name),
        }
        self.where_fix(where_.as_deref());
    }

    /// The first read of stdin (`sys.stdin.read()`, `for line in sys.stdin`, QuickJS's
    /// `std.in.getline()`) at or above the failing line, for an exception that can come from
    /// working on no input (not a name or an import that is missing): the read as written and
    /// its line.
    fn empty_stdin_read(&self, name: &str) -> Option<(String, u32)> {
        if words::list("no_stdin.unrelated").iter().any(|n| n == name) {
            return None;
        }
        let reads = words::list("no_stdin.reads");
        let failing = self
            .location()
            .filter(|l| l.current)
            .map_or(u32::MAX, |l| l.line);
        let call = self
            .code
            .calls
            .iter()
            .find(|(callee, line, _)| reads.contains(callee) && *line <= failing)
            .map(|(callee, line, _)| (format!("{callee}()"), *line));
        let iterated = || {
            self.f.code.lines().enumerate().find_map(|(k, l)| {
                let l = l.trim();
                (l.starts_with("for ") && l.contains(" in sys.stdin") && (k as u32) < failing)
                    .then(|| ("for ... in sys.stdin".to_owned(), k as u32 + 1))
            })
        };
        call.or_else(iterated)
    }

    /// Where to start looking: the failing line, or the traceback's last frame in the code.
    fn where_fix(&mut self, where_: Option<&str>) {
        self.fix(match where_ {
            Some(place) => say!("exception.start_at", place = place),
            None => words::text("exception.start_at_last_frame").to_owned(),
        });
    }

    /// A loop or index that goes one past the end of a sequence, when the code shows one
    /// (`range(len(x) + 1)`, `i <= len(x)`, `x[len(x)]`, `i <= a.length`, `a[a.length]`).
    pub(super) fn off_by_one_fix(&mut self) {
        if !one_past_the_end(self.f.code) {
            return;
        }
        self.fix(words::text(if self.python() {
            "one_past_the_end.python"
        } else {
            "one_past_the_end.javascript"
        }));
    }

    /// An IndexError: the sequence the failing line indexes (or pops from) by name, when the
    /// line shows it, else the usual causes.
    fn index_error(&mut self, lower: &str) {
        let line = self.error_line().unwrap_or("");
        let named = if lower.contains("pop from empty") {
            operand_of_member(line, "pop").map(|seq| say!("index_error.pop_from_empty", seq = seq))
        } else {
            indexed_sequence(line).map(|seq| say!("index_error.too_short", seq = seq))
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
        for fix in words::list(&format!("{EXCEPTION_FIXES}{name}"))
            .iter()
            .skip(1)
        {
            self.fix(fix);
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
                self.fix(say!("unicode_decode_error.named", file = file));
                self.fixed_fixes_after_the_first("UnicodeDecodeError");
            }
            None => self.fixed_exception_fixes("UnicodeDecodeError"),
        }
    }

    /// A ZeroDivisionError: the divisor on the failing line, by name, when it shows one.
    fn zero_division(&mut self) {
        match self.error_line().and_then(divisor).map(str::to_owned) {
            Some(n) => {
                self.fix(say!("zero_division.named", divisor = n));
                self.fixed_fixes_after_the_first("ZeroDivisionError");
            }
            None => self.fixed_exception_fixes("ZeroDivisionError"),
        }
    }

    /// Whether the failure is the code's own check: an `assert`, or an error the failing line
    /// of this cell raises or throws itself (`raise ValueError(...)`, `throw new Error(...)`),
    /// not one raised inside a library or the runtime.
    fn own_check_failed(&self, name: &str) -> bool {
        if name == "AssertionError" {
            return true;
        }
        let Some(line) = self.error_line() else {
            return false;
        };
        let line = line.trim();
        if self.python() {
            line.starts_with("raise ") || line.contains(": raise ")
        } else {
            line.contains("throw ")
        }
    }

    /// An AssertionError: the condition the failing assert checks, when the line shows it.
    fn assertion_error(&mut self) {
        if let Some(fix) = super::silent::silent_bug(self.f.code) {
            self.fix(fix);
        }
        let condition = self
            .error_line()
            .and_then(|l| l.trim().strip_prefix("assert "))
            .map(|rest| rest.split(", ").next().unwrap_or(rest).trim().to_owned())
            .filter(|c| !c.is_empty() && c.len() <= 120);
        match condition {
            Some(c) => {
                self.fix(say!("assertion_error.named", condition = c));
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
                self.fix(say!("unicode_encode_error.named", codec = codec));
                self.fixed_fixes_after_the_first("UnicodeEncodeError");
            }
            None => self.fixed_exception_fixes("UnicodeEncodeError"),
        }
    }

    /// The fixes of an exception whose advice does not depend on the message, if it is one.
    pub(super) fn fixed_exception_fixes(&mut self, name: &str) {
        for fix in words::find_list(&format!("{EXCEPTION_FIXES}{name}")).unwrap_or_default() {
            self.fix(fix);
        }
    }

    fn key_error(&mut self, message: &str) {
        let key = message.trim();
        // `counts[w] += 1` on a key not yet there: the dict needs a default.
        if let Some((target, dict, op)) = self.error_line().and_then(updated_in_place) {
            let sign = op.trim_end_matches('=');
            self.fix(say!(
                "key_error.counted",
                target = target,
                op = op,
                key = key,
                dict = dict,
                sign = sign
            ));
        }
        // A header cell with a byte-order mark or spaces is the usual cause with DictReader.
        if self
            .code
            .calls
            .iter()
            .any(|(c, _, _)| c.ends_with("DictReader"))
        {
            self.fix(words::text("key_error.dict_reader"));
        }
        self.rule_with("key_error", &[("key", &key)]);
    }

    /// The key of a `KeyError` (as the message quotes it) and the string literal of the code
    /// that differs from it only in capitals or surrounding spaces (`'Region'` for `'region'`).
    fn key_written_otherwise(&self) -> Option<(String, String)> {
        let message = self.message().trim();
        let message = message.strip_prefix("KeyError:").unwrap_or(message).trim();
        let key = message
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .or_else(|| message.strip_prefix('"').and_then(|k| k.strip_suffix('"')))?;
        // Written twice or more (set on one object, looked up on another, as a merge does),
        // the key exists somewhere: a spelling elsewhere is not the one cause.
        let exact = self
            .code
            .strings
            .iter()
            .filter(|lit| lit.text == key)
            .count();
        if exact > 1 {
            return None;
        }
        let normal = |text: &str| text.trim().to_lowercase();
        let written = self.code.strings.iter().find(|lit| {
            lit.text != key && !lit.text.trim().is_empty() && normal(lit.text) == normal(key)
        })?;
        Some((key.to_owned(), written.text.to_owned()))
    }

    fn python_type_error(&mut self, message: &str, lower: &str) {
        if lower.contains("not subscriptable")
            && ["'dict_keys'", "'dict_values'", "'dict_items'"]
                .iter()
                .any(|v| lower.contains(v))
        {
            self.fix(words::text("python_type_error.dict_views"));
        } else if lower.contains("bytes") && (lower.contains("str") || lower.contains("buffer")) {
            self.fix(words::text("python_type_error.bytes_and_str"));
        } else if lower.contains("nonetype") {
            self.fix(words::text("python_type_error.none"));
        } else if lower.contains("not callable") {
            match self.called_attribute() {
                Some(attr) => self.fix(say!("python_type_error.called_attribute", attr)),
                None => self.fix(words::text("python_type_error.not_callable")),
            }
        } else if mentions(lower, words::list("python_type_error.mixed_types_signs")) {
            self.fix(words::text("python_type_error.mixed_types"));
        } else if lower.contains("positional argument") || lower.contains("keyword argument") {
            if let Some((call, class, method)) = self.called_on_class(message) {
                self.fix(say!(
                    "python_type_error.called_on_class",
                    call = call,
                    class = class,
                    method = method,
                ));
            }
            if let Some(fix) = unexpected_keyword(message) {
                self.fix(fix);
            }
            self.fix(words::text("python_type_error.signature"));
        }
        self.fix(words::text("python_type_error.print_types"));
    }

    /// `r.name()` or `path.suffix()`: the failing line calls `.attr(` where `attr` holds a
    /// value, an attribute the code assigns (`self.name = ...`) or one that is a value on the
    /// standard library's objects (`Path.suffix`, `date.year`...).
    fn called_attribute(&self) -> Option<String> {
        let line = self.error_line()?;
        let values = words::list("python_type_error.value_attributes");
        line.match_indices('.')
            .filter_map(|(at, _)| {
                let rest = &line[at + 1..];
                let attr: String = (rest.chars())
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                (is_name(&attr) && rest[attr.len()..].starts_with('(')).then_some(attr)
            })
            .find(|attr| values.contains(attr) || self.f.code.contains(&format!("self.{attr} =")))
    }

    /// `Settings.from_json()` missing an argument, where the failing line calls
    /// `Settings.from_json(` on the class (a capitalised name defined by `class Settings`):
    /// the call, the class and the method.
    fn called_on_class(&self, message: &str) -> Option<(String, String, String)> {
        let qualified = message.split("()").next()?.trim();
        let (class, method) = qualified.rsplit_once('.')?;
        let capitalised = class.chars().next().is_some_and(char::is_uppercase);
        let call = format!("{class}.{method}(");
        let defined = self.f.code.lines().any(|l| {
            l.trim_start().strip_prefix("class ").is_some_and(|rest| {
                rest.starts_with(class) && rest[class.len()..].starts_with(['(', ':'])
            })
        });
        (is_name(class) && is_name(method) && capitalised && defined)
            .then_some(())
            .filter(|()| self.error_line().is_some_and(|l| l.contains(&call)))
            .map(|()| {
                (
                    format!("{class}.{method}(...)"),
                    class.to_owned(),
                    method.to_owned(),
                )
            })
    }

    /// An UnboundLocalError: an attribute used without `self.`, a name assigned only in some
    /// branches, or (a global of that name exists) the global made local by an assignment.
    fn unbound_local(&mut self, message: &str) {
        let name = message
            .split("local variable '")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .filter(|n| is_name(n));
        if let Some(name) = name {
            let code = self.f.code;
            // `name = ...` at the start of a line, indented (in a function) or not (a global).
            let assigned = |indented: bool| {
                code.lines().any(|l| {
                    let body = l.trim_start();
                    (indented == (body.len() < l.len()))
                        && body
                            .strip_prefix(name)
                            .map(str::trim_start)
                            .is_some_and(|rest| rest.starts_with('=') && !rest.starts_with("=="))
                })
            };
            // The global fixes speak of a global that these causes rule out.
            if code.contains(&format!("self.{name}")) {
                self.fix(say!("unbound_local.attribute", name = name));
                return;
            }
            if assigned(true) && !assigned(false) {
                self.fix(say!("unbound_local.branches", name = name));
                return;
            }
        }
        self.fixed_exception_fixes("UnboundLocalError");
    }

    /// `class {class}(Base)` whose `__init__` never calls `super().__init__` (nor
    /// `Base.__init__`), for "'{class}' object has no attribute".
    fn skips_base_init(&self, class: &str) -> bool {
        let lines: Vec<&str> = self.f.code.lines().collect();
        let Some(at) = lines.iter().position(|l| {
            l.trim_start().strip_prefix("class ").is_some_and(|rest| {
                rest.strip_prefix(class)
                    .and_then(|r| r.strip_prefix('('))
                    .and_then(|r| r.split(')').next())
                    .is_some_and(|bases| !bases.trim().is_empty() && bases.trim() != "object")
            })
        }) else {
            return false;
        };
        let body = block(&lines, at);
        body.iter()
            .any(|l| l.trim_start().starts_with("def __init__"))
            && !body
                .iter()
                .any(|l| l.contains("super().__init__") || l.contains(".__init__(self"))
    }

    fn attribute_error(&mut self, message: &str, lower: &str) {
        let missing = message
            .strip_prefix('\'')
            .and_then(|rest| rest.split_once("' object has no attribute '"))
            .map(|(class, rest)| (class, rest.trim_end_matches('\'')));
        // A JavaScript method on a Python value (`s.trim()`): its Python spelling, with every
        // other JavaScript method the code calls (they would fail next).
        if let Some((_, attribute)) = missing
            && let Some(fix) = javascript_methods(attribute, self.f.code)
        {
            self.fix(fix);
        }
        if let Some((class, attribute)) = missing.filter(|(class, _)| self.skips_base_init(class)) {
            self.fix(say!(
                "attribute_error.super_init",
                class = class,
                attribute = attribute,
            ));
        }
        // CPython names the attribute the object has that is nearest the one asked for: on a
        // builtin value or a class of the code's own, a misspelt method (`s.uper()`); on a
        // library's object it may as well be a method the library removed (`Series.mad`,
        // nearest `.map`), so the hint is not taken for the fix there. Only when no known
        // cause spoke first (`Series.split` is answered by the `.str` accessor).
        let evidence = self.evidence();
        if let Some((class, attribute)) = missing
            && let Some(meant) = suggested_name(&evidence)
            && meant != attribute
            && class != "NoneType"
            && self.fixes.is_empty()
        {
            let own_class = self.f.code.contains(&format!("class {class}"));
            let id = if own_class
                || words::list("attribute_error.builtin_types")
                    .iter()
                    .any(|t| t == class)
            {
                "attribute_error.did_you_mean"
            } else {
                "attribute_error.did_you_mean_library"
            };
            self.fix(say!(
                id,
                class = class,
                attribute = attribute,
                meant = meant
            ));
        }
        if lower.contains("'nonetype'") {
            self.fix(words::text("attribute_error.none"));
        } else if let Some(module) = lower
            .split("module '")
            .nth(1)
            .and_then(|r| r.split('\'').next())
        {
            self.fix(say!("attribute_error.module", module = module));
        } else {
            self.fix(words::text("attribute_error.other_type"));
        }
        self.fix(words::text("attribute_error.check_docs"));
    }
}

/// The name in CPython's hint of an error's text ("Did you mean: 'name'?", or since 3.15 "Did
/// you mean '.name' instead of '.nmae'?"), when it is a plain attribute name (not `self.x`,
/// which the `known_message` table answers).
fn suggested_name(evidence: &str) -> Option<&str> {
    // Not "Did you mean to use a 'list' object?", which names a type.
    let rest = evidence
        .split_once("Did you mean: '")
        .or_else(|| evidence.split_once("Did you mean '."))?
        .1;
    let name = rest.split('\'').next()?;
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// The fix for a TypeError "f() got an unexpected keyword argument 'k'": the function and
/// the keyword, with the keyword's new name when the `renamed_keywords` table knows it.
fn unexpected_keyword(message: &str) -> Option<String> {
    let (head, rest) = message.split_once("() got an unexpected keyword argument '")?;
    let keyword = rest.split('\'').next()?;
    let function = head.rsplit([' ', ':']).next().unwrap_or(head);
    let function = function.strip_suffix(".__init__").unwrap_or(function);
    let renamed = words::list("python_type_error.renamed_keywords")
        .iter()
        .find_map(|entry| {
            let (old, new) = entry.split_once(" => ")?;
            (old == keyword).then(|| say!("python_type_error.renamed", new = new))
        })
        .unwrap_or_default();
    Some(say!(
        "python_type_error.unexpected_keyword",
        function = function,
        keyword = keyword,
        renamed = renamed
    ))
}

/// How many lines above a failing line [`exhausted_iterator`] reads: where an iterator is made
/// and used up is near where it fails, and the bound keeps the search linear.
const LOOKBACK: usize = 200;

/// A name the code sets to a one-pass iterator (a generator expression, `map(`, `filter(`,
/// `zip(`, `iter(`, `reversed(`) and uses on an earlier line than `failing` (1-based) too:
/// the name, the line that made it and the line that used it up.
fn exhausted_iterator(code: &str, failing: usize) -> Option<(&str, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let failing_text = lines.get(failing.checked_sub(1)?)?;
    let makers = words::list("value_error.iterator_makers");
    // The lines just above the failing one, so a long code is not read once per line.
    let from = failing.saturating_sub(LOOKBACK);
    lines[..failing - 1]
        .iter()
        .enumerate()
        .skip(from)
        .find_map(|(at, line)| {
            let (name, value) = line.trim().split_once(" = ")?;
            let one_pass = (value.starts_with('(') && value.contains(" for "))
                || makers.iter().any(|m| value.starts_with(m.as_str()));
            let uses = |text: &str| {
                text.match_indices(name).any(|(i, _)| {
                    let before = text[..i].chars().next_back();
                    let after = text[i + name.len()..].chars().next();
                    let ident =
                        |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !ident(before) && !ident(after)
                })
            };
            if !is_name(name) || !one_pass || !uses(failing_text) {
                return None;
            }
            // A line that sets the name again (`xs = list(xs)`) makes it something else.
            let set_again = lines[at + 1..failing - 1]
                .iter()
                .any(|l| l.trim().starts_with(&format!("{name} = ")));
            if set_again {
                return None;
            }
            let used = (at + 1..failing - 1).find(|&k| uses(lines[k]))?;
            Some((name, at + 1, used + 1))
        })
}

/// The comma and the bracket it stands before (`, }`), when JSON-looking `text` has a comma
/// right before a closing `}` or `]`.
fn trailing_comma(text: &str) -> Option<String> {
    let looks_json = text.trim_start().starts_with(['{', '[']);
    let bytes = text.as_bytes();
    // Only commas look ahead, and each over the spaces up to the next comma or other byte:
    // linear in the text.
    let comma = bytes.iter().enumerate().find_map(|(i, b)| {
        if *b != b',' {
            return None;
        }
        let next = bytes[i + 1..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())?;
        matches!(bytes[i + 1 + next], b'}' | b']').then_some((i, i + 1 + next))
    });
    let (from, to) = comma.filter(|_| looks_json)?;
    Some(text[from..=to].to_owned())
}

/// The name and module of "cannot import name 'joblib' from 'sklearn.externals' (...)".
fn imported_package(message: &str) -> Option<(&str, &str)> {
    let rest = message.split_once("cannot import name '")?.1;
    let (name, rest) = rest.split_once('\'')?;
    let module = rest.split_once("from '")?.1.split('\'').next()?;
    Some((name, module))
}

/// A subscript updated in place on `line` (`counts[w] += 1`): the target as written, the dict
/// and the operator.
fn updated_in_place(line: &str) -> Option<(&str, &str, &str)> {
    let line = line.trim();
    let (target, op) = ["+=", "-=", "*=", "|=", "&="].iter().find_map(|op| {
        line.split_once(&format!(" {op} "))
            .map(|(t, _)| (t.trim(), *op))
    })?;
    let dict = target.strip_suffix(']')?.split_once('[')?.0;
    is_name(dict).then_some((target, dict, op))
}

/// The fix for a JavaScript method called on a Python value (`attribute`, as the
/// AttributeError names it): its Python form from the `attribute_error.javascript_methods`
/// table, and the forms of the table's other methods that `code` calls (`.toLowerCase(`).
fn javascript_methods(attribute: &str, code: &str) -> Option<String> {
    let table: Vec<(&str, &str)> = words::list("attribute_error.javascript_methods")
        .iter()
        .filter_map(|entry| entry.split_once(" => "))
        .collect();
    let python = table.iter().find(|(js, _)| *js == attribute)?.1;
    let pairs: Vec<String> = std::iter::once((attribute, python))
        .chain(
            table
                .iter()
                .copied()
                .filter(|(js, _)| *js != attribute && code.contains(&format!(".{js}("))),
        )
        .map(|(js, py)| format!("`.{js}` → {py}"))
        .collect();
    Some(say!(
        "attribute_error.javascript_method",
        method = attribute,
        pairs = pairs.join(", ")
    ))
}

/// The text of "invalid literal for int() with base 10: '3.75'" when it is a decimal number,
/// which int() does not parse.
fn decimal_for_int(message: &str) -> Option<&str> {
    let text = message
        .split_once("invalid literal for int() with base 10: '")?
        .1
        .strip_suffix('\'')?;
    (text.contains('.') && text.trim().parse::<f64>().is_ok()).then_some(text)
}

/// The first Enum class `code` defines (`class Level(Enum):`, or on `IntEnum`, `StrEnum`,
/// `Flag` or `IntFlag`, written with `enum.` or not, among any other bases) that `line`
/// subscripts (`Level[x]`); any line of the code when the failing one is not known (`None`).
/// `[]` looks a member up by its name, so a KeyError there is a value looked up as a name; a
/// KeyError on any other line (a dict's) is not, even in code that defines an Enum.
/// The parameter of a lambda given to `.apply(...)` on `line` and indexed by a string inside
/// it (`df.apply(lambda row: row['first'] + row['last'])`), when the call names no `axis`:
/// `DataFrame.apply` then passes each column, so the names looked up are not its labels.
fn applied_per_column(line: &str) -> Option<&str> {
    let (_, call) = line.split_once(".apply(")?;
    if call.contains("axis") {
        return None;
    }
    let (param, body) = call.trim_start().strip_prefix("lambda ")?.split_once(':')?;
    let param = param.trim();
    let indexed = [format!("{param}['"), format!("{param}[\"")];
    (is_name(param) && indexed.iter().any(|i| body.contains(i.as_str()))).then_some(param)
}

fn subscripted_enum<'c>(code: &'c str, line: Option<&str>) -> Option<&'c str> {
    const ENUM_BASES: [&str; 5] = ["Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"];
    let enums: Vec<&str> = code
        .lines()
        .filter_map(|l| {
            let (class, bases) = l.trim_start().strip_prefix("class ")?.split_once('(')?;
            let (bases, _) = bases.split_once(')')?;
            let class = class.trim();
            let on_enum = bases
                .split(',')
                .map(str::trim)
                .any(|base| ENUM_BASES.contains(&base.strip_prefix("enum.").unwrap_or(base)));
            (on_enum && is_name(class)).then_some(class)
        })
        .collect();
    // `Level[`, but not `OtherLevel[` nor `config.Level[`.
    let subscripts = |l: &str| {
        enums.iter().copied().find(|class| {
            l.match_indices(&format!("{class}[")).any(|(at, _)| {
                !l[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
    };
    match line {
        Some(line) => subscripts(line),
        None => code.lines().find_map(subscripts),
    }
}

/// True when a Python traceback's innermost frame is in one of the standard library's
/// `modules` (`socket`, `http/client`): the error came from inside that module, whatever it
/// says (`OSError: [Errno 58] Not supported` from `socket.socket()`).
fn raised_in(stderr: &str, modules: &[String]) -> bool {
    let Some(frame) = stderr
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("File \""))
    else {
        return false;
    };
    let file = frame
        .trim_start()
        .trim_start_matches("File \"")
        .split('"')
        .next()
        .unwrap_or("");
    // `/usr/local/lib/python315.zip/http/client.py` gives `http/client`.
    let Some((_, module)) = file.rsplit_once(".zip/").or_else(|| {
        let at = file.find("/lib/python3")?;
        file[at + 1..]
            .split_once('/')
            .and_then(|(_, r)| r.split_once('/'))
    }) else {
        return false;
    };
    let module = module.trim_end_matches(".py");
    modules.iter().any(|m| m == module)
}

/// Python's join written in JavaScript on `line`: `'-'.join(parts)` gives the separator as
/// written (`'-'`) and the argument (`parts`).
fn separator_join(line: &str) -> Option<(&str, &str)> {
    let at = line.find(".join(")?;
    let quote = line[..at]
        .chars()
        .last()
        .filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let open = line[..at - 1].rfind(quote)?;
    let sep = &line[open..at];
    let args = &line[at + ".join(".len()..];
    let close = args.find(')')?;
    let list = args[..close].trim();
    (!list.is_empty() && !list.contains(['(', ',', '"', '\''])).then_some((sep, list))
}

/// The two inner sizes of a matrix product that do not match, larger first: numpy's
/// `(size 4 is different from 3)` (matmul) or `3 (dim 1) != 4 (dim 0)` (dot).
fn inner_sizes(lower: &str) -> Option<(u64, u64)> {
    let number = |t: &str| t.trim().parse::<u64>().ok();
    let (a, b) = if lower.contains("core dimension") {
        let rest = lower.split("(size ").nth(1)?;
        let (a, rest) = rest.split_once(" is different from ")?;
        (number(a)?, number(rest.split(')').next()?)?)
    } else if lower.contains("not aligned") {
        let rest = lower.split(" not aligned: ").nth(1)?;
        let (a, rest) = rest.split_once(" (dim ")?;
        let b = rest.split_once("!= ")?.1.split(' ').next()?;
        (number(a)?, number(b)?)
    } else {
        return None;
    };
    Some((a.max(b), a.min(b)))
}

/// True when `text` contains one of `signs`, a list of the words files.
pub(super) fn mentions(text: &str, signs: &[String]) -> bool {
    signs.iter().any(|sign| text.contains(sign.as_str()))
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

/// `value in array` in JavaScript code, where `array` is a name the code binds to an array
/// literal (`const xs = [1, 2, 3]`) and the test is not a `for (... in ...)` header: Python's
/// membership test, which in JavaScript asks whether `value` is a key (an index) of the array.
/// Returns the value and the array as written.
fn js_in_on_array(code: &str) -> Option<(String, String)> {
    let arrays: Vec<&str> = code
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = ["const ", "let ", "var "]
                .iter()
                .find_map(|k| line.strip_prefix(k))?;
            let (name, value) = rest.split_once('=')?;
            let name = name.trim();
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
            (is_name && value.trim_start().starts_with('[')).then_some(name)
        })
        .collect();
    for line in code.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("for") {
            continue;
        }
        for (at, _) in trimmed.match_indices(" in ") {
            let after = &trimmed[at + 4..];
            let array: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            if !arrays.contains(&array.as_str()) {
                continue;
            }
            let before = &trimmed[..at];
            let value: String = before
                .chars()
                .rev()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '\'' | '"' | '.'))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !value.is_empty() {
                return Some((value, array));
            }
        }
    }
    None
}

/// `for k, v in NAME:` where the code binds NAME to a dict (`NAME = {...}`, `dict(...)`,
/// `json.load(...)`): iterating a dict gives its keys only. The names and the dict.
fn dict_walked_for_pairs<'l>(line: &'l str, code: &str) -> Option<(&'l str, &'l str)> {
    let rest = line.trim().strip_prefix("for ")?.strip_suffix(':')?;
    let (names, walked) = rest.split_once(" in ")?;
    let (names, walked) = (names.trim(), walked.trim());
    if !names.contains(',') || !walked.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let is_dict = code.lines().any(|l| {
        l.trim()
            .strip_prefix(walked)
            .and_then(|r| r.trim_start().strip_prefix('='))
            .filter(|r| !r.starts_with('='))
            .map(str::trim_start)
            .is_some_and(|v| {
                v.starts_with('{')
                    && !v.starts_with("{}")
                    && !v.contains(" for ")
                    && v.contains(':')
                    || v.starts_with("dict(")
                    || v.starts_with("{}")
                    || v.starts_with("json.load")
                    || v.starts_with("Counter(")
                    || v.starts_with("defaultdict(")
            })
    });
    is_dict.then_some((names, walked))
}

#[cfg(test)]
mod js_in_tests {
    use super::js_in_on_array;

    #[test]
    fn membership_in_an_array_is_python_s_in() {
        let code = "const xs = [1, 2, 3];\nif (!(3 in xs)) throw new Error('3 not found in xs');";
        assert_eq!(js_in_on_array(code), Some(("3".into(), "xs".into())));
        let code = "let names = ['a', 'b'];\nconsole.log('b' in names);";
        assert_eq!(js_in_on_array(code), Some(("'b'".into(), "names".into())));
        // Keys of an object, and for...in loops, are what `in` is for.
        assert_eq!(
            js_in_on_array("const o = {a: 1};\nconsole.log('a' in o);"),
            None
        );
        assert_eq!(
            js_in_on_array("const xs = [1];\nfor (const i in xs) console.log(i);"),
            None
        );
    }
}

#[cfg(test)]
mod enum_tests {
    use super::subscripted_enum;

    const LEVEL: &str = "from enum import Enum\n\nclass Level(Enum):\n    DEBUG = 'debug'\n";

    #[test]
    fn an_enum_class_subscripted_on_the_failing_line() {
        assert_eq!(
            subscripted_enum(LEVEL, Some("lvl = Level[raw]")),
            Some("Level")
        );
        // Any Enum base, with `enum.` or not, among other bases.
        for header in [
            "class Level(enum.IntEnum):",
            "class Level(str, Enum):",
            "class Level(StrEnum):",
            "class Level(Flag):",
        ] {
            assert_eq!(
                subscripted_enum(header, Some("  return Level[name.upper()]")),
                Some("Level"),
                "{header}"
            );
        }
        // The failing line unknown: any line of the code.
        let code = format!("{LEVEL}lvl = Level['info']\n");
        assert_eq!(subscripted_enum(&code, None), Some("Level"));
    }

    #[test]
    fn other_subscripts_are_not_enum_lookups() {
        // A dict's KeyError in code that defines (and even subscripts) an Enum.
        let code = format!("{LEVEL}ok = Level['DEBUG']\nnames = {{}}\nnames['info']\n");
        assert_eq!(subscripted_enum(&code, Some("names['info']")), None);
        assert_eq!(subscripted_enum(LEVEL, Some("x = OtherLevel[k]")), None);
        assert_eq!(subscripted_enum(LEVEL, Some("x = cfg.Level[k]")), None);
        // A class on another base, and no class at all.
        assert_eq!(
            subscripted_enum("class Level(Base):\n", Some("Level[k]")),
            None
        );
        assert_eq!(subscripted_enum("d = {}\nd['k']\n", None), None);
    }
}

/// What the runtime advice reads off messages and lines.
#[cfg(test)]
mod reading_tests {
    use super::{exhausted_iterator, imported_package, trailing_comma, updated_in_place};

    #[test]
    fn json_text_with_a_comma_before_its_closing_bracket() {
        assert_eq!(trailing_comma("{\"a\": 1,}").as_deref(), Some(",}"));
        assert_eq!(trailing_comma("[1, 2,\n ]").as_deref(), Some(",\n ]"));
        assert_eq!(trailing_comma("{\"a\": [1, 2]}"), None);
        // Not JSON text: a sentence with a comma before a bracket.
        assert_eq!(trailing_comma("see (a, b,) here"), None);
    }

    #[test]
    fn a_counted_key_and_an_iterator_used_twice() {
        assert_eq!(
            updated_in_place("    counts[w] += 1"),
            Some(("counts[w]", "counts", "+="))
        );
        assert_eq!(updated_in_place("total += counts[w]"), None);
        let code = "sq = (x * x for x in r)\nprint(sum(sq))\nprint(max(sq))";
        assert_eq!(exhausted_iterator(code, 3), Some(("sq", 1, 2)));
        // Made a list in between, it can be walked again.
        let code = "sq = map(f, r)\nsq = list(sq)\nprint(sum(sq))\nprint(max(sq))";
        assert_eq!(exhausted_iterator(code, 4), None);
        assert_eq!(exhausted_iterator(code, 99), None);
    }

    #[test]
    fn names_imported_from_a_module_that_lacks_them() {
        let message = "ImportError: cannot import name 'joblib' from 'sklearn.externals' (/x.pyc)";
        assert_eq!(
            imported_package(message),
            Some(("joblib", "sklearn.externals"))
        );
        assert_eq!(imported_package("ImportError: no module"), None);
    }
}

#[cfg(test)]
mod tests {
    use super::{applied_per_column, inner_sizes, raised_in, separator_join};

    #[test]
    fn apply_without_axis_is_read_off_the_line() {
        let line = "out['x'] = df.apply(lambda r: r['a'] * r[\"b\"])";
        assert_eq!(applied_per_column(line), Some("r"));
        for line in [
            "df.apply(lambda r: r['a'], axis=1)",
            "s.apply(lambda v: lookup[v])",
            "df.apply(len)",
        ] {
            assert_eq!(applied_per_column(line), None, "{line}");
        }
    }

    #[test]
    fn errors_raised_inside_a_module() {
        let modules = ["socket".to_owned(), "http/client".to_owned()];
        let socket = "Traceback (most recent call last):\n  File \"<cell 1>\", line 5, in __init__\n  File \"/usr/local/lib/python315.zip/socket.py\", line 237, in __init__\nOSError: [Errno 58] Not supported\n";
        assert!(raised_in(socket, &modules));
        let http = "  File \"/usr/lib/python3.12/http/client.py\", line 1, in x\nOSError: y\n";
        assert!(raised_in(http, &modules));
        let own = "  File \"/usr/local/lib/python315.zip/socket.py\", line 1, in f\n  File \"<cell 1>\", line 3, in g\nOSError: z\n";
        assert!(!raised_in(own, &modules));
    }

    #[test]
    fn separator_join_and_inner_sizes() {
        assert_eq!(
            separator_join("console.log(', '.join(cols));"),
            Some(("', '", "cols"))
        );
        assert_eq!(separator_join("xs.join('-')"), None);
        assert_eq!(
            inner_sizes(
                "matmul: input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"
            ),
            Some((4, 3))
        );
        assert_eq!(
            inner_sizes("shapes (100,3) and (4,) not aligned: 3 (dim 1) != 4 (dim 0)"),
            Some((4, 3))
        );
    }
}
