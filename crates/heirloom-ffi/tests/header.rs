//! `include/heirloom.h` is what cbindgen makes of `src/lib.rs` with
//! `cbindgen.toml`: regenerated here and compared, so the header and the
//! library cannot drift. `HEIRLOOM_BLESS=1 cargo test -p heirloom-ffi --test
//! header` rewrites it after a change to the interface.

use std::path::Path;

#[test]
fn the_header_matches_the_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml is valid");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen reads src/lib.rs");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("utf-8");
    let path = dir.join("include/heirloom.h");
    if std::env::var_os("HEIRLOOM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writable include/heirloom.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/heirloom.h differs from what src/lib.rs declares; run HEIRLOOM_BLESS=1 cargo test -p heirloom-ffi --test header and commit the header"
    );
}

/// The header compiles alone as strict C99 (`-std=c99 -pedantic-errors`,
/// every warning an error) and as C++ (`cpp_compat`), with `$CC` (else
/// `cc`) and `$CXX` (else `c++`); a compiler that is missing fails the test
/// with its name.
#[test]
fn the_header_is_c99_and_cpp() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tu = std::env::temp_dir().join(format!("heirloom_header_{}.c", std::process::id()));
    std::fs::write(
        &tu,
        "#include \"heirloom.h\"\nint heirloom_header_only(void) { return HEIRLOOM_OK; }\n",
    )
    .expect("a temporary file");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    for (compiler, lang) in [
        (cc.as_str(), &["-x", "c", "-std=c99"]),
        (cxx.as_str(), &["-x", "c++", "-std=c++11"]),
    ] {
        let out = std::process::Command::new(compiler)
            .args(lang)
            .args(["-pedantic-errors", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
            .arg("-I")
            .arg(dir.join("include"))
            .arg(&tu)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the compiler `{compiler}`: {e}"));
        assert!(
            out.status.success(),
            "heirloom.h does not compile with {compiler} {lang:?}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_file(&tu);
}
