//! What a POSIX shell does to a command line that a writer of bash or Python did not expect,
//! read from the line itself: a pattern that matched no file (passed on literally), a variable
//! holding spaces expanded unquoted (split into words), file names split by `xargs`, a
//! here-doc whose unquoted delimiter let the shell expand `$...` in its body, bash's arrays,
//! Python sent as a command line, and quotes nested in a program quoted the same way
//! (`python -c '...'`, `node -e "..."`), whose program the line also yields for the loop checks. Pure
//! functions of the text; `command.rs`, `syntax.rs` and `draft.rs` use them.

use sandbox_protocol::Language;

use super::code_lines::is_name;

/// A name the shell left as it was because it matched no file: it still holds a glob
/// character.
pub(super) fn unmatched_glob(name: &str) -> bool {
    name.contains(['*', '?']) || (name.contains('[') && name.contains(']'))
}

/// The variable (and its value) whose unquoted expansion split into words gave the missing
/// file `missing`: assigned a value with a blank (`f='release notes.txt'`), expanded outside
/// double quotes (`cat $f`), and one of its words starts the missing name or is where it
/// starts (`touch $target/README.md` with `target='my project'` misses `project/README.md`).
pub(super) fn split_variable<'c>(code: &'c str, missing: &str) -> Option<(&'c str, &'c str)> {
    code.lines().find_map(|line| {
        let (name, value) = line.trim().split_once('=')?;
        let name = name.trim_start_matches("export ").trim();
        let value = value.trim().trim_matches(['\'', '"']);
        let words: Vec<&str> = value.split_whitespace().collect();
        let split = is_name(name)
            && words.len() > 1
            && words
                .iter()
                .any(|w| missing == *w || missing.starts_with(&format!("{w}/")))
            && expanded_unquoted(code, name);
        split.then_some((name, value))
    })
}

/// True when `$name` or `${name}` appears outside double quotes somewhere in `code` (a rough
/// reading: quotes are counted on each line).
fn expanded_unquoted(code: &str, name: &str) -> bool {
    code.lines().any(|line| {
        let mut quoted = false;
        let mut single = false;
        let chars: Vec<char> = line.chars().collect();
        for (at, &c) in chars.iter().enumerate() {
            match c {
                '"' if !single => quoted = !quoted,
                '\'' if !quoted => single = !single,
                '$' if !quoted && !single => {
                    let rest: String = chars[at + 1..].iter().collect();
                    let rest = rest.strip_prefix('{').unwrap_or(&rest);
                    let word: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if word == name {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    })
}

/// True when the line pipes file names into `xargs` without `-0` (or `-d`), which splits them
/// at blanks.
pub(super) fn xargs_splits_names(code: &str) -> bool {
    code.split('|').skip(1).any(|stage| {
        let mut words = stage.split_whitespace();
        words.next() == Some("xargs")
            && !words
                .take_while(|w| w.starts_with('-'))
                .any(|w| w.starts_with("-0") || w == "--null" || w.starts_with("-d"))
    })
}

/// A here-doc with an unquoted delimiter whose body has an expansion the shell made, of a name
/// the command line never sets (so it became empty) or of a positional parameter (`$2` in an
/// awk program): the delimiter and the expansion.
pub(super) fn expanded_heredoc(code: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut set: Vec<String> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        remember_assignments(line, &mut set);
        at += 1;
        let Some((_, rest)) = line.split_once("<<") else {
            continue;
        };
        let rest = rest.trim_start_matches('-').trim_start();
        let delimiter: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '|' | '&' | '>' | '<'))
            .collect();
        let bare = delimiter.trim_matches(['\'', '"', '\\']);
        // A word (not `x << 2`, a shift in arithmetic), closed by a line of its own.
        let Some(body_end) = (at..lines.len()).find(|&i| lines[i].trim() == bare) else {
            continue;
        };
        if !bare.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            continue;
        }
        let quoted = delimiter.contains(['\'', '"', '\\']);
        if !quoted
            && let Some(expansion) = lines[at..body_end]
                .iter()
                .find_map(|body| unset_expansion(body, &set))
        {
            return Some((delimiter, expansion));
        }
        at = body_end + 1;
    }
    None
}

/// The names a shell line sets: `NAME=...` (also after `export`), `for NAME in`, `read NAME`.
fn remember_assignments(line: &str, set: &mut Vec<String>) {
    for statement in line.split([';', '&', '|']) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        match words.as_slice() {
            ["for", name, ..] => set.push((*name).to_owned()),
            ["read", names @ ..] => set.extend(
                (names.iter())
                    .filter(|n| !n.starts_with('-'))
                    .map(|n| (*n).to_owned()),
            ),
            [first, ..] => {
                let first = if *first == "export" {
                    words.get(1).copied().unwrap_or_default()
                } else {
                    first
                };
                if let Some((name, _)) = first.split_once('=')
                    && is_name(name)
                {
                    set.push(name.to_owned());
                }
            }
            [] => {}
        }
    }
}

