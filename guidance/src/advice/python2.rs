//! Advice for Python 2 habits in Python 3 code: builtins that are gone (`xrange`,
//! `raw_input`, `unicode`), modules that were renamed (`urllib2`, `StringIO`, `cPickle`),
//! dict and module attributes that changed (`iteritems`, `has_key`, `string.letters`), and
//! Python 2 syntax (`print x`, `except E, e`, `0755`, `10L`, `<>`). Each one names the
//! Python 3 spelling, so the model does not go looking for a package or a missing variable.

use super::super::docs::PYTHON;
use super::draft::Draft;

/// Python 2 builtins that Python 3 removed, and what replaces them.
const BUILTINS: &[(&str, &str)] = &[
    (
        "xrange",
        "use `range(...)`: Python 3's range is already lazy",
    ),
    (
        "raw_input",
        "use `input(...)`; but the sandbox has no stdin, so put the value in the code or read it from a file in /app",
    ),
    ("unicode", "use `str`: every Python 3 string is Unicode"),
    ("basestring", "use `str` (`isinstance(x, str)`)"),
    ("long", "use `int`: Python 3 integers have no size limit"),
    ("reduce", "add `from functools import reduce`"),
    ("unichr", "use `chr(...)`"),
    ("file", "use `open(...)`"),
    ("execfile", "use `exec(open(path).read())`"),
    (
        "cmp",
        "compare with `(a > b) - (a < b)`; to sort, pass `key=` (or `functools.cmp_to_key`)",
    ),
    ("intern", "use `sys.intern(...)`"),
];

/// Python 2 modules and their Python 3 names.
const MODULES: &[(&str, &str)] = &[
    (
        "urllib2",
        "`urllib.request` (though the sandbox has no network, so fetching fails either way)",
    ),
    ("urlparse", "`urllib.parse`"),
    ("cPickle", "`pickle`"),
    ("StringIO", "`io.StringIO` (`from io import StringIO`)"),
    (
        "cStringIO",
        "`io.StringIO` for text or `io.BytesIO` for bytes",
    ),
    ("ConfigParser", "`configparser`"),
    ("Queue", "`queue`"),
    ("HTMLParser", "`html.parser`"),
    (
        "httplib",
        "`http.client` (though the sandbox has no network)",
    ),
    ("__builtin__", "`builtins`"),
    ("cookielib", "`http.cookiejar`"),
    ("SocketServer", "`socketserver`"),
    (
        "Tkinter",
        "nothing here: `tkinter` needs a display, which the sandbox does not have",
    ),
    (
        "commands",
        "nothing here: the sandbox has no processes to run commands in",
    ),
];

/// Attributes Python 2 had and Python 3 does not: (`object has no attribute 'x'` text, fix).
const ATTRIBUTES: &[(&str, &str)] = &[
    (
        "'dict' object has no attribute 'iteritems'",
        "use `d.items()`",
    ),
    (
        "'dict' object has no attribute 'itervalues'",
        "use `d.values()`",
    ),
    (
        "'dict' object has no attribute 'iterkeys'",
        "use `d.keys()` (or iterate over `d`)",
    ),
    ("'dict' object has no attribute 'has_key'", "use `key in d`"),
    (
        "module 'string' has no attribute 'letters'",
        "use `string.ascii_letters`",
    ),
    (
        "module 'string' has no attribute 'lowercase'",
        "use `string.ascii_lowercase`",
    ),
    (
        "module 'string' has no attribute 'uppercase'",
        "use `string.ascii_uppercase`",
    ),
    (
        "module 'string' has no attribute 'maketrans'",
        "use `str.maketrans(...)`",
    ),
    (
        "module 'os' has no attribute 'getcwdu'",
        "use `os.getcwd()`",
    ),
    (
        "module 'itertools' has no attribute 'izip'",
        "use the builtin `zip(...)`",
    ),
    (
        "module 'itertools' has no attribute 'imap'",
        "use the builtin `map(...)`",
    ),
    (
        "module 'itertools' has no attribute 'ifilter'",
        "use the builtin `filter(...)`",
    ),
    (
        "module 'itertools' has no attribute 'izip_longest'",
        "use `itertools.zip_longest(...)`",
    ),
    (
        "'str' object has no attribute 'decode'",
        "a `str` is already text: only bytes have `.decode()`; drop the call",
    ),
];

/// The fix for Python 2's `except E, e:`.
const EXCEPT_COMMA_FIX: &str = "`except E, e:` is Python 2: write `except E as e:` (several types go in a tuple: `except (E1, E2) as e:`).";

