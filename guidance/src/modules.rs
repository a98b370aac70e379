//! What the guidance knows about modules beyond their import cost: which Python modules cannot
//! work under WASI, which packages are native (C/Rust extensions that cannot load in a WASM
//! interpreter), which need a network, what a module is called on PyPI, and which Node.js
//! built-ins a JavaScript snippet may reach for.
//!
//! The stdlib facts were checked against the sandbox's CPython 3.15 build (the `import` of each
//! was tried in a fresh session, 2026-11-27); the package facts are about how the packages are
//! built.

/// Stdlib modules that do not import in this CPython build, with what to do instead.
const MISSING_STDLIB: &[(&str, &str)] = &[
    (
        "ssl",
        "there is no network in the sandbox, so TLS is never needed; for hashing use hashlib/hmac",
    ),
    (
        "_ssl",
        "there is no network in the sandbox; for hashing use hashlib/hmac",
    ),
    (
        "tkinter",
        "there is no display; write output files (CSV, SVG, HTML) under /app instead",
    ),
    (
        "turtle",
        "there is no display; draw by writing an SVG file under /app",
    ),
    (
        "readline",
        "there is no terminal; input() raises EOFError, pass data in code or files",
    ),
    ("curses", "there is no terminal; print plain text"),
    ("_curses", "there is no terminal; print plain text"),
    (
        "mmap",
        "read the file in chunks with open(path, 'rb').read(n)",
    ),
    ("termios", "there is no terminal"),
    ("tty", "there is no terminal"),
    ("pty", "there is no terminal and no processes"),
    (
        "fcntl",
        "file locking is not needed: one execution runs at a time per session",
    ),
    ("grp", "there are no users or groups in the sandbox"),
    ("pwd", "there are no users in the sandbox; work under /app"),
    (
        "resource",
        "limits are set by the sandbox (fuel, memory, timeout), not by the process",
    ),
    (
        "webbrowser",
        "there is no browser; write an HTML file under /app",
    ),
    (
        "venv",
        "packages come from /data/site-packages or install_package",
    ),
    (
        "ensurepip",
        "pip does not run in the sandbox; use the install_package tool",
    ),
    (
        "pip",
        "pip does not run in the sandbox; use the install_package tool",
    ),
];

/// Stdlib modules that import but whose main purpose cannot work in the sandbox.
const LIMITED_STDLIB: &[(&str, &str)] = &[
    (
        "ctypes",
        "imports, but no native library can be loaded in WebAssembly; use a pure-Python approach",
    ),
    (
        "multiprocessing",
        "imports, but no process can start: run the work sequentially (split long jobs across several execute_code calls)",
    ),
    (
        "subprocess",
        "imports, but every process call fails with OSError: WASI has no processes",
    ),
    (
        "socket",
        "imports, but there is no network (socket.getaddrinfo does not exist)",
    ),
    (
        "threading",
        "imports, but Thread.start() fails with RuntimeError: can't start new thread",
    ),
    (
        "concurrent.futures",
        "imports, but executors cannot start threads or processes",
    ),
    (
        "urllib.request",
        "imports, but there is no network: urlopen fails",
    ),
    ("http.client", "imports, but there is no network"),
    (
        "http.server",
        "imports, but no server can listen: there is no network",
    ),
    ("socketserver", "imports, but there is no network"),
    ("ftplib", "imports, but there is no network"),
    ("smtplib", "imports, but there is no network"),
    ("imaplib", "imports, but there is no network"),
    ("poplib", "imports, but there is no network"),
    ("xmlrpc.client", "imports, but there is no network"),
    ("asyncio.subprocess", "imports, but there are no processes"),
];