/// The first `$N`, `$NAME` or `${NAME}` in `body` that expands to nothing: a positional
/// parameter, or a name not in `set` (and not one the environment always has).
fn unset_expansion(body: &str, set: &[String]) -> Option<String> {
    const ALWAYS_SET: [&str; 6] = ["HOME", "PWD", "PATH", "USER", "SHELL", "OLDPWD"];
    let chars: Vec<char> = body.chars().collect();
    for (at, &c) in chars.iter().enumerate() {
        if c != '$' || (at > 0 && chars[at - 1] == '\\') {
            continue;
        }
        let rest: String = chars[at + 1..].iter().collect();
        if rest.starts_with('(') {
            continue;
        }
        let braced = rest.starts_with('{');
        let name: String = rest
            .trim_start_matches('{')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let positional = name.len() == 1 && name.chars().all(|c| c.is_ascii_digit() && c != '0');
        let unset = is_name(&name)
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !set.contains(&name)
            && !ALWAYS_SET.contains(&name.as_str());
        if positional || unset {
            return Some(if braced {
                format!("${{{name}}}")
            } else {
                format!("${name}")
            });
        }
    }
    None
}

/// A line of bash's array syntax (`args=(...)`, `args+=(...)`, `${args[...]}`), for a refusal that names arrays.
pub(super) fn bash_array(code: &str) -> Option<&str> {
    code.lines().map(str::trim).find(|line| {
        let assigns_list = line.split_once("=(").is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            is_name(name)
        });
        assigns_list || indexed_expansion(line)
    })
}

/// `${name[1]}`.
fn indexed_expansion(line: &str) -> bool {
    line.match_indices("${").any(|(at, _)| {
        let rest = &line[at + 2..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with('[')
    })
}

/// True when a command line is Python: a line `import NAME`, `from NAME import ...` or
/// `def NAME(...):`, none of which is a shell command.
pub(super) fn is_python(code: &str) -> bool {
    code.lines().map(str::trim).any(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["import", module, ..] => is_module(module.trim_end_matches(',')),
            ["from", module, "import", ..] => is_module(module),
            ["def", signature, ..] => signature.contains('(') && line.contains("):"),
            ["class", name, ..] => {
                is_name(name.trim_end_matches(':').split('(').next().unwrap_or(""))
                    && line.ends_with(':')
            }
            _ => python_call(line),
        }
    })
}

/// A line that is one call with arguments, `print('hello')` or `df.head(3)`: in sh, `name(`
/// only starts a function definition, whose parentheses are empty, so this is code (Python's,
/// unless it is JavaScript's `console.log`).
fn python_call(line: &str) -> bool {
    let Some((callee, args)) = line.split_once('(') else {
        return false;
    };
    let args = args.trim_end().trim_end_matches(';');
    !callee.is_empty()
        && callee.split('.').all(is_name)
        && !callee.starts_with("console.")
        && args.ends_with(')')
        && !args.trim_end_matches(')').trim().is_empty()
}

fn is_module(name: &str) -> bool {
    name.split('.').all(is_name)
}

/// The interpreters whose inline program a command line may carry, with the option that
/// introduces it and the program's language.
const INLINE_PROGRAMS: [(&str, Language); 5] = [
    ("python -c ", Language::Python),
    ("python3 -c ", Language::Python),
    ("node -e ", Language::JavaScript),
    ("node --eval ", Language::JavaScript),
    ("qjs -e ", Language::JavaScript),
];

/// Where the quoted program of `python -c '...'` (or `node -e "..."`) starts, in the line:
/// the option as written, the quote, and the index just after it.
fn inline_start(line: &str) -> Option<(&'static str, char, usize)> {
    INLINE_PROGRAMS.iter().find_map(|(option, _)| {
        let at = line.find(option)?;
        let before = line[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '/' || c == '.') {
            return None;
        }
        let open = at + option.len();
        let quote = line[open..]
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"'))?;
        Some((option.trim_end(), quote, open + 1))
    })
}

/// The program of a command line that runs one inline program, `python -c 'CODE'` or
/// `node -e "CODE"`: the code between its quotes (up to the first closing one) and its
/// language.
pub(super) fn inline_program(line: &str) -> Option<(&str, Language)> {
    let (option, quote, start) = inline_start(line)?;
    let language = INLINE_PROGRAMS
        .iter()
        .find(|(o, _)| o.trim_end() == option)
        .map(|(_, l)| *l)?;
    let end = closing_quote(line, start, quote)?;
    Some((&line[start..end], language))
}