impl Draft<'_, '_> {
    /// A Python 2 habit behind a runtime error (a removed builtin, a changed attribute, the
    /// `print >>f` form): the Python 3 spelling as the first fix, and true. False otherwise.
    pub(super) fn python2_runtime(&mut self, name: &str, message: &str) -> bool {
        let line = self.error_line().unwrap_or_default();
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        let fix = match name {
            "NameError" => super::evidence::quoted(message).and_then(|missing| {
                BUILTINS
                    .iter()
                    .find(|(old, _)| *old == missing)
                    .map(|(old, fix)| format!("`{old}` is Python 2; this is Python 3.15: {fix}."))
                    .or_else(|| {
                        // Since 3.14 `except E, e:` parses as catching E or e (PEP 758), so
                        // `e` is looked up when an exception arrives.
                        let comma = compact.starts_with("except")
                            && compact.ends_with(&format!(",{missing}:"));
                        comma.then(|| EXCEPT_COMMA_FIX.to_owned())
                    })
            }),
            "AttributeError" => ATTRIBUTES
                .iter()
                .find(|(text, _)| message.contains(text))
                .map(|(_, fix)| format!("That attribute is Python 2; this is Python 3.15: {fix}.")),
            "TypeError"
                if message.contains("file=<output_stream>")
                    || (message.contains("unsupported operand type(s) for >>")
                        && compact.starts_with("print>>")) =>
            {
                Some(
                "`print >>f, x` is Python 2; this is Python 3.15: write `print(x, file=f)` (e.g. `file=sys.stderr`)."
                    .to_owned(),
                )
            }
            _ => None,
        };
        let Some(fix) = fix else {
            return false;
        };
        self.doc(PYTHON);
        self.fix(fix);
        true
    }

    /// An import of a Python 2 module: its Python 3 name, and true. False otherwise.
    pub(super) fn python2_module(&mut self, module: &str) -> bool {
        let top = module.split('.').next().unwrap_or(module);
        let Some((old, new)) = MODULES.iter().find(|(old, _)| *old == top) else {
            return false;
        };
        self.summary = format!(
            "`{old}` is a Python 2 module; the sandbox runs Python 3.15, where it does not exist."
        );
        self.fix(format!("Import the Python 3 name instead: {new}."));
        self.fix("No package provides the Python 2 name: do not install it; port the code to Python 3 (print(), str/bytes, dict.items()).");
        true
    }

    /// Python 2 syntax behind a syntax error: the Python 3 form, as a fix.
    pub(super) fn python2_syntax(&mut self, lower: &str, line: &str) {
        if lower.contains("missing parentheses in call to 'print'") {
            self.fix("This is Python 3: `print(x)`, not `print x`.");
        }
        if lower.contains("missing parentheses in call to 'exec'") {
            self.fix("This is Python 3: `exec(code)` is a function, not a statement.");
        }
        if lower.contains("multiple exception types must be parenthesized") {
            self.fix(EXCEPT_COMMA_FIX);
        }
        if lower.contains("leading zeros in decimal integer literals") {
            self.fix("Octal literals need the 0o prefix in Python 3: `0o755`, not `0755`.");
        }
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if lower.contains("invalid decimal literal") && has_long_suffix(line) {
            self.fix("Python 3 integers have no `L` suffix: write `10`, not `10L` (ints have no size limit).");
        }
        if compact.contains("<>") {
            self.fix("`<>` is Python 2: write `!=`.");
        }
        if lower.contains("invalid syntax") && line.trim_start().starts_with("print ") {
            self.fix("This is Python 3: `print(x)`, not `print x`.");
        }
    }
}

/// True when `line` has an integer literal with a Python 2 `L`/`l` suffix (`10L`).
fn has_long_suffix(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.windows(2).enumerate().any(|(i, w)| {
        w[0].is_ascii_digit()
            && matches!(w[1], b'L' | b'l')
            && bytes
                .get(i + 2)
                .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_')
            && (i == 0
                || !bytes[..i]
                    .last()
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_'))
    })
}

#[cfg(test)]
mod tests {
    use super::has_long_suffix;

    #[test]
    fn a_long_suffix_is_a_digit_run_ending_in_l() {
        assert!(has_long_suffix("big = 10L"));
        assert!(!has_long_suffix("x = html5lib"));
        assert!(!has_long_suffix("y = 0x1F"));
    }
}
