//! Advice for Python 2 habits in Python 3 code: builtins that are gone (`xrange`,
//! `raw_input`, `unicode`), modules that were renamed (`urllib2`, `StringIO`, `cPickle`),
//! dict and module attributes that changed (`iteritems`, `has_key`, `string.letters`), and
//! Python 2 syntax (`print x`, `except E, e`, `0755`, `10L`, `<>`). Each one names the
//! Python 3 spelling, so the model does not go looking for a package or a missing variable.
//! The words, and the tables of what replaces what, live in `words/python2.toml`.

use super::super::docs::PYTHON;
use super::draft::Draft;
use crate::words::{self, say};

/// Where the Python 2 builtins Python 3 removed are, by name (`python2.builtins.xrange`).
const BUILTINS: &str = "python2.builtins.";
/// Where the Python 2 modules are, by name (`python2.modules.urllib2`).
const MODULES: &str = "python2.modules.";
/// Where the attributes Python 3 removed are, by owner and name (`python2.attributes.dict.has_key`).
const ATTRIBUTES: &str = "python2.attributes.";

impl Draft<'_, '_> {
    /// A Python 2 habit behind a runtime error (a removed builtin, a changed attribute, the
    /// `print >>f` form): the Python 3 spelling as the first fix, and true. False otherwise.
    pub(super) fn python2_runtime(&mut self, name: &str, message: &str) -> bool {
        let line = self.error_line().unwrap_or_default();
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        let fix = match name {
            "NameError" => super::evidence::quoted(message).and_then(|missing| {
                words::find(&format!("{BUILTINS}{missing}"))
                    .map(|fix| say!("python2.builtin", old = missing, fix = fix))
                    .or_else(|| {
                        // Since 3.14 `except E, e:` parses as catching E or e (PEP 758), so
                        // `e` is looked up when an exception arrives.
                        let comma = compact.starts_with("except")
                            && compact.ends_with(&format!(",{missing}:"));
                        comma.then(|| words::text("python2.except_comma").to_owned())
                    })
            }),
            "AttributeError" => missing_attribute(message)
                .and_then(|(owner, name)| words::find(&format!("{ATTRIBUTES}{owner}.{name}")))
                .map(|fix| say!("python2.attribute", fix = fix)),
            "TypeError"
                if message.contains("file=<output_stream>")
                    || (message.contains("unsupported operand type(s) for >>")
                        && compact.starts_with("print>>")) =>
            {
                Some(words::text("python2.print_chevron").to_owned())
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
        let Some(new) = words::find(&format!("{MODULES}{top}")) else {
            return false;
        };
        self.rule_with("python2.renamed_module", &[("old", &top), ("new", &new)]);
        true
    }

    /// Python 2 syntax behind a syntax error: the Python 3 form, as a fix.
    pub(super) fn python2_syntax(&mut self, lower: &str, line: &str) {
        if lower.contains("missing parentheses in call to 'print'") {
            self.fix(words::text("python2.print_statement"));
        }
        if lower.contains("missing parentheses in call to 'exec'") {
            self.fix(words::text("python2.exec_statement"));
        }
        if lower.contains("multiple exception types must be parenthesized") {
            self.fix(words::text("python2.except_comma"));
        }
        if lower.contains("leading zeros in decimal integer literals") {
            self.fix(words::text("python2.octal"));
        }
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if lower.contains("invalid decimal literal") && has_long_suffix(line) {
            self.fix(words::text("python2.long_suffix"));
        }
        if compact.contains("<>") {
            self.fix(words::text("python2.not_equal"));
        }
        if lower.contains("invalid syntax") && line.trim_start().starts_with("print ") {
            self.fix(words::text("python2.print_statement"));
        }
    }
}

/// The owner and name of a missing attribute: `("dict", "has_key")` from "'dict' object has
/// no attribute 'has_key'", `("string", "letters")` from "module 'string' has no attribute
/// 'letters'".
fn missing_attribute(message: &str) -> Option<(&str, &str)> {
    let (head, tail) = message.split_once(" has no attribute '")?;
    let name = tail.split('\'').next()?;
    let head = head
        .strip_suffix("' object")
        .or_else(|| head.strip_suffix('\''))?;
    let (_, owner) = head.rsplit_once('\'')?;
    Some((owner, name))
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
    use super::{has_long_suffix, missing_attribute};

    #[test]
    fn a_long_suffix_is_a_digit_run_ending_in_l() {
        assert!(has_long_suffix("big = 10L"));
        assert!(!has_long_suffix("x = html5lib"));
        assert!(!has_long_suffix("y = 0x1F"));
    }

    #[test]
    fn a_missing_attribute_is_its_owner_and_name() {
        assert_eq!(
            missing_attribute("AttributeError: 'dict' object has no attribute 'iteritems'"),
            Some(("dict", "iteritems"))
        );
        assert_eq!(
            missing_attribute("module 'itertools' has no attribute 'izip'. Did you mean: 'zip'?"),
            Some(("itertools", "izip"))
        );
        assert_eq!(missing_attribute("name 'x' is not defined"), None);
    }
}