/// The index of the quote that closes a string opened just before `start`: the next `'` for
/// single quotes, the next unescaped `"` for double ones.
fn closing_quote(line: &str, start: usize, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in line[start..].char_indices() {
        match c {
            '\\' if quote == '"' && !escaped => escaped = true,
            c if c == quote && !escaped => return Some(start + i),
            _ => escaped = false,
        }
    }
    None
}

/// An inline program (`python -c '...'`, `node -e "..."`) with its own kind of quote inside:
/// the first inner quote ends the outer quoting in the middle of a word, so the shell passes
/// the text between the inner quotes unquoted. The option as written, the quote and that text
/// (`a` for `python -c 'print({'a': 1})'`, `total:` for `node -e "console.log("total:")"`).
pub(super) fn nested_quotes(line: &str) -> Option<(&'static str, char, &str)> {
    let (option, quote, start) = inline_start(line)?;
    let close = closing_quote(line, start, quote)?;
    let after = line[close + 1..].chars().next()?;
    if after.is_whitespace() || matches!(after, ';' | '|' | '&' | ')' | '>' | '<') {
        return None;
    }
    let inner_start = close + 1;
    let inner_end = line[inner_start..]
        .find(quote)
        .map_or(line.len(), |e| inner_start + e);
    let inner = &line[inner_start..inner_end];
    (!inner.trim().is_empty()).then_some((option, quote, inner))
}

