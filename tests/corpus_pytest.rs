//! Every pytest node id in the shared corpus resolves to its testcase with the runner's status.

use patchgrade::TestStatus;
use patchgrade::ids::{IdSyntax, Index};
use patchgrade::junit::Report;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct Entry {
    native_id: String,
    status: String,
    junit_index: Vec<usize>,
}

fn fixtures() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/junit/pytest"
    ))
}

fn expected() -> BTreeMap<String, Vec<Entry>> {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json parses")
}

/// The runner's verdict as patchgrade's status: tests that never ran are missing.
fn want(status: &str) -> TestStatus {
    match status {
        "passed" => TestStatus::Passed,
        "failed" => TestStatus::Failed,
        "error" => TestStatus::Error,
        "skipped" => TestStatus::Skipped,
        "not_run" | "interrupted" => TestStatus::Missing,
        other => panic!("unexpected corpus status {other}"),
    }
}

#[test]
fn every_corpus_id_resolves_to_its_status() {
    let mut checked = 0;
    for (file, entries) in expected() {
        let report = Report::read(&fixtures().join(&file)).unwrap_or_else(|e| panic!("{e}"));
        let index = Index::new(&report);
        for e in &entries {
            let r = index.resolve(IdSyntax::Pytest, &e.native_id);
            if r.matches > e.junit_index.len().max(1) {
                // Two different tests share classname and name (pytest maps `/` to `.`, so
                // `pkg/v2` and `pkg.v2` collide) and the report has no `file` attribute: the
                // collision must be flagged, never silently resolved.
                assert!(
                    e.native_id.contains("test_collide"),
                    "{file}: unexpected ambiguity for {}",
                    e.native_id
                );
                continue;
            }
            // pytest writes the interrupted test as a nameless testcase, which names nothing.
            let elements = if e.status == "interrupted" {
                0
            } else {
                e.junit_index.len()
            };
            assert_eq!(r.matches, elements, "{file}: {} matches", e.native_id);
            assert_eq!(
                r.observation.status,
                want(&e.status),
                "{file}: {}",
                e.native_id
            );
            checked += 1;
        }
    }
    assert!(checked >= 249, "only {checked} ids checked");
}

#[test]
fn xunit1_file_attribute_separates_the_dotted_collision() {
    let report = Report::read(&fixtures().join("junit-xunit1.xml")).unwrap();
    let index = Index::new(&report);
    let a = index.resolve(IdSyntax::Pytest, "tests/pkg/v2/test_a.py::test_collide");
    let b = index.resolve(IdSyntax::Pytest, "tests/pkg.v2/test_a.py::test_collide");
    assert_eq!((a.matches, a.observation.status), (1, TestStatus::Passed));
    assert_eq!((b.matches, b.observation.status), (1, TestStatus::Failed));
}

#[test]
fn xfail_is_skipped_with_its_reason_and_messages_are_kept() {
    let report = Report::read(&fixtures().join("junit.xml")).unwrap();
    let index = Index::new(&report);
    let r = index.resolve(IdSyntax::Pytest, "tests/test_basic.py::test_xfail");
    assert_eq!(r.observation.status, TestStatus::Skipped);
    assert!(
        r.observation
            .message
            .as_deref()
            .unwrap_or("")
            .starts_with("xfail")
    );
    let r = index.resolve(IdSyntax::Pytest, "tests/test_basic.py::test_fail_assert");
    assert_eq!(r.observation.status, TestStatus::Failed);
    assert!(r.observation.message.is_some() && r.observation.details.is_some());
}

#[test]
fn tests_of_an_uncollectable_module_are_missing_with_the_collection_error() {
    let report = Report::read(&fixtures().join("junit-collection-error.xml")).unwrap();
    let errors: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.classname.is_empty())
        .map(|c| c.name.clone())
        .collect();
    assert!(!errors.is_empty());
    let index = Index::new(&report);
    let module = errors[0].replace('.', "/");
    let r = index.resolve(IdSyntax::Pytest, &format!("{module}.py::test_anything"));
    assert_eq!(r.observation.status, TestStatus::Missing);
    assert!(r.observation.message.unwrap().starts_with("not collected"));
}
