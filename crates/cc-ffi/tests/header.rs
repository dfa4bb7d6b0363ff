//! The committed C header must equal what cbindgen generates from the sources.
//! Regenerate with `CC_FFI_BLESS=1 cargo test -p cc-ffi --test header`.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen failed")
        .write(&mut generated);
    // Items of the algorithm crates that cbindgen parses for the branch enums but does not
    // export (associated constants of excluded types) leave runs of blank lines: keep one.
    let mut text = String::from_utf8(generated).expect("cbindgen writes UTF-8");
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    let generated = text.into_bytes();
    let path = dir.join("include/cc_ffi.h");
    if std::env::var_os("CC_FFI_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writing the header");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale; regenerate with CC_FFI_BLESS=1 cargo test -p cc-ffi --test header\n--- generated ---\n{}",
        path.display(),
        String::from_utf8_lossy(&generated)
    );
}