/// Whether a command line starts a background job: a `&` that ends a list, outside quotes and
/// comments, and not part of `&&`, `>&`, `<&`, `&>` or `|&`.
pub(super) fn starts_background_job(line: &str) -> bool {
    let bytes = line.as_bytes();
    let (mut single, mut double, mut comment) = (false, false, false);
    let mut escaped = false;
    for (at, &b) in bytes.iter().enumerate() {
        if comment {
            comment = b != b'\n';
            continue;
        }
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' if !single => escaped = true,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && (at == 0 || bytes[at - 1].is_ascii_whitespace()) => {
                comment = true;
            }
            b'&' if !single && !double => {
                let before = at.checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(at + 1).copied();
                let joined = matches!(before, Some(b'&' | b'>' | b'<' | b'|'))
                    || matches!(after, Some(b'&' | b'>'));
                if !joined {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// How many files a command line creates one by one, when it is many (1,000 or more): a
/// brace range in a command that creates files (`touch part_{1..25000}.csv`), or a counted
/// loop whose body writes a file (`for i in $(seq 1 30000); do echo $i > f_$i.txt; done`).
pub(super) fn many_files(line: &str) -> Option<u64> {
    const MANY: u64 = 1_000;
    let creates = ["touch ", "mkdir ", "> ", ">", "cp ", "tee "]
        .iter()
        .any(|w| line.contains(w));
    if !creates {
        return None;
    }
    let range = |text: &str| -> Option<u64> {
        let (a, b) = text.split_once("..")?;
        let a: u64 = a.trim().parse().ok()?;
        let b: u64 = b.trim().parse().ok()?;
        b.checked_sub(a).map(|n| n + 1)
    };
    // `{1..25000}`
    let braces = line.match_indices('{').find_map(|(at, _)| {
        let inner = line[at + 1..].split('}').next()?;
        range(inner)
    });
    // `$(seq 1 30000)` or `$(seq 30000)` in a `for` loop.
    let seq = line.split("$(seq ").nth(1).and_then(|rest| {
        let args: Vec<u64> = rest
            .split(')')
            .next()?
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        match args.as_slice() {
            [n] => Some(*n),
            [a, b] => b.checked_sub(*a).map(|n| n + 1),
            _ => None,
        }
    });
    braces.or(seq).filter(|n| *n >= MANY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_jobs_are_a_lone_ampersand_outside_quotes() {
        for line in [
            "python server.py &",
            "nohup python w.py > log 2>&1 &\necho started",
            "for f in *; do gzip \"$f\" & done; wait",
            "a & b",
        ] {
            assert!(starts_background_job(line), "{line}");
        }
        for line in [
            "a && b",
            "cmd > out 2>&1",
            "cmd &> out",
            "cmd |& tee log",
            "cmd 0<&3",
            "echo 'a & b' \"c & d\" e\\&f",
            "ls # a comment & more",
        ] {
            assert!(!starts_background_job(line), "{line}");
        }
    }

    #[test]
    fn inline_programs_and_their_nested_quotes() {
        let line = "yes | python -c 'while True: pass'";
        assert_eq!(
            inline_program(line),
            Some(("while True: pass", Language::Python))
        );
        assert_eq!(
            inline_program("node -e \"console.log(\\\"hi\\\")\" && ls").map(|p| p.1),
            Some(Language::JavaScript)
        );
        assert_eq!(inline_program("mypython -c 'x'"), None);
        assert_eq!(
            nested_quotes("python -c 'import json; print(json.dumps({'k': 1}))'"),
            Some(("python -c", '\'', "k"))
        );
        assert_eq!(
            nested_quotes("python3 -c 'print('hello world')'"),
            Some(("python3 -c", '\'', "hello world"))
        );
        assert_eq!(nested_quotes("python -c 'print(1)' > out.txt"), None);
        assert_eq!(nested_quotes("python -c 'print(1)'"), None);
        assert_eq!(nested_quotes("python -c \"print('a')\""), None);
        assert_eq!(
            nested_quotes("node -e \"console.log(\"total:\", 3 + 4)\""),
            Some(("node -e", '"', "total:"))
        );
        assert_eq!(nested_quotes("node -e \"console.log(\\\"a\\\")\""), None);
    }

    #[test]
    fn globs_that_matched_nothing() {
        assert!(unmatched_glob("*.log"));
        assert!(unmatched_glob("data/2024-??.csv"));
        assert!(!unmatched_glob("notes.txt"));
    }

    #[test]
    fn variables_split_at_their_blanks() {
        let cat = "f='release notes.txt'\nprintf 'v1\\n' > \"$f\"\ncat $f";
        assert_eq!(
            split_variable(cat, "release"),
            Some(("f", "release notes.txt"))
        );
        let touch = "target='my project'\nmkdir -p \"$target\"\ntouch $target/README.md";
        assert_eq!(
            split_variable(touch, "project/README.md"),
            Some(("target", "my project"))
        );
        // Quoted everywhere: the shell split nothing.
        let quoted = "f='release notes.txt'\ncat \"$f\"";
        assert_eq!(split_variable(quoted, "release"), None);
        assert_eq!(split_variable("cat release", "release"), None);
    }

    #[test]
    fn xargs_without_null_separators() {
        assert!(xargs_splits_names("find docs -name '*.txt' | xargs wc -l"));
        assert!(!xargs_splits_names("find docs -print0 | xargs -0 wc -l"));
        assert!(!xargs_splits_names("cat list | grep x"));
    }

    #[test]
    fn here_docs_whose_body_the_shell_expanded() {
        let awk = "cat > sum.awk <<EOF\n{ sum += $2 } END { print sum }\nEOF\nawk -f sum.awk d";
        assert_eq!(expanded_heredoc(awk), Some(("EOF".into(), "$2".into())));
        let python = "python - <<EOF\nt = 'hello ${name}'\nEOF";
        assert_eq!(
            expanded_heredoc(python),
            Some(("EOF".into(), "${name}".into()))
        );
        // Quoted delimiter, or a variable the line sets: the expansion is what was meant.
        assert_eq!(expanded_heredoc("cat <<'EOF'\n$2\nEOF"), None);
        assert_eq!(
            expanded_heredoc("n=3\ncat <<EOF\nn is $n, home $HOME\nEOF"),
            None
        );
        assert_eq!(
            expanded_heredoc("for f in a b; do cat <<EOF\n$f\nEOF\ndone"),
            None
        );
    }

    #[test]
    fn bash_arrays() {
        assert!(bash_array("args=()\nargs+=(--verbose)\necho \"${args[@]}\"").is_some());
        assert!(bash_array("parts=($(echo a b))\necho ${parts[1]}").is_some());
        assert!(bash_array("x=$(ls)\necho ${x}").is_none());
        assert!(bash_array("echo $((1 + 2))").is_none());
    }

    #[test]
    fn python_sent_as_a_command_line() {
        assert!(is_python("import json\nprint(json.dumps({'ok': True}))"));
        assert!(is_python(
            "import pandas as pd\ndf = pd.read_csv('data.csv')"
        ));
        assert!(is_python("from pathlib import Path\nPath('x').touch()"));
        assert!(!is_python("ls -la && echo import"));
        // A call with arguments, a def with its body on the line, a class header.
        assert!(is_python("print('hello')"));
        assert!(is_python("def f(x): return x * 2"));
        assert!(is_python("class Point:"));
        // sh's own function definition, and JavaScript's console.
        assert!(!is_python("greet() { echo hi; }"));
        assert!(!is_python("console.log('x')"));
        assert!(!is_python("echo $(date)"));
    }

    #[test]
    fn lines_that_create_many_files() {
        assert_eq!(
            many_files("mkdir -p shards && cd shards && touch part_{1..25000}.csv"),
            Some(25000)
        );
        assert_eq!(
            many_files("for i in $(seq 1 30000); do echo $i > out/f_$i.txt; done"),
            Some(30000)
        );
        assert_eq!(many_files("touch a_{1..10}.txt"), None);
        assert_eq!(
            many_files("for i in $(seq 1 30000); do echo $i; done"),
            None
        );
    }
}
