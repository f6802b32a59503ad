//! The shape the READMEs describe, checked on the sources of every crate of
//! the workspace: modules import each other without circles (at the level
//! of top-level modules, tests left out), the transaction layer never asks
//! which lock table it holds, the lock tables never call up into the
//! layers above them, and the kit's front door names no benchmark.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable source directory") {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            // Test-only modules may reach anywhere.
            if p.file_name().is_some_and(|n| n != "tests") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]`
/// tail (test modules come last in every file here).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable source");
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The top-level module a file belongs to (`table/latched.rs` -> `table`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string()
}

/// The top-level modules `code` names through `crate::` (`crate::{a,
/// b::c}` or `crate::a`).
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let names: Vec<String> = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            inner[..end]
                .split(',')
                .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ]
        };
        for n in names {
            if !n.is_empty() && n.chars().next().is_some_and(|c| c.is_lowercase()) {
                out.insert(n);
            }
        }
    }
    out
}

/// Top-level module -> top-level modules it names through `crate::`.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let m = module_of(src, &f);
        if m == "lib" || m == "main" {
            continue;
        }
        let deps = g.entry(m.clone()).or_default();
        deps.extend(named_modules(&code(&f)).into_iter().filter(|n| *n != m));
    }
    g
}

fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let i = path.iter().position(|x| x == n).unwrap_or(0);
                let mut c = path[i..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle() {
    // (heirloom-rtm has one module besides its root: nothing to circle.)
    for name in ["heirloom", "heirloom-bench", "heirloom-btree"] {
        let g = imports(&crate_src(name));
        assert!(g.len() > 3, "{name}: found only {g:?}");
        if let Some(c) = find_cycle(&g) {
            panic!("{name}: modules import each other in a circle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_circle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&g).map(|c| c.len()), Some(4));
    if let Some(s) = g.get_mut("c") {
        s.clear();
    }
    assert_eq!(find_cycle(&g), None);
}

#[test]
fn transactions_and_agents_never_ask_which_table_they_hold() {
    let src = crate_src("heirloom");
    let mut files = Vec::new();
    rust_files(&src.join("txn"), &mut files);
    assert!(files.len() >= 4, "the transaction layer's files: {files:?}");
    files.extend(["agent.rs", "deadlock.rs", "nodes.rs"].map(|f| src.join(f)));
    for path in files {
        let f = path.display();
        let code = code(&path);
        for kind in [
            "Table::Global",
            "Table::Latched",
            "Table::LatchFree",
            "Table::Server",
            "TableKind::",
            "is_latch_free",
        ] {
            assert!(!code.contains(kind), "{f} names {kind}");
        }
    }
}

/// The modules above the lock tables: what a table or a queue must never
/// call (it is called by them, and answers through `wake` and its return
/// values).
const ABOVE_THE_TABLES: [&str; 10] = [
    "txn", "agent", "cache", "shared", "manager", "deadlock", "policy", "probe", "gate", "misuse",
];

/// Why `code`, a file of the lock-table layer (`table/` or `queue`), calls
/// upward, if it does: it names a module above the tables, a queue names
/// the tables, or a table kind's file reaches the registry of kinds
/// (`Table::` or `each!`, which only `table/mod.rs` may use) instead of
/// the interface.
fn calls_upward(code: &str, is_queue: bool, is_registry: bool) -> Option<String> {
    let named = named_modules(code);
    if let Some(m) = ABOVE_THE_TABLES.iter().find(|m| named.contains(**m)) {
        return Some(format!("names `crate::{m}`"));
    }
    if is_queue && named.contains("table") {
        return Some("a queue names the tables above it".into());
    }
    if !is_registry {
        let registry = code.match_indices("Table::").any(|(i, _)| {
            !code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        if registry || code.contains("each!") {
            return Some("reaches the registry of kinds (`Table`) instead of the interface".into());
        }
    }
    None
}

#[test]
fn no_table_module_calls_upward() {
    let src = crate_src("heirloom");
    let mut files = Vec::new();
    rust_files(&src.join("table"), &mut files);
    rust_files(&src.join("queue"), &mut files);
    files.push(src.join("queue.rs"));
    assert!(files.len() >= 15, "the lock-table layer's files: {files:?}");
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src");
        let is_queue = rel.starts_with("queue") || rel == Path::new("queue.rs");
        let is_registry = rel == Path::new("table/mod.rs");
        if let Some(why) = calls_upward(&code(&path), is_queue, is_registry) {
            panic!("{} calls upward: it {why}", rel.display());
        }
    }
}

#[test]
fn the_upward_check_finds_a_call_upward() {
    assert!(calls_upward("use crate::txn::Transaction;", false, false).is_some());
    assert!(calls_upward("use crate::{mode::Mode, agent::Agent};", false, false).is_some());
    assert!(calls_upward("use crate::table::Handle;", true, false).is_some());
    assert!(calls_upward("match t { Table::Latched(l) => 1 }", false, false).is_some());
    assert!(calls_upward("each!(self, t => t.fast())", false, false).is_some());
    assert!(calls_upward("each!(self, t => t.fast())", false, true).is_none());
    assert!(
        calls_upward(
            "use crate::table::{Caller, LockTable};\nLockTable::acquire",
            false,
            false
        )
        .is_none()
    );
    assert!(calls_upward("use crate::{mode::Mode, queue::Queue};", true, false).is_none());
}

#[test]
fn the_kit_front_door_names_no_benchmark() {
    let src = crate_src("heirloom-bench");
    for f in [
        "lib.rs",
        "sweep.rs",
        "runner.rs",
        "report.rs",
        "storage.rs",
        "options.rs",
    ] {
        let code = code(&src.join(f));
        for name in [
            "\"tm1\"",
            "\"tpcb\"",
            "\"tpcc\"",
            "\"ycsb\"",
            "tm1::",
            "tpcc::",
            "ycsb::",
            "tpcb::",
            "\"hotlock\"",
            "\"nullcs\"",
            "\"batch\"",
            "micro::",
        ] {
            assert!(!code.contains(name), "{f} names {name}");
        }
    }
}

/// A source file longer than this is more than one reading; split it
/// along its seams (tests, which live in `tests/` folders, are exempt).
const MOST_LINES: usize = 1_000;

/// Every source file of `src` (test folders left out) over `most` lines.
fn too_long(src: &Path, most: usize) -> Vec<(PathBuf, usize)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).expect("readable source").lines().count();
            (n > most).then_some((f, n))
        })
        .collect()
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    for name in [
        "heirloom",
        "heirloom-bench",
        "heirloom-btree",
        "heirloom-rtm",
        "heirloom-ffi",
        "heirloom-latch",
    ] {
        let long = too_long(&crate_src(name), MOST_LINES);
        assert!(long.is_empty(), "{name}: files over {MOST_LINES} lines: {long:?}");
    }
}

#[test]
fn the_length_check_finds_a_long_file() {
    // The same walk with a bound every crate's largest file is over.
    assert!(!too_long(&crate_src("heirloom"), 100).is_empty());
}