/// Packages with native extensions: they cannot be installed or loaded in the WASM interpreter.
/// (import name, PyPI name, what to use instead)
const NATIVE_PACKAGES: &[(&str, &str, &str)] = &[
    (
        "numpy",
        "numpy",
        "plain lists with math/statistics, the array module for compact numeric arrays, fractions/decimal for exact arithmetic",
    ),
    (
        "pandas",
        "pandas",
        "csv.DictReader + collections (Counter, defaultdict) + statistics; sqlite3 (in-memory) for grouping, joins and aggregates",
    ),
    (
        "scipy",
        "scipy",
        "math, statistics (mean, stdev, correlation, linear_regression, NormalDist) and plain Python",
    ),
    (
        "sklearn",
        "scikit-learn",
        "a small pure-Python implementation (e.g. least squares via statistics.linear_regression, k-means by hand)",
    ),
    (
        "torch",
        "torch",
        "no deep-learning framework runs here; do the maths in plain Python on small data",
    ),
    (
        "tensorflow",
        "tensorflow",
        "no deep-learning framework runs here",
    ),
    ("keras", "keras", "no deep-learning framework runs here"),
    ("jax", "jax", "no deep-learning framework runs here"),
    (
        "PIL",
        "pillow",
        "no image library loads here; pure-Python PNG writing (zlib + struct) or SVG text files work",
    ),
    (
        "cv2",
        "opencv-python",
        "no image processing library loads here",
    ),
    (
        "skimage",
        "scikit-image",
        "no image processing library loads here",
    ),
    (
        "matplotlib",
        "matplotlib",
        "write an SVG chart as text, or save the data as CSV/JSON under /app for the client to plot",
    ),
    (
        "seaborn",
        "seaborn",
        "write an SVG chart as text, or save the data as CSV/JSON under /app",
    ),
    (
        "lxml",
        "lxml",
        "xml.etree.ElementTree, xml.dom.minidom or html.parser (stdlib)",
    ),
    (
        "cryptography",
        "cryptography",
        "hashlib, hmac and secrets (stdlib)",
    ),
    (
        "Crypto",
        "pycryptodome",
        "hashlib, hmac and secrets (stdlib)",
    ),
    ("nacl", "PyNaCl", "hashlib, hmac and secrets (stdlib)"),
    (
        "bcrypt",
        "bcrypt",
        "hashlib.pbkdf2_hmac or hashlib.scrypt (stdlib)",
    ),
    ("orjson", "orjson", "the json module (stdlib)"),
    ("ujson", "ujson", "the json module (stdlib)"),
    (
        "pydantic_core",
        "pydantic-core",
        "dataclasses with manual validation",
    ),
    (
        "pydantic",
        "pydantic",
        "dataclasses with manual validation (pydantic 2 needs the native pydantic-core)",
    ),
    (
        "polars",
        "polars",
        "csv + collections + statistics, or sqlite3 in memory",
    ),
    ("pyarrow", "pyarrow", "csv or json files"),
    ("h5py", "h5py", "json, csv or sqlite3 files"),
    ("numba", "numba", "plain Python (and a larger fuel budget)"),
    (
        "psutil",
        "psutil",
        "nothing to inspect: the sandbox has no processes",
    ),
    (
        "psycopg2",
        "psycopg2-binary",
        "sqlite3 (stdlib); there is no network to reach a database server",
    ),
    (
        "MySQLdb",
        "mysqlclient",
        "sqlite3 (stdlib); there is no network to reach a database server",
    ),
    (
        "fitz",
        "PyMuPDF",
        "a pure-Python PDF library such as pypdf, if available",
    ),
    ("tiktoken", "tiktoken", "estimate tokens as len(text) / 4"),
    ("tokenizers", "tokenizers", "simple splitting with re"),
    ("regex", "regex", "the re module (stdlib)"),
    (
        "Levenshtein",
        "python-Levenshtein",
        "difflib.SequenceMatcher (stdlib) or a short pure-Python edit distance",
    ),
    (
        "rapidfuzz",
        "rapidfuzz",
        "difflib.SequenceMatcher / difflib.get_close_matches (stdlib)",
    ),
    ("shapely", "shapely", "plain geometry in Python with math"),
    (
        "statsmodels",
        "statsmodels",
        "statistics (stdlib) and plain Python",
    ),
    ("xgboost", "xgboost", "no boosting library runs here"),
    ("lightgbm", "lightgbm", "no boosting library runs here"),
    (
        "greenlet",
        "greenlet",
        "asyncio (stdlib) for cooperative tasks",
    ),
    ("gevent", "gevent", "asyncio (stdlib) for cooperative tasks"),
    ("zmq", "pyzmq", "there is no network"),
    ("grpc", "grpcio", "there is no network"),
    (
        "magic",
        "python-magic",
        "mimetypes (stdlib) from the file name",
    ),
];

