//! `go test` through gotestsum.

use super::common::{go_mod_cache, nothing, quote, regex_escape};
use super::spec::{Fetch, FetchStep, Reach, Spec};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use crate::workspace::{BuildDir, BuildKind};
use std::path::Path;

/// Go's build cache goes with the checkout, inside its `.git` (so no test sees it in the tree):
/// the user's may be read only (it is in a sandbox, and go will not build without a writable
/// cache), and one cache written by every run would let a candidate's tests plant entries that
/// a later baseline's build takes as its own. A fresh checkout starts from a trusted
/// baseline's copy ([`Preset::build_dirs`]).
const TEMPLATE: &str = "GOCACHE=\"$PWD/.git/patchgrade/go-build\"; export GOCACHE; gotestsum --junitfile {junit} -- -count=1 {tests} ./...";

/// Go's build cache, content-addressed.
const GO_CACHE: &[BuildDir] = &[BuildDir {
    path: ".git/patchgrade/go-build",
    by_mtime: false,
    skip: &[],
    kind: BuildKind::Tree,
}];

pub(super) const SPEC: Spec = Spec {
    name: "go",
    template: TEMPLATE,
    version_probe: "GOTOOLCHAIN=local go version && gotestsum --version",
    id_syntax: IdSyntax::Go,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: &["**/*_test.go"],
    sections: &[],
    build_dirs: GO_CACHE,
    lock_files: &["go.sum"],
    fetch,
    pass_env: &[
        "GOROOT",
        "GOPATH",
        "GOMODCACHE",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "GOPROXY",
        "GONOSUMDB",
        "GOPRIVATE",
    ],
    env_remove: &[],
    downstream: Reach::Unknown,
    support_files: &[],
    runs_test_files: false,
};

/// `go mod download` compiles nothing.
fn fetch() -> Option<Fetch> {
    Some(Fetch {
        step: FetchStep::Script("[ ! -f go.mod ] || go mod download"),
        caches: vec![go_mod_cache()],
        read: vec![go_mod_cache()],
    })
}

/// `-run` matches per level; selecting the top-level tests runs their subtests.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    let tops = dedup(ids.iter().map(|id| go_top(id).to_string()));
    let tops: Vec<String> = tops.iter().map(|t| regex_escape(t)).collect();
    format!("-run {}", quote(&format!("^({})$", tops.join("|"))))
}

/// The top-level test of a Go id (`pkg.TestX/sub` → `TestX`).
fn go_top(id: &str) -> &str {
    let start = ["Test", "Example", "Fuzz", "Benchmark"]
        .iter()
        .filter_map(|p| {
            if id.starts_with(p) {
                Some(0)
            } else {
                id.find(&format!(".{p}")).map(|i| i + 1)
            }
        })
        .min()
        .unwrap_or(0);
    let rest = &id[start..];
    &rest[..rest.find('/').unwrap_or(rest.len())]
}

