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
