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

/// A Maven repository over HTTP on the host's loopback: Debian's `/usr/share/maven-repo`,
/// standing in for Maven Central. A command with the network reaches it; the tests, which
/// have none, cannot. Its log holds a line per request. Stopped when dropped.
struct Mirror {
    child: std::process::Child,
    url: String,
    log: std::path::PathBuf,
}

impl Mirror {
    fn start(log: std::path::PathBuf) -> Mirror {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .args(["--directory", "/usr/share/maven-repo"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("mirror log"))
            .spawn()
            .expect("python3 serves the repository");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server says its port");
        // "Serving HTTP on 127.0.0.1 port 41235 (http://127.0.0.1:41235/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("no port in {line:?}"))
            .to_string();
        Mirror {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            log,
        }
    }

    /// The paths requested so far.
    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split("\"GET ").nth(1))
            .filter_map(|l| l.split(' ').next())
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Maven project whose dependencies and plugins come from `url` (pinned to what Debian's
/// repository holds), with `extra` dependencies.
fn pom(url: &str, extra: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n  \
<groupId>example</groupId>\n  <artifactId>calc</artifactId>\n  <version>1.0</version>\n  \
<properties>\n    <maven.compiler.source>17</maven.compiler.source>\n    \
<maven.compiler.target>17</maven.compiler.target>\n    \
<project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n  </properties>\n  \
<repositories><repository><id>mirror</id><url>{url}</url></repository></repositories>\n  \
<pluginRepositories><pluginRepository><id>mirror</id><url>{url}</url></pluginRepository>\
</pluginRepositories>\n  \
<dependencies>\n    <dependency><groupId>junit</groupId><artifactId>junit</artifactId>\
<version>4.13.2</version><scope>test</scope></dependency>\n{extra}  </dependencies>\n  \
<build>\n    <plugins>\n      \
<plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>\n      \
<plugin><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>\n      \
<plugin><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>\n    \
</plugins>\n  </build>\n</project>\n"
    )
}

fn java_calc(factor: u32) -> String {
    format!(
        "package calc;\n\npublic class Calc {{\n    \
         public static int twice(int x) {{ return x * {factor}; }}\n}}\n"
    )
}

const JAVA_TEST: &str = "package calc;\n\nimport static org.junit.Assert.assertEquals;\n\
import org.junit.Test;\n\npublic class CalcTest {\n    \
@Test public void twice() { assertEquals(42, Calc.twice(21)); }\n    \
@Test public void zero() { assertEquals(0, Calc.twice(0)); }\n}\n";

/// A Maven project with an empty local repository (`~/.m2`), graded in the default sandbox:
/// the test command runs once at the base with the network, so the sides' offline tests
/// find every dependency and plugin, Surefire's provider too. The next check of the same
/// base downloads nothing (the mirror is not asked again). A candidate that adds a dependency
/// gets no download for it (its build never runs with the network): its tests cannot
/// resolve it, which is graded against it.
#[test]
fn a_maven_project_grades_from_an_empty_local_repository() {
    if !have_runner("mvn") || !have_offline_java_repo("mvn") || !have_runner("python3") {
        return;
    }
    let f = Fixture::empty();
    git(&f.repo, &["init", "--quiet"]);
    let mirror = Mirror::start(f.scratch.join("mirror.log"));
    let files = [
        ("pom.xml", pom(&mirror.url, "")),
        ("src/main/java/calc/Calc.java", java_calc(3)),
        ("src/test/java/calc/CalcTest.java", JAVA_TEST.to_string()),
        (".gitignore", "/target\n".to_string()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    f.commit(&files, "calc");
    let fix = f.diff_of(
        "fix.diff",
        &[("src/main/java/calc/Calc.java", &java_calc(2))],
    );
    let commons = "    <dependency><groupId>org.apache.commons</groupId>\
                   <artifactId>commons-text</artifactId><version>debian</version></dependency>\n";
    let adds = f.diff_of(
        "adds.diff",
        &[
            ("src/main/java/calc/Calc.java", &java_calc(2)),
            ("pom.xml", &pom(&mirror.url, commons)),
        ],
    );
    // Java reads `~/.m2` from its `user.home`, which MAVEN_OPTS sets to this `HOME`.
    let home = f.scratch.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let opts = format!("-Duser.home={}", home.display());
    let before = f.snapshot();
    let grade = |patch: &std::path::Path| {
        let args = CheckArgs::new()
            .json()
            .runner("maven")
            .patch(patch)
            .f2p("calc.CalcTest#twice")
            .p2p("calc.CalcTest#zero")
            .args(&["--pass-env", "MAVEN_OPTS"]);
        let env = [("HOME", home.as_os_str()), ("MAVEN_OPTS", opts.as_ref())];
        f.run_with_env(&args, &env).json()
    };
    let v = grade(&fix);
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    if require_bwrap() {
        assert_eq!(v["isolation"]["sandbox"], "bwrap", "{v:#}");
    }
    let repo = home.join(".m2/repository");
    for fetched in [
        "junit/junit/4.13.2",
        "org/apache/maven/surefire/surefire-junit4",
    ] {
        assert!(
            repo.join(fetched).is_dir(),
            "{fetched} is in {}",
            repo.display()
        );
    }
    let asked = mirror.requests().len();
    assert!(asked > 0, "the mirror was asked");

    let v = grade(&adds);
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(v["aborted"]["reason"], "crashed", "{v:#}");
    let tail = v["aborted"]["message"].as_str().unwrap_or_default();
    assert!(tail.contains("commons-text"), "{tail}");
    let requests = mirror.requests();
    assert_eq!(
        requests.len(),
        asked,
        "nothing downloaded again: {requests:?}"
    );
    assert!(!repo.join("org/apache/commons/commons-text").exists());

    // The user empties the local repository; the cache still holds the baseline and the
    // download's marker. The candidate is not blamed for what went: the base downloads again.
    std::fs::remove_dir_all(&repo).expect("empty the repository");
    let v = grade(&fix);
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert!(
        repo.join("junit/junit/4.13.2").is_dir(),
        "{}",
        repo.display()
    );
    assert!(
        mirror.requests().len() > asked,
        "the mirror was asked again"
    );
    f.assert_untouched(&before);
}
