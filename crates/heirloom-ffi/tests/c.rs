//! Builds `tests/c/heirloom_test.c` against `include/heirloom.h` and the
//! static library cargo built beside this test, runs it, and fails if it
//! does. Needs a C compiler (`$CC`, else `cc`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>/`: the test binary lives in its `deps/`, where cargo
/// also leaves the crate's static library.
fn artifacts() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.parent().expect("deps directory").to_path_buf()
}

/// Compiles `src` (relative to the crate) with the static library and runs
/// it; its standard output and standard error.
fn build_and_run(src: &str, name: &str) -> (String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = artifacts();
    let lib = [deps.join("libheirloom_ffi.a"), deps.join("../libheirloom_ffi.a")]
        .into_iter()
        .find(|p| p.exists())
        .expect("libheirloom_ffi.a next to the test binary (cargo builds every crate type of the library)");
    // `HEIRLOOM_C_CHECK`: `asan` builds the C side with AddressSanitizer
    // and UndefinedBehaviorSanitizer (LeakSanitizer included), `valgrind`
    // runs it under valgrind's memcheck; both fail on any error or leak,
    // with no suppression file (the crate README, "Tests").
    let check = std::env::var("HEIRLOOM_C_CHECK").unwrap_or_default();
    let sanitize: &[&str] = match check.as_str() {
        "asan" => &[
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ],
        "" | "valgrind" => &[],
        other => panic!("HEIRLOOM_C_CHECK={other}: asan or valgrind"),
    };
    let out = deps.join(format!("{name}{}", if check.is_empty() { "" } else { "-checked" }));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let build = Command::new(&cc)
        .args([
            "-std=c11",
            "-D_GNU_SOURCE",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
        ])
        .args(sanitize)
        .arg("-I")
        .arg(dir.join("include"))
        .arg(dir.join(src))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        build.status.success(),
        "{src} does not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    // `many_locks_in_one_transaction`: a million locks where the library is
    // optimised, a tenth of that in a debug build.
    let locks = if cfg!(debug_assertions) { "100000" } else { "1000000" };
    let mut run = if check == "valgrind" {
        let mut c = Command::new("valgrind");
        c.args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect",
            "--quiet",
        ])
        .arg(&out);
        c
    } else {
        Command::new(&out)
    };
    if !check.is_empty() {
        run.env("HEIRLOOM_TEST_SANITIZED", "1");
    }
    let run = run
        .env("HEIRLOOM_TEST_LOCKS", if check.is_empty() { locks } else { "20000" })
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .expect("the C program runs");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        run.status.success(),
        "{src} failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    (stdout, stderr)
}

#[test]
fn the_c_tests_pass() {
    let (out, err) = build_and_run("tests/c/heirloom_test.c", "heirloom_c_test");
    assert!(out.contains("checks passed"), "{out}");
    // The caught panic (`after_a_panic`) is reported through the agent's
    // message, not printed on the host's stderr.
    assert!(!err.contains("panicked"), "a caught panic was printed:\n{err}");
    println!("{out}");
}

#[test]
fn the_readme_example_runs() {
    let (out, _) = build_and_run("examples/quickstart.c", "heirloom_c_quickstart");
    assert_eq!(out, "committed\n");
}