/// Pure-Python packages that only talk to the network: installable perhaps, useless here.
const NETWORK_PACKAGES: &[&str] = &[
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "websocket",
    "websockets",
    "paramiko",
    "boto3",
    "botocore",
    "openai",
    "anthropic",
    "redis",
    "pymongo",
    "pymysql",
    "httplib2",
    "tweepy",
    "slack_sdk",
    "telegram",
    "discord",
    "selenium",
    "scrapy",
    "ftputil",
    "grequests",
];

/// Import name → PyPI distribution, where they differ.
const PYPI_NAMES: &[(&str, &str)] = &[
    ("yaml", "pyyaml"),
    ("bs4", "beautifulsoup4"),
    ("dateutil", "python-dateutil"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("attr", "attrs"),
    ("dotenv", "python-dotenv"),
    ("jwt", "PyJWT"),
    ("slugify", "python-slugify"),
    ("more_itertools", "more-itertools"),
    ("serial", "pyserial"),
    ("google.protobuf", "protobuf"),
    ("jose", "python-jose"),
    ("multipart", "python-multipart"),
    ("pkg_resources", "setuptools"),
    ("xlsxwriter", "XlsxWriter"),
    ("markdown", "Markdown"),
    ("jinja2", "Jinja2"),
    ("markupsafe", "MarkupSafe"),
    ("unidecode", "Unidecode"),
    ("faker", "Faker"),
    ("usb", "pyusb"),
    ("OpenSSL", "pyOpenSSL"),
    ("socks", "PySocks"),
    ("websocket", "websocket-client"),
    ("typing_extensions", "typing-extensions"),
    ("PyPDF2", "PyPDF2"),
    ("pypdf", "pypdf"),
    ("tomli_w", "tomli-w"),
    ("sqlalchemy", "SQLAlchemy"),
    ("mpl_toolkits", "matplotlib"),
    ("win32api", "pywin32"),
    ("odf", "odfpy"),
    ("Bio", "biopython"),
];

/// Node.js built-in modules a snippet may `require`, with the sandbox's equivalent.
const NODE_BUILTINS: &[(&str, &str)] = &[
    (
        "fs",
        "the globals readText/writeText/readJson/writeJson/fileExists/listFiles, or QuickJS std.open/std.loadFile and os.readdir/os.stat",
    ),
    (
        "fs/promises",
        "the synchronous helpers readText/writeText/readJson/writeJson",
    ),
    (
        "path",
        "string operations: `${dir}/${name}`, name.split('/').pop(), name.slice(name.lastIndexOf('.'))",
    ),
    ("child_process", "nothing: the sandbox has no processes"),
    ("http", "nothing: the sandbox has no network"),
    ("https", "nothing: the sandbox has no network"),
    ("net", "nothing: the sandbox has no network"),
    (
        "os",
        "the QuickJS global `os` (os.readdir, os.stat, os.getcwd, ...), already loaded",
    ),
    (
        "crypto",
        "no crypto module; check list_available_packages {language: \"javascript\"}",
    ),
    (
        "util",
        "JSON.stringify for inspection, template literals for formatting",
    ),
    (
        "events",
        "a small hand-written emitter (an object of arrays of callbacks)",
    ),
    (
        "stream",
        "read the whole file with readText and process it line by line",
    ),
    ("zlib", "no compression module in QuickJS"),
    ("buffer", "Uint8Array and ArrayBuffer for bytes"),
    (
        "process",
        "nothing: there is no process object; configuration goes in code or files under /app",
    ),
];

/// Why a stdlib module is missing and what to use, when it is.
pub(crate) fn missing_stdlib(module: &str) -> Option<&'static str> {
    let top = top_level(module);
    MISSING_STDLIB
        .iter()
        .find(|(name, _)| *name == module || *name == top)
        .map(|(_, why)| *why)
}

