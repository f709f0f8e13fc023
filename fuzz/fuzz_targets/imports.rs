//! The import readers from arbitrary source: the Rust dependents search (tokens, `use` trees,
//! modules, tests) and the Python and JavaScript importers, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgrade::internals::{importers, rust_dependents};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let files = [
        ("Cargo.toml", "[package]\nname = \"fuzzed\"\n"),
        ("src/lib.rs", source),
        ("src/a/mod.rs", source),
        ("src/a/b.rs", source),
        ("tests/t.rs", source),
        ("tests/it/main.rs", source),
        ("pkg/tests/test_x.py", source),
        ("web/x.test.ts", source),
    ];
    let changed = ["src/lib.rs", "src/a/mod.rs", "pkg/mod.py", "web/x.ts"].map(String::from);
    let _ = rust_dependents(files.iter().copied(), &changed);
    let _ = importers(files.iter().copied(), &changed);
});
