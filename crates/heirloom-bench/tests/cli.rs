//! The `heirloom` command: bad arguments get one line on stderr and exit
//! status 2; a tiny verified run writes JSON of the documented shape.

use std::process::Command;
use std::sync::Mutex;

/// One `heirloom` process at a time. The harness runs two tests at once,
/// and these tests assert that timed runs of 0.05-0.1 s commit work: with
/// another run's workers on both cores, the message-passing table serves
/// a message per scheduling round (milliseconds) and may commit nothing in
/// that time (measured: ycsb on `server:2`, 4 workers beside 4 busy
/// threads on 2 cores, 16 txn/s against 14k alone).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn heirloom(args: &[&str]) -> std::process::Output {
    // A test that failed while holding the lock poisons it; the next still
    // runs alone.
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Command::new(env!("CARGO_BIN_EXE_heirloom"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let cases: &[&[&str]] = &[
        &["bench", "--workload", "tpcc9"],
        &["bench", "--threads", ""],
        &["bench", "--threads", "0"],
        &["bench", "--threads", "two"],
        &["bench", "--duration", "0"],
        &["bench", "--duration", "nan"],
        &["bench", "--warmup", "-1"],
        &["bench", "--stuck-after", "0"],
        &["bench", "--stuck-after", "never"],
        &["bench", "--scale", "0"],
        &["bench", "--workload", "ycsb", "--scale", "999999999999"],
        &["bench", "--table", "hashed"],
        &["bench", "--sli", "maybe"],
        &["bench", "--fast-path", "maybe"],
        &["bench", "--buckets", "0"],
        &["bench", "--buckets", "16777217"],
        &["bench", "--buckets", "many"],
        &["bench", "--cores", "0"],
        &["bench", "--cores", "4097"],
        &["bench", "--cores", "all"],
        &["bench", "--policy", "wait-forever"],
        &[
            "bench",
            "--mix",
            "no-such-mix",
            "--scale",
            "10",
            "--duration",
            "0.01",
            "--warmup",
            "0",
        ],
        &["bench", "--workload", "ycsb", "--read-share", "1.5"],
        &["bench", "--plot", "out.gif"],
        &["bench", "--repeat", "0"],
        &["bench", "--workload", "tpcc", "--tpcc-shrink", "0"],
        &["bench", "--workload", "ycsb", "--opt", "theta=10"],
        &["bench", "--workload", "tpcb", "--opt", "accounts=many"],
        &["bench", "--opt", "no-such-option=1"],
        &["bench", "--workload", "tpcb", "--theta", "0.5"],
        &["bench", "--workload", "tpcc", "--scale", "5000"],
        &["bench", "--workload", "tpcc", "--scale", "1/threads"],
        &["bench", "--workload", "tpcc", "--scale", "0/thread"],
        &["bench", "--workload", "ycsb", "--opt", "index=skiplist"],
        &["bench", "--workload", "ycsb", "--opt", "rmw=x"],
        &["figures", "--only", "no-such-figure"],
        &["bench", "--workload", "tm1", "--profile", "dbx1000"],
        &["bench", "--workload", "ycsb", "--profile", "postgres"],
        &["bench", "--retry", "later"],
        &["bench", "--pregen", "99999999"],
        &["bench", "--pregen", "65536", "--threads", "1,64"],
        &["bench", "--pregen", "-1"],
        &["bench", "--table", "server:0"],
        &["bench", "--exclusive-after", "soon"],
        &["bench", "--exclusive-after", "-1"],
        &["bench", "--workload", "tm", "--opt", "locks=mutex"],
        &["bench", "--workload", "tm", "--scale", "4"],
        &["bench", "--workload", "range", "--scale", "10"],
        &["bench", "--workload", "hotspot", "--opt", "hot-share=2"],
        &["bench", "--table", "server:65"],
        &["bench", "--workload", "batch", "--scale", "100001"],
        &["bench", "--workload", "nullcs", "--opt", "sections=0"],
        &["bench", "--workload", "batch", "--opt", "mode=six"],
        &["bench", "--sli-keep", "256"],
        &["bench", "--sli-keep", "some"],
        &["bench", "--lock-timeout", "0"],
        &["bench", "--lock-timeout", "-1"],
        &["bench", "--lock-timeout", "soon"],
        // No locking where transactions can conflict.
        &["bench", "--table", "none", "--threads", "1,2"],
        &["bench", "--workload", "ycsb", "--table", "none", "--threads", "2"],
        &["bench", "--workload", "batch", "--table", "none", "--threads", "2"],
        &["bench", "--no-such-flag"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = heirloom(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(err.starts_with("heirloom: "), "{args:?}: {err}");
    }
}

#[test]
fn tiny_verified_run_writes_json_csv_and_plot() {
    let dir = std::env::temp_dir().join(format!("heirloom-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, csv, svg) = (dir.join("r.json"), dir.join("r.csv"), dir.join("r.svg"));
    let out = heirloom(&[
        "bench",
        "--workload",
        "tpcb",
        "--scale",
        "2",
        "--accounts",
        "100",
        "--threads",
        "1,2",
        "--sli",
        "off,on",
        "--duration",
        "0.05",
        "--warmup",
        "0",
        "--verify",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verified after"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The machine the runs were taken on, in the JSON as in the header.
    let machine = &doc["machine"];
    let cpu = machine["cpu"].as_str().expect("the CPU model");
    assert!(
        !cpu.is_empty() && machine["cores"].as_u64().is_some_and(|n| n >= 1),
        "{machine}"
    );
    assert!(machine["rtm"].is_boolean(), "{machine}");
    let header = stdout.lines().next().unwrap_or("");
    assert!(header.contains(cpu) && header.contains(" cores, "), "{header}");
    let runs = doc["runs"].as_array().expect("runs array");
    assert_eq!(runs.len(), 4);
    for r in runs {
        for k in [
            "workload",
            "mix",
            "table",
            "sli",
            "policy",
            "threads",
            "seconds",
            "committed",
            "failed",
            "aborted",
            "restarts",
            "nodes_allocated",
            "reclaim_helps",
            "tps",
        ] {
            assert!(!r[k].is_null(), "missing {k} in {r}");
        }
        assert!(r["sli"].is_boolean());
        assert!(r["latency_us"]["p50"].is_number() && r["latency_us"]["p99"].is_number());
        for k in [
            "table_ops",
            "latch_contended",
            "inherited_used",
            "inherited_discarded",
            "inherited_invalidated",
        ] {
            assert!(r["per_txn"][k].is_number(), "missing per_txn.{k}");
        }
        assert!(r["counters"].is_null(), "counters only with --counters: {r}");
    }
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        5,
        "header + 4 rows"
    );
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg_text.contains("<svg") && svg_text.contains("worker threads"),
        "axis label in plot"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--counters` counts each worker over the measured interval only: with
/// a load of 200,000 subscribers (about 2.5 billion instructions) and a
/// warm-up four times the measured interval, a count that took in either
/// would be several times TM1's few thousand instructions per transaction.
/// A machine without counters must refuse in one line with status 2.
#[test]
fn counters_count_the_measured_interval_or_refuse_in_one_line() {
    let dir = std::env::temp_dir().join(format!("heirloom-cli-ctr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
    let out = heirloom(&[
        "bench",
        "--workload",
        "tm1",
        "--scale",
        "200000",
        "--threads",
        "1,2",
        "--sli",
        "off",
        "--duration",
        "0.1",
        "--warmup",
        "0.4",
        "--counters",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("heirloom: --counters: "), "{stderr}");
        eprintln!("no hardware counters here; checked the refusal only");
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("# counters: ") && stdout.contains("instr/tx"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cores = doc["machine"]["cores"].as_f64().unwrap();
    for r in doc["runs"].as_array().unwrap() {
        let c = &r["counters"];
        let n = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("counters.{k} in {r}"));
        assert!((500.0..10_000.0).contains(&n("instructions")), "{c}");
        assert!(n("cycles") > 0.0 && n("ipc") > 0.0 && n("cpu_us") > 0.0, "{c}");
        assert!(n("cpus") > 0.0 && n("cpus") <= cores + 0.5, "{c}");
        assert!(
            n("voluntary_switches") >= 0.0 && n("involuntary_switches") >= 0.0,
            "{c}"
        );
        assert!(c["kernel"].is_boolean(), "{c}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let col = rows.headers().unwrap().iter().position(|h| h == "instructions_per_txn");
    let col = col.expect("an instructions_per_txn column");
    for row in rows.records() {
        assert!(row.unwrap()[col].parse::<f64>().is_ok_and(|x| x > 0.0), "{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--sharing`: in a build with heirloom's instrument, every run reports
/// the lock manager's line writes per transaction and where the shared
/// ones are; one worker shares next to nothing; without the instrument,
/// one line and status 2.
#[test]
fn sharing_counts_lines_or_refuses_in_one_line() {
    let dir = std::env::temp_dir().join(format!("heirloom-cli-shr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let out = heirloom(&[
        "bench",
        "--workload",
        "ycsb",
        "--scale",
        "20000",
        "--opt",
        "read-share=1",
        "--threads",
        "1,2",
        "--table",
        "latched,latchfree",
        "--sli",
        "off",
        "--fast-rows",
        "on,off",
        "--duration",
        "0.1",
        "--warmup",
        "0.02",
        "--sharing",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !heirloom::sharing::ENABLED {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("heirloom: --sharing: "), "{stderr}");
        assert!(stderr.contains("--features sharing"), "{stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("shared/tx") && stdout.contains("# sharing, latched"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for r in doc["runs"].as_array().unwrap() {
        let s = &r["sharing"];
        let n = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("sharing.{k} in {r}"));
        assert!(n("line_writes") > 0.0, "{s}");
        assert!(
            n("recent_shared_line_writes") <= n("shared_line_writes"),
            "recent writes are a part of the shared ones: {s}"
        );
        if r["threads"].as_u64() == Some(1) {
            // Each run forgets the lines' last writers before it starts
            // (`heirloom::sharing::forget_writers`): one worker's first
            // writes of memory an earlier run's threads or the setup
            // wrote are not shared.
            assert!(
                n("shared_line_writes") < 0.01 * n("line_writes"),
                "one worker shares next to nothing: {s}"
            );
        }
        if r["table"] == "latchfree/rows-off" {
            assert!(n("pins") > 0.0, "{s}");
        }
        if r["table"] == "latchfree" || r["table"] == "latched" {
            // Read-only: every row S lock is a fast hold, which pins
            // nothing and writes only its agent's lines (an agent's first
            // fast hold notes it once in a shared high-water mark).
            assert_eq!(n("pins"), 0.0, "{s}");
            assert!(n("shared_line_writes") < 0.01 * n("line_writes"), "{s}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn list_names_every_benchmark_and_old_flags_still_work() {
    let out = heirloom(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for b in heirloom_bench::REGISTRY {
        assert!(text.contains(&format!("{}: ", b.name())), "{text}");
        for o in b.options() {
            assert!(text.contains(&format!("--opt {}=", o.name)), "{text}");
        }
    }
    // An option another benchmark declares is an error, not ignored.
    let out = heirloom(&["bench", "--workload", "tm1", "--theta", "0.9", "--scale", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tm1 has no option \"theta\""), "{err}");
    // The old flag and --opt give the same header.
    let run = |args: &[&str]| {
        let mut all = vec![
            "bench",
            "--workload",
            "ycsb",
            "--scale",
            "100",
            "--threads",
            "1",
            "--sli",
            "off",
        ];
        all.extend_from_slice(&["--duration", "0.01", "--warmup", "0"]);
        all.extend_from_slice(args);
        let out = heirloom(&all);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let old = run(&["--theta", "0.5", "--read-share=0.25"]);
    let new = run(&["--opt", "theta=0.5", "--opt", "read-share=0.25"]);
    assert_eq!(old, new);
    assert!(new.contains("theta=0.5 read-share=0.25"), "{new}");
}

#[test]
fn the_dbx1000_profile_sets_what_the_command_line_leaves_open() {
    let out = heirloom(&[
        "bench",
        "--workload",
        "ycsb",
        "--profile",
        "dbx1000",
        "--scale",
        "2000",
        "--opt",
        "theta=0.5",
        "--threads",
        "1",
        "--duration",
        "0.02",
        "--warmup",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let header = text.lines().next().unwrap_or("");
    // Given flags win (scale, theta); the profile fills the rest.
    assert!(header.contains("scale 2000 rows"), "{header}");
    assert!(
        header.contains("theta=0.5 read-share=0.5") && header.contains("index=hash"),
        "{header}"
    );
    for policy in ["nowait", "waitdie", "detect"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("latched   off  ") && l.contains(policy)),
            "{text}"
        );
    }
    assert!(
        !text.lines().any(|l| l.starts_with("latched   on ")),
        "no SLI runs: {text}"
    );
    // It defers aborted transactions and draws inputs first, and says so.
    assert!(text.lines().any(|l| l.starts_with("# retry defer")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("# pregen 32768")), "{text}");

    // TPC-C's profile: DBx1000's work (no inserts), unless given back.
    for (extra, inserts) in [(None, "inserts=false"), (Some("inserts=true"), "inserts=true")] {
        let mut args = vec![
            "bench",
            "--workload",
            "tpcc",
            "--profile",
            "dbx1000",
            "--opt",
            "shrink=100",
            "--threads",
            "1",
            "--duration",
            "0.02",
            "--warmup",
            "0",
            "--verify",
        ];
        if let Some(e) = extra {
            args.extend(["--opt", e]);
        }
        let out = heirloom(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let header = text.lines().next().unwrap_or("");
        assert!(header.contains(inserts) && header.contains("index=hash"), "{header}");
        assert!(header.contains("mix pay-new"), "{header}");
    }
}

#[test]
fn micro_benchmarks_report_their_operation_on_the_server_too() {
    let dir = std::env::temp_dir().join(format!("heirloom-micro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("m.json");
    let csv = dir.join("m.csv");
    let out = heirloom(&[
        "bench",
        "--workload",
        "batch",
        "--scale",
        "20",
        "--threads",
        "1,2",
        "--table",
        "latched,server:2",
        "--sli",
        "off",
        "--duration",
        "0.05",
        "--warmup",
        "0",
        "--verify",
        "--breakdown",
        "--classes",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ns/op") && text.contains("msg/tx"), "{text}");
    assert!(text.contains("lock classes per txn"), "{text}");
    assert!(text.contains("server:2"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        assert_eq!(r["op"]["name"], "lock");
        assert_eq!(r["op"]["per_txn"], 20.0);
        assert!(r["op"]["ns"].as_f64().unwrap() > 0.0);
        let classes = &r["per_txn"]["classes"];
        let rows = classes["row_exclusive_cold"].as_f64().unwrap() + classes["row_exclusive_hot"].as_f64().unwrap();
        assert!(
            (rows - 20.0).abs() < 1e-9,
            "20 X row requests per transaction: {classes}"
        );
        let msgs = r["per_txn"]["messages"].as_f64().unwrap();
        if r["table"] == "server:2" {
            // db, table, at most 2 batch messages, at most 2 releases.
            assert!((3.0..=6.0).contains(&msgs), "{msgs} messages per transaction");
        } else {
            assert_eq!(msgs, 0.0);
        }
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(csv_text.lines().next().unwrap().contains("ns_per_op"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_ceiling_and_kept_inheritance_are_reported() {
    let dir = std::env::temp_dir().join(format!("heirloom-ceiling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("c.json");
    let csv = dir.join("c.csv");
    // Read-only TM1 transactions: `none` may run at any thread count.
    let out = heirloom(&[
        "bench",
        "--workload",
        "tm1",
        "--mix",
        "get-subscriber-data",
        "--scale",
        "1000",
        "--threads",
        "1,2",
        "--table",
        "none,latched",
        "--sli",
        "off,on",
        "--sli-keep",
        "0,64",
        "--fast-path",
        "on,off",
        "--duration",
        "0.05",
        "--warmup",
        "0.01",
        "--verify",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("of none") && text.contains("on+k64") && text.contains("on+k64/nofast"),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    // none once per thread count (no SLI or fast-path settings), latched
    // off/on/on+k64 with the fast path on and off.
    assert_eq!(runs.len(), 2 + 2 * 3 * 2);
    for r in runs {
        let share = r["of_ceiling"].as_f64().unwrap();
        let levels = &r["per_txn"]["table_ops_by_level"];
        let sum: f64 = ["database", "table", "page", "row"]
            .iter()
            .map(|l| levels[l].as_f64().unwrap())
            .sum();
        let total = r["per_txn"]["table_ops"].as_f64().unwrap();
        assert!((sum - total).abs() < 1e-9, "levels add up to table_ops: {r}");
        if r["table"] == "none" {
            assert_eq!(share, 1.0);
            assert_eq!(total, 0.0);
        } else {
            assert!(share > 0.0, "{r}");
            assert!(total > 0.0, "{r}");
        }
        let fast = r["per_txn"]["fast_ops"].as_f64().unwrap();
        let above_row = levels["database"].as_f64().unwrap() + levels["table"].as_f64().unwrap();
        // Fast holds: intention locks on databases and tables, S on rows.
        assert!(fast <= total + 1e-9, "fast holds are table operations: {r}");
        if r["fast_path"] == false || r["table"] == "none" {
            assert_eq!(fast, 0.0, "{r}");
        }
        if r["sli_keep"] == 64 || (r["fast_path"] == true && r["table"] == "latched") {
            // The database and table locks stay with each agent (kept
            // inheritance) or are fast holds: almost no operation on the
            // table's shared state above row level.
            assert!(above_row - fast < 0.5, "{r}");
        }
    }
    let header = std::fs::read_to_string(&csv).unwrap();
    let header = header.lines().next().unwrap();
    assert!(
        header.contains("of_ceiling")
            && header.contains("database_table_ops_per_txn")
            && header.contains("fast_ops_per_txn")
            && header.contains("fast_path"),
        "{header}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// YCSB's read-modify-write writes (S or U before X) run verified on the
/// queue, latch-free and server tables; the JSON counts aborts by cause.
#[test]
fn update_mode_read_modify_write_runs_verified() {
    let dir = std::env::temp_dir().join(format!("heirloom-rmw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for rmw in ["s", "u"] {
        let json = dir.join(format!("{rmw}.json"));
        let out = heirloom(&[
            "bench",
            "--workload",
            "ycsb",
            "--scale",
            "2000",
            "--opt",
            "theta=0.9",
            "--opt",
            &format!("rmw={rmw}"),
            "--opt",
            "order-keys",
            "--threads",
            "4",
            "--table",
            "latched,latchfree,server:2",
            "--sli",
            "off",
            "--duration",
            "0.1",
            "--warmup",
            "0.02",
            "--verify",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for r in doc["runs"].as_array().unwrap() {
            let causes = &r["abort_causes"];
            assert!(causes["deadlock"].is_u64(), "{r}");
            assert!(r["committed"].as_u64().unwrap() > 0, "{r}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--lock-timeout` bounds every wait on top of the policy (DBx1000's
/// DL_DETECT is detection with 1 ms): the runs say so in their policy, and
/// waits of contended YCSB end by timeouts, which detection alone never
/// has.
#[test]
fn a_lock_timeout_ends_waits_under_detection() {
    let dir = std::env::temp_dir().join(format!("heirloom-lt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for bound in [None, Some("0.001")] {
        let json = dir.join(format!("{}.json", bound.unwrap_or("none")));
        let mut args = vec![
            "bench",
            "--workload",
            "ycsb",
            "--scale",
            "100",
            "--opt",
            "theta=0.9",
            "--threads",
            "4",
            "--table",
            "latched,latchfree",
            "--policy",
            "detect",
            "--sli",
            "off",
            "--duration",
            "0.2",
            "--warmup",
            "0",
            "--json",
            json.to_str().unwrap(),
        ];
        if let Some(ms) = bound {
            args.extend_from_slice(&["--lock-timeout", ms]);
        }
        let out = heirloom(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for r in doc["runs"].as_array().unwrap() {
            let (policy, timeouts) = (
                r["policy"].as_str().unwrap(),
                r["abort_causes"]["timeout"].as_u64().unwrap(),
            );
            if bound.is_some() {
                assert_eq!(policy, "detect+lt1", "{r}");
                assert!(timeouts > 0, "a 1 us bound on 4 threads over 100 rows: {r}");
            } else {
                assert_eq!(policy, "detect", "{r}");
                assert_eq!(timeouts, 0, "{r}");
            }
            assert!(r["committed"].as_u64().unwrap() > 0, "{r}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--cores 16` on any machine: the header says so, the latch-free
/// default is sixteen cores' (65,536 buckets), each run's label carries
/// it, and wound-wait's waits (which spin and doom at once while the
/// workers fit the cores told) run verified.
#[test]
fn cores_told_reach_the_lock_manager() {
    let json = std::env::temp_dir().join(format!("heirloom-cores-{}.json", std::process::id()));
    let mut args: Vec<&str> = "bench --workload ycsb --profile dbx1000 --scale 2000 --threads 4 \
        --table latched,latchfree --policy woundwait --cores 16 --duration 0.1 --warmup 0 --verify --json"
        .split_whitespace()
        .collect();
    args.push(json.to_str().unwrap());
    let out = heirloom(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("# cores: the lock manager counts its threads against 16 cores"),
        "{text}"
    );
    assert!(
        text.contains("# buckets: the latch-free tables' and latched-spares' default on 16 cores, 65536"),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let tables: Vec<_> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["table"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tables, ["latched/cores16", "latchfree/cores16"]);
    std::fs::remove_file(&json).ok();
}

/// `heirloom figures --quick`, two figures: each drawn as PNG and SVG, its
/// runs written, and a verdict computed in both reports.
#[test]
fn figures_write_images_runs_and_a_judged_report() {
    let dir = std::env::temp_dir().join(format!("heirloom-figures-{}", std::process::id()));
    let out = heirloom(&[
        "figures",
        "--quick",
        "--only",
        "sli-fig11-tm1,1995-fig5",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["sli-fig11-tm1", "1995-fig5"] {
        for ext in ["png", "svg", "json", "csv"] {
            let f = dir.join(format!("{name}.{ext}"));
            assert!(std::fs::metadata(&f).is_ok_and(|m| m.len() > 0), "{}", f.display());
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(md.matches("**Verdict: ").count(), 2, "{md}");
    assert!(
        html.contains("<img src=\"1995-fig5.png\"") && !html.contains("<script"),
        "{html}"
    );
    assert!(!md.contains("## tsx-index"), "only the figures asked for: {md}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The JSON says where the row side was at a run's end: TPC-B updates
/// every row it locks, so `auto`'s first look turns the row side off;
/// read-only YCSB takes every row S lock fast and keeps it on; `on` holds
/// it on; `off` and a table without a fast path have no row side to
/// report. `--classes` (the request classes, which take fast holds with
/// a request node) turns it as the default does.
#[test]
fn runs_report_the_row_side() {
    let dir = std::env::temp_dir().join(format!("heirloom-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("tpcb", "tpcb", &["--scale", "2"]),
        ("tpcb-classes", "tpcb", &["--scale", "2", "--classes"]),
        ("ycsb", "ycsb", &["--scale", "20000", "--opt", "read-share=1"]),
        (
            "ycsb-classes",
            "ycsb",
            &["--scale", "20000", "--opt", "read-share=1", "--classes"],
        ),
    ];
    for (case, workload, opts) in cases {
        let (json, csv) = (dir.join(format!("{case}.json")), dir.join(format!("{case}.csv")));
        let mut args = vec!["bench", "--workload", workload];
        args.extend_from_slice(opts);
        args.extend_from_slice(&[
            "--threads",
            "1",
            "--table",
            "latched,latchfree,global",
            "--fast-rows",
            "auto,on,off",
            "--sli",
            "off",
            "--duration",
            "0.2",
            "--warmup",
            "0.05",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ]);
        let out = heirloom(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let csv = std::fs::read_to_string(&csv).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        assert!(
            header.contains(&"rows_on") && header.contains(&"rows_turned_off"),
            "{header:?}"
        );
        let runs = doc["runs"].as_array().unwrap();
        assert_eq!(
            runs.len(),
            7,
            "two tables with a row side in three settings, the global table once"
        );
        for r in runs {
            let table = r["table"].as_str().unwrap();
            let rows = &r["rows"];
            if table.starts_with("global") || table.ends_with("/rows-off") {
                assert!(rows.is_null(), "{case} {table}: no row side, yet {rows}");
            } else if table.ends_with("/rows-on") {
                assert_eq!(
                    (rows["on"].as_bool(), rows["turned_off"].as_u64()),
                    (Some(true), Some(0)),
                    "{case} {table}"
                );
            } else if workload == "tpcb" {
                assert_eq!(rows["on"].as_bool(), Some(false), "{case} {table}: {rows}");
                assert!(rows["turned_off"].as_u64().unwrap() >= 1, "{case} {table}: {rows}");
            } else {
                assert_eq!(
                    (rows["on"].as_bool(), rows["turned_off"].as_u64()),
                    (Some(true), Some(0)),
                    "{case} {table}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--classes` counts the lock-table requests by class and `--breakdown`
/// times the lock calls, each without the other: a breakdown alone leaves
/// the classes (and the path they take) out of the text, the JSON and the
/// CSV, so that its lock-manager time is the default path's.
#[test]
fn the_classes_are_asked_for_apart_from_the_breakdown() {
    let dir = std::env::temp_dir().join(format!("heirloom-classes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[&str]); 3] = [
        ("breakdown", &["--breakdown"]),
        ("classes", &["--classes"]),
        ("both", &["--breakdown", "--classes"]),
    ];
    for (case, flags) in cases {
        let (json, csv) = (dir.join(format!("{case}.json")), dir.join(format!("{case}.csv")));
        let mut args = vec![
            "bench",
            "--workload",
            "batch",
            "--scale",
            "20",
            "--threads",
            "1",
            "--table",
            "latched,latchfree",
            "--sli",
            "off",
            "--duration",
            "0.05",
            "--warmup",
            "0",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        let out = heirloom(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (classes, breakdown) = (flags.contains(&"--classes"), flags.contains(&"--breakdown"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.contains("lock classes per txn"), classes, "{case}: {text}");
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let runs = doc["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{case}");
        for r in runs {
            let c = &r["per_txn"]["classes"];
            assert_eq!(c.is_null(), !classes, "{case}: {c}");
            assert_eq!(r["breakdown"].is_null(), !breakdown, "{case}: {}", r["breakdown"]);
            if classes {
                let rows = c["row_exclusive_cold"].as_f64().unwrap() + c["row_exclusive_hot"].as_f64().unwrap();
                assert!(
                    (rows - 20.0).abs() < 1e-9,
                    "{case}: 20 X row requests per transaction: {c}"
                );
            }
        }
        let csv = std::fs::read_to_string(&csv).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = header
            .iter()
            .position(|h| *h == "row_exclusive_cold_per_txn")
            .expect("the class columns stay");
        for line in lines {
            let cell = line.split(',').nth(at).unwrap();
            assert_eq!(cell.is_empty(), !classes, "{case}: {line}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
