//! Which tests run which lines: coverage.py's per-test contexts (`dynamic_context =
//! test_function`, `coverage json --show-contexts`) of one run of a suite, joined with that
//! run's JUnit report, so that each covered line names the tests (as pytest ids) that ran it.

use super::ids::{IdSyntax, Index};
use super::junit::Report;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Per file (relative to the checkout) and line, the tests that ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageMap {
    /// The tests, as ids of the run's syntax; the map refers to them by index.
    pub tests: Vec<String>,
    /// File → line → indexes into `tests`.
    pub lines: BTreeMap<String, BTreeMap<u32, Vec<u32>>>,
}

/// Coverage data that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("coverage data: {0}")]
pub struct CoverageError(pub String);

/// The shape of `coverage json --show-contexts` this reads.
#[derive(Deserialize)]
struct Json {
    files: BTreeMap<String, JsonFile>,
}

#[derive(Deserialize)]
struct JsonFile {
    #[serde(default)]
    contexts: BTreeMap<String, Vec<String>>,
}

impl CoverageMap {
    /// Join coverage.py's JSON with the JUnit report of the same run. A context is a test's
    /// dotted name (`tests.test_x.TestC.test_y`), which names every parameter of it; it is
    /// matched to testcases by its last parts, since the module part depends on how pytest
    /// imported the file (`test_x` or `tests.test_x`).
    pub fn build(json: &[u8], report: &Report) -> Result<CoverageMap, CoverageError> {
        let parsed: Json =
            serde_json::from_slice(json).map_err(|e| CoverageError(e.to_string()))?;
        let index = Index::new(report, IdSyntax::Pytest);
        let mut tests: Vec<String> = Vec::new();
        let mut by_tail: HashMap<String, Vec<(Vec<String>, u32)>> = HashMap::new();
        for listed in index.listing() {
            let Some(case) = index.matches(&listed.id).into_iter().next() else {
                continue;
            };
            let base = case.name.split('[').next().unwrap_or(&case.name);
            let mut parts: Vec<String> = case.classname.split('.').map(str::to_string).collect();
            parts.push(base.to_string());
            let n = tests.len() as u32;
            tests.push(listed.id);
            by_tail.entry(tail(&parts)).or_default().push((parts, n));
        }
        let mut contexts: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut lines: BTreeMap<String, BTreeMap<u32, Vec<u32>>> = BTreeMap::new();
        for (file, data) in &parsed.files {
            for (line, names) in &data.contexts {
                let Ok(line) = line.parse::<u32>() else {
                    continue;
                };
                let mut covering: BTreeSet<u32> = BTreeSet::new();
                for name in names {
                    let found = contexts.entry(name.as_str()).or_insert_with(|| {
                        let parts: Vec<String> = name.split('.').map(str::to_string).collect();
                        by_tail
                            .get(&tail(&parts))
                            .into_iter()
                            .flatten()
                            .filter(|(case, _)| is_suffix(&parts, case) || is_suffix(case, &parts))
                            .map(|(_, n)| *n)
                            .collect()
                    });
                    covering.extend(found.iter().copied());
                }
                if !covering.is_empty() {
                    lines
                        .entry(file.clone())
                        .or_default()
                        .insert(line, covering.into_iter().collect());
                }
            }
        }
        Ok(CoverageMap { tests, lines })
    }

    /// The tests that ran any of these lines, the most lines first (then by id): the most
    /// directly concerned first.
    pub fn covering(&self, touched: &BTreeMap<String, BTreeSet<u32>>) -> Vec<String> {
        let mut hits: HashMap<u32, usize> = HashMap::new();
        for (file, lines) in touched {
            let Some(covered) = self.lines.get(file) else {
                continue;
            };
            for line in lines {
                for n in covered.get(line).into_iter().flatten() {
                    *hits.entry(*n).or_default() += 1;
                }
            }
        }
        let mut ranked: Vec<(usize, &String)> = hits
            .into_iter()
            .filter_map(|(n, count)| Some((count, self.tests.get(n as usize)?)))
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        ranked.into_iter().map(|(_, id)| id.clone()).collect()
    }
}

/// The last two parts of a dotted name (module and function, or class and method).
fn tail(parts: &[String]) -> String {
    parts[parts.len().saturating_sub(2)..].join(".")
}

fn is_suffix(short: &[String], long: &[String]) -> bool {
    short.len() <= long.len() && long[long.len() - short.len()..] == *short
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pytest JUnit report of these (classname, name) testcases.
    fn report(cases: &[(&str, &str)]) -> Report {
        let body: String = cases
            .iter()
            .map(|(c, n)| format!("<testcase classname=\"{c}\" name=\"{n}\"/>"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junit.xml");
        std::fs::write(&path, format!("<testsuite>{body}</testsuite>")).unwrap();
        Report::read(&path).unwrap()
    }

    #[test]
    fn contexts_name_tests_whatever_their_module_prefix() {
        let r = report(&[
            ("tests.test_api", "test_call"),
            ("tests.test_util.TestF", "test_f[a]"),
            ("tests.test_util.TestF", "test_f[b]"),
            ("tests.test_util", "test_other"),
        ]);
        // pytest imported tests/test_api.py as `test_api` (no __init__.py): its context
        // lacks the package.
        let json = br#"{"files": {
            "pkg/util.py": {"contexts": {"3": ["", "test_api.test_call", "tests.test_util.TestF.test_f"],
                                         "4": ["tests.test_util.TestF.test_f"],
                                         "9": ["tests.test_util.test_other"]}},
            "pkg/other.py": {"contexts": {"1": [""]}}
        }}"#;
        let map = CoverageMap::build(json, &r).unwrap();
        let touched = |lines: &[u32]| {
            BTreeMap::from([("pkg/util.py".to_string(), lines.iter().copied().collect())])
        };
        assert_eq!(
            map.covering(&touched(&[3, 4])),
            [
                "tests/test_util.py::TestF::test_f[a]",
                "tests/test_util.py::TestF::test_f[b]",
                "tests/test_api.py::test_call"
            ]
        );
        assert_eq!(
            map.covering(&touched(&[9])),
            ["tests/test_util.py::test_other"]
        );
        assert!(map.covering(&touched(&[5])).is_empty());
        // Code run at import time (the empty context) names no test.
        assert!(!map.lines.contains_key("pkg/other.py"));
        assert!(CoverageMap::build(b"{", &r).is_err());
    }
}
