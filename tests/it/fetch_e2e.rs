//! Dependencies come before the tests: a preset whose runner downloads on first use fetches
//! in the setup phase, which has the network, so that the tests, which have none, find them.

use crate::setup::*;

const MANIFEST: &str = "[package]\nname = \"fmtnum\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                        [dev-dependencies]\nitoa = \"1\"\n";

fn lib(factor: u64) -> String {
    format!(
        "pub fn twice(x: u64) -> u64 {{\n    x * {factor}\n}}\n\n\
         #[cfg(test)]\nmod tests {{\n    #[test]\n    fn twice_formats() {{\n        \
         let mut buf = itoa::Buffer::new();\n        \
         assert_eq!(buf.format(super::twice(21)), \"42\");\n    }}\n\n    \
         #[test]\n    fn zero() {{\n        assert_eq!(super::twice(0), 0);\n    }}\n}}\n"
    )
}

/// A crate whose dev-dependency is in no cargo cache (`CARGO_HOME` empty, under the host's
/// `/tmp`), graded in the default sandbox: the download step fetches it, the tests build
/// offline. A candidate whose manifest names a crate that does not exist breaks that step:
/// graded against it.
#[test]
fn a_crate_with_an_uncached_dev_dependency_grades_from_a_cold_cargo_home() {
    if !have_runner("cargo-nextest") {
        return;
    }
    let f = Fixture::with_files(&[
        ("Cargo.toml", MANIFEST),
        ("src/lib.rs", &lib(3)),
        (".gitignore", "target\n"),
    ]);
    let fix = f.diff_of("fix.diff", &[("src/lib.rs", &lib(2))]);
    let missing = f.diff_of(
        "missing.diff",
        &[
            ("src/lib.rs", &lib(2)),
            (
                "Cargo.toml",
                &format!("{MANIFEST}patchgrade-no-such-crate-7f3a = \"9\"\n"),
            ),
        ],
    );
    let home = f.scratch.join("cargo-home");
    let before = f.snapshot();
    let grade = |patch: &std::path::Path| {
        let args = CheckArgs::new()
            .json()
            .runner("nextest")
            .patch(patch)
            .f2p("fmtnum tests::twice_formats")
            .p2p("fmtnum tests::zero")
            .arg("--no-cache");
        f.run_with_env(&args, &[("CARGO_HOME", home.as_os_str())])
            .json()
    };
    let v = grade(&fix);
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    if std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok()
    {
        assert_eq!(v["isolation"]["sandbox"], "bwrap", "{v:#}");
    }
    let downloaded = std::fs::read_dir(home.join("registry/cache"))
        .expect("the registry was filled")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .any(|c| c.file_name().to_string_lossy().starts_with("itoa-"));
    assert!(downloaded, "itoa is in {}", home.display());

    let v = grade(&missing);
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(v["aborted"]["reason"], "setup-failed", "{v:#}");
    let message = v["aborted"]["message"].as_str().unwrap();
    assert!(
        message.contains("cargo fetch") && message.contains("patchgrade-no-such-crate-7f3a"),
        "{message}"
    );
    f.assert_untouched(&before);
}