/// How a module that imports is still limited in the sandbox.
pub(crate) fn limited_stdlib(module: &str) -> Option<&'static str> {
    LIMITED_STDLIB
        .iter()
        .find(|(name, _)| *name == module || (*name == top_level(module) && !name.contains('.')))
        .map(|(_, why)| *why)
}

/// (PyPI name, alternatives) of a native package.
pub(crate) fn native_package(module: &str) -> Option<(&'static str, &'static str)> {
    let top = top_level(module);
    NATIVE_PACKAGES
        .iter()
        .find(|(name, _, _)| *name == top)
        .map(|(_, dist, alt)| (*dist, *alt))
}

/// What to use instead of a native package named by its import name (`sklearn`) or its
/// distribution name as installers write it (`scikit-learn`, `Scikit_Learn`).
pub(crate) fn native_alternative(name: &str) -> Option<&'static str> {
    let normal = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    let wanted = normal(name);
    native_package(name).map(|(_, alt)| alt).or_else(|| {
        NATIVE_PACKAGES
            .iter()
            .find(|(_, dist, _)| normal(dist) == wanted)
            .map(|(_, _, alt)| *alt)
    })
}

/// True for client libraries whose only job is the network, which the sandbox does not have.
pub(crate) fn network_package(module: &str) -> bool {
    NETWORK_PACKAGES.contains(&top_level(module))
}

/// The PyPI name for an import name: the known mapping, else the name with `_` as `-`.
pub(crate) fn pypi_name(module: &str) -> String {
    if let Some((_, dist)) = PYPI_NAMES
        .iter()
        .find(|(name, _)| *name == module)
        .or_else(|| {
            PYPI_NAMES
                .iter()
                .find(|(name, _)| *name == top_level(module))
        })
    {
        return (*dist).to_owned();
    }
    if let Some((dist, _)) = native_package(module) {
        return dist.to_owned();
    }
    top_level(module).replace('_', "-")
}

/// The sandbox equivalent of a Node.js built-in, when `name` is one (`node:fs` too).
pub(crate) fn node_builtin(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix("node:").unwrap_or(name);
    NODE_BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, alt)| *alt)
}

fn top_level(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pypi_names_map_common_imports() {
        assert_eq!(pypi_name("yaml"), "pyyaml");
        assert_eq!(pypi_name("bs4"), "beautifulsoup4");
        assert_eq!(pypi_name("PIL"), "pillow");
        assert_eq!(pypi_name("PIL.Image"), "pillow");
        assert_eq!(pypi_name("sklearn"), "scikit-learn");
        assert_eq!(pypi_name("google.protobuf"), "protobuf");
        assert_eq!(pypi_name("more_itertools"), "more-itertools");
        assert_eq!(pypi_name("tabulate"), "tabulate");
    }

    #[test]
    fn module_classes() {
        assert!(missing_stdlib("ssl").is_some());
        assert!(missing_stdlib("_curses").is_some());
        assert!(missing_stdlib("tkinter.ttk").is_some());
        assert!(missing_stdlib("lzma").is_none(), "CPython 3.15 has it");
        assert!(limited_stdlib("multiprocessing").is_some());
        assert!(missing_stdlib("json").is_none());
        assert!(limited_stdlib("subprocess").is_some());
        assert!(limited_stdlib("urllib.request").is_some());
        assert!(limited_stdlib("urllib.parse").is_none());
        assert!(native_package("numpy.linalg").is_some());
        assert!(native_package("yaml").is_none());
        assert!(network_package("requests"));
        assert!(node_builtin("node:fs").is_some());
        assert!(node_builtin("lodash").is_none());
        for (name, found) in [
            ("numpy", true),
            ("sklearn", true),
            ("scikit-learn", true),
            ("Scikit_Learn", true),
            ("PIL.Image", true),
            ("tabulate", false),
        ] {
            assert_eq!(native_alternative(name).is_some(), found, "{name}");
        }
    }
}
