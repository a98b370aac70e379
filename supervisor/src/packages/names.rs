//! Package names and versions as clients send them: hostile until proven to be names.
//!
//! `install_package` (and `pip install` in `execute_command`) takes a PEP 508 distribution
//! name and, optionally, a PEP 440 version; JavaScript takes an npm package name. Everything
//! else, such as paths, URLs, `name @ url` direct references, extras, markers, specifiers and
//! command-line options, is refused before any tool runs, so no string a client chose ever reaches
//! pip's command line as anything but a plain requirement.

/// Longest distribution or package name accepted (PyPI's longest names are far shorter).
pub const MAX_NAME_LEN: usize = 100;
/// Longest version accepted.
pub const MAX_VERSION_LEN: usize = 64;

/// Checks a PEP 508 distribution name: ASCII letters and digits, with `.`, `_` or `-` inside.
///
/// # Errors
/// Why the name is not one, for the client.
pub fn python_name(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        return Ok(());
    }
    Err(format!(
        "{} is not a package name: give a distribution name as on PyPI (letters, digits, '.', '_', '-'; e.g. \"tabulate\"), not a path, URL, option or requirement with extras or markers",
        quote(name)
    ))
}

/// Checks a PEP 440 version (an exact release such as `1.2.3`, `2.0rc1`, `1!2.0.post1`,
/// `1.0+local`), optionally written `==1.2.3`. Returns it without the `==`.
///
/// # Errors
/// Why it is not an exact version, for the client.
pub fn python_version(version: &str) -> Result<&str, String> {
    let bare = version.strip_prefix("==").unwrap_or(version);
    if bare.len() <= MAX_VERSION_LEN && is_pep440_version(bare) {
        return Ok(bare);
    }
    Err(format!(
        "{} is not an exact version: give one like \"1.2.3\" (ranges, markers and options are not accepted)",
        quote(version)
    ))
}

/// PEP 440's public version grammar (normalised spellings and the common variants), with an
/// optional local part.
fn is_pep440_version(v: &str) -> bool {
    let v = v.to_ascii_lowercase();
    let (public, local) = match v.split_once('+') {
        Some((p, l)) => (p, Some(l)),
        None => (v.as_str(), None),
    };
    if let Some(local) = local {
        let segments_ok = local
            .split('.')
            .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric()));
        if !segments_ok {
            return false;
        }
    }
    let mut rest = public.strip_prefix('v').unwrap_or(public);
    // Epoch: `N!`.
    if let Some((epoch, after)) = rest.split_once('!') {
        if !all_digits(epoch) {
            return false;
        }
        rest = after;
    }
    // Release: N(.N)*
    let mut release_end = 0;
    loop {
        let digits = rest[release_end..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 {
            return false;
        }
        release_end += digits;
        let next = &rest[release_end..];
        if next.starts_with('.') && next[1..].starts_with(|c: char| c.is_ascii_digit()) {
            release_end += 1;
        } else {
            break;
        }
    }
    let mut rest = &rest[release_end..];
    // Pre, post and dev parts, each at most once and in this order.
    for (labels, optional_number) in [
        // Longest spellings first, so `alpha` is not read as `a` followed by junk.
        (
            &["preview", "alpha", "beta", "pre", "rc", "a", "b", "c"][..],
            false,
        ),
        (&["post", "rev", "r"][..], true),
        (&["dev"][..], true),
    ] {
        let trimmed = rest.trim_start_matches(['.', '-', '_']);
        if let Some(label) = labels.iter().find(|l| trimmed.starts_with(**l)) {
            let after = &trimmed[label.len()..];
            let after = after.trim_start_matches(['.', '-', '_']);
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 && !optional_number {
                // `1.0a` means `1.0a0`: allowed when the label ends the part.
                if !(after.is_empty() || after.starts_with(['.', '-', '_'])) {
                    return false;
                }
            }
            rest = &after[digits..];
        }
    }
    rest.is_empty()
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Checks an npm package name: `name` or `@scope/name`, each part of lowercase or uppercase
/// ASCII letters, digits, `-`, `.`, `_`, `~`, not starting with `.` or `_`.
///
/// # Errors
/// Why the name is not one, for the client.
pub fn js_name(name: &str) -> Result<(), String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_'])
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
    };
    let ok = name.len() <= MAX_NAME_LEN
        && match name.strip_prefix('@') {
            Some(scoped) => {
                matches!(scoped.split_once('/'), Some((scope, pkg)) if part_ok(scope) && part_ok(pkg))
            }
            None => part_ok(name),
        };
    if ok {
        return Ok(());
    }
    Err(format!(
        "{} is not a package name: give an npm package name such as \"lodash\" or \"@scope/name\", not a path or URL",
        quote(name)
    ))
}

/// A client's string for a message: quoted, and cut so a megabyte of junk is not echoed back.
pub fn quote(text: &str) -> String {
    const SHOWN: usize = 80;
    if text.chars().count() <= SHOWN {
        return format!("{text:?}");
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut:?}... ({} bytes)", text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names_are_pep_508_names_only() {
        for ok in [
            "tabulate",
            "python-dateutil",
            "zope.interface",
            "Jinja2",
            "a",
            "x_y",
        ] {
            assert!(python_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../etc",
            "/etc/passwd",
            "./x",
            "x/y",
            "https://evil.example/x.whl",
            "git+https://x/y",
            "x @ https://y/z.whl",
            "x@https://y",
            "-e",
            "--index-url=http://evil",
            "x[extra]",
            "x;os_name==\"posix\"",
            "file:///etc/passwd",
            "~root",
            "a b",
            "x==1.0",
            "x-",
            ".x",
            "C:\\x",
            &"a".repeat(101),
        ] {
            assert!(python_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions_are_exact_pep_440_versions() {
        for (ok, bare) in [
            ("1.0", "1.0"),
            ("==1.0", "1.0"),
            ("0.9.0", "0.9.0"),
            ("2.0rc1", "2.0rc1"),
            ("1.0a", "1.0a"),
            ("1!2.0.post1", "1!2.0.post1"),
            ("1.0.dev3", "1.0.dev3"),
            ("1.0+local.7", "1.0+local.7"),
            ("v1.2", "v1.2"),
            ("1.0alpha2", "1.0alpha2"),
        ] {
            assert_eq!(python_version(ok), Ok(bare), "{ok}");
        }
        for bad in [
            "",
            "1.0; rm -rf /",
            "../1",
            ">=1.0",
            "1.0 --pre",
            "1.0,<2",
            "~=1.0",
            "1.*",
            "latest",
            "1..0",
            "1.0+",
            "1.0 ",
            "-1",
        ] {
            assert!(python_version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn js_names_are_npm_names_only() {
        for ok in [
            "lodash",
            "dayjs",
            "@scope/pkg",
            "left-pad",
            "js-yaml",
            "a.b",
        ] {
            assert!(js_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "a/b",
            "a/b/c",
            "@scope/../x",
            "@scope/",
            "@/x",
            "http://x",
            ".hidden",
            "_x",
            "@scope/a/b",
            "x y",
            "..",
        ] {
            assert!(js_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quoted_input_is_cut() {
        assert_eq!(quote("a"), "\"a\"");
        let long = quote(&"x".repeat(10_000));
        assert!(long.len() < 120 && long.ends_with("(10000 bytes)"));
    }
}
