//! Test ids: how an id a user writes maps to `<testcase>` elements of a report.
//!
//! Each runner has its own id syntax (the id the runner itself prints and accepts); the guide's
//! table documents every mapping and quirk. Matching is two steps: a lookup key that an id and
//! its testcases share exactly, then the id's qualifiers (file, package, binary, class) checked
//! on the few testcases with that key.

mod django;
mod js;
mod native;
mod pytest;

use super::junit::{Case, Report};
use super::status::{Observation, SwebenchLog, SwebenchView, TestStatus};
use crate::util::names::Named;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

pub use js::JsFlavor;

/// The syntax of test ids, which decides how they map to testcases.
/// Serialised as the name `--ids` takes (`"pytest"`, `"vitest"`, `"classname.name"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdSyntax {
    /// pytest node ids: `tests/test_x.py::TestC::test_y[param]`, relative to the rootdir.
    Pytest,
    /// unittest ids `pkg.mod.Class.test` (xmlrunner or pytest reports), or pytest node ids.
    Unittest,
    /// cargo-nextest: `binary-id test::path` (as `cargo nextest list` prints), or `test::path`.
    Nextest,
    /// Go: `TestX/sub case`, optionally `package.TestX/sub case` (gotestsum's form).
    Go,
    /// JavaScript runners: `[file › ]Describe › test` or the full name `Describe test`.
    Js(JsFlavor),
    /// CTest: the test name as `ctest -N` lists it.
    Ctest,
    /// PHPUnit: `Class::method` or `Class::method with data set "x"`.
    Phpunit,
    /// Java (Surefire, Gradle): `com.x.FooTest#method` or `com.x.FooTest.method`.
    Java,
    /// Django's runner: `test_x (module.Class)`, `test_x (module.Class.test_x)`, or the first
    /// line of the test's docstring.
    Django,
    /// sympy's runner: the test function's bare name (`test_issue_1234`), scoped by the files
    /// that were run.
    Sympy,
    /// Any runner: `classname.name`, exactly as the report writes them.
    ClassnameName,
}

impl Named for IdSyntax {
    /// `junit` is an alias of `classname.name`.
    const NAMES: &'static [(&'static str, IdSyntax)] = &[
        ("pytest", IdSyntax::Pytest),
        ("unittest", IdSyntax::Unittest),
        ("nextest", IdSyntax::Nextest),
        ("go", IdSyntax::Go),
        ("jest", IdSyntax::Js(JsFlavor::Jest)),
        ("vitest", IdSyntax::Js(JsFlavor::Vitest)),
        ("mocha", IdSyntax::Js(JsFlavor::Mocha)),
        ("node", IdSyntax::Js(JsFlavor::Node)),
        ("ctest", IdSyntax::Ctest),
        ("phpunit", IdSyntax::Phpunit),
        ("java", IdSyntax::Java),
        ("django", IdSyntax::Django),
        ("sympy", IdSyntax::Sympy),
        ("classname.name", IdSyntax::ClassnameName),
        ("junit", IdSyntax::ClassnameName),
    ];
}

impl IdSyntax {
    /// The name `--ids` takes.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }

    /// Every syntax once, in the order of the name table.
    pub fn every() -> Vec<IdSyntax> {
        let mut all: Vec<IdSyntax> = Vec::new();
        for (_, syntax) in Self::NAMES {
            if !all.contains(syntax) {
                all.push(*syntax);
            }
        }
        all
    }

    /// The id to hand to the runner: the id itself, or a wider one the runner accepts (a
    /// truncated pytest id becomes its enclosing test function).
    pub fn run_form(self, id: &str) -> String {
        match self {
            IdSyntax::Pytest | IdSyntax::Unittest => pytest::run_form(id),
            IdSyntax::Java => native::java_run_form(id),
            _ => id.to_string(),
        }
    }

    /// The log SWE-bench's harness reads for this runner.
    pub fn swebench_log(self) -> SwebenchLog {
        match self {
            IdSyntax::Pytest | IdSyntax::Unittest => SwebenchLog::PytestSummary,
            IdSyntax::Django => SwebenchLog::Django,
            IdSyntax::Sympy => SwebenchLog::Sympy,
            _ => SwebenchLog::Generic,
        }
    }

    /// Parse an id into what its testcases must look like.
    fn parse(self, id: &str) -> Query {
        match self {
            IdSyntax::Pytest => pytest::parse(id),
            IdSyntax::Unittest => pytest::parse_unittest(id),
            IdSyntax::Js(flavor) => js::parse(flavor, id),
            IdSyntax::Django => django::parse(id),
            other => native::parse(other, id),
        }
    }

    /// The lookup keys of a testcase: each equal to the key of every id that names it that
    /// way (a Django test answers to its name and to its description).
    fn case_keys(self, case: &Case, report: &Report) -> Vec<String> {
        match self {
            IdSyntax::Django => django::case_keys(case),
            _ => vec![self.case_key(case, report)],
        }
    }

    /// The lookup key of a testcase: equal to the key of every id that names it.
    fn case_key(self, case: &Case, report: &Report) -> String {
        match self {
            IdSyntax::Pytest => case.name.clone(),
            IdSyntax::Unittest => pytest::unittest_key(case),
            IdSyntax::Js(flavor) => js::describe(flavor, case, report).full,
            other => native::case_key(other, case),
        }
    }

    /// A testcase written as an id of this syntax, for "did you mean" hints.
    fn display(self, case: &Case, report: &Report, hint: &Query) -> String {
        match self {
            IdSyntax::Pytest => pytest::display(case, hint),
            IdSyntax::Unittest => pytest::display_unittest(case, hint),
            IdSyntax::Js(flavor) => js::display(flavor, case, report),
            IdSyntax::Django => django::display(case),
            other => native::display(other, case),
        }
    }
}

impl fmt::Display for IdSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an id syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown id syntax `{0}` (known: {known})", known = IdSyntax::known())]
pub struct UnknownSyntax(pub String);

impl FromStr for IdSyntax {
    type Err = UnknownSyntax;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IdSyntax::from_name(s).ok_or_else(|| UnknownSyntax(s.to_string()))
    }
}

impl Serialize for IdSyntax {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl schemars::JsonSchema for IdSyntax {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IdSyntax".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
        schemars::json_schema!({
            "description": "The id syntax the tests were matched with (the name `--ids` takes).",
            "type": "string",
            "enum": names,
        })
    }
}

impl<'de> Deserialize<'de> for IdSyntax {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// What an id asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    /// Equal to [`IdSyntax::case_key`] of every testcase the id names.
    key: String,
    /// The id was cut short (a SWE-bench pytest id cut at a space): match keys that start
    /// with `key`.
    widened: bool,
    /// What else a testcase with that key must carry.
    scope: Scope,
}

/// The qualifiers of an id beyond its lookup key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The key says it all.
    Any,
    /// An exact `classname`, and a `file` compared when the testcase has one (pytest).
    Classname {
        classname: String,
        file: Option<String>,
    },
    /// The binary id (nextest), package (Go), class (PHPUnit, Java) or file and titles
    /// (JavaScript), each compared by its syntax's rules.
    Native(native::Qualifier),
    /// JavaScript: the file, and the exact titles when the id spells them.
    Js(js::JsQuery),
}

/// How one id resolved against a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The combined observation.
    pub observation: Observation,
    /// How many testcases matched (0 = missing).
    pub matches: usize,
    /// The matches are different tests (two files, two packages), not attempts of one.
    pub ambiguous: bool,
    /// The id was cut short and was matched as a prefix.
    pub widened: bool,
    /// For a missing id: the closest ids the report does hold.
    pub suggestions: Vec<String>,
    /// How SWE-bench's harness would count the testcases the id names.
    pub swebench: SwebenchView,
}

/// One test of a report, as an id of a syntax (see [`Index::listing`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    /// The id.
    pub id: String,
    /// Its status in the report, as grading would see it.
    pub status: TestStatus,
    /// The id names this test and no other: safe to write in a task.
    pub exact: bool,
}

/// A report indexed by lookup key, for repeated lookups.
#[derive(Debug)]
pub struct Index<'a> {
    report: &'a Report,
    syntax: IdSyntax,
    by_key: HashMap<String, Vec<&'a Case>>,
    /// sympy: the last testcase of each test file, `(source, index)`, whose line in sympy's
    /// verbose log also carries the file's `[OK]`/`[FAIL]`, so SWE-bench's parser never
    /// reads it.
    unread: std::collections::HashSet<(usize, usize)>,
}

impl<'a> Index<'a> {
    /// Index every case of a report under one id syntax.
    pub fn new(report: &'a Report, syntax: IdSyntax) -> Index<'a> {
        let mut by_key: HashMap<String, Vec<&Case>> = HashMap::new();
        let mut last: HashMap<(usize, &str), (usize, usize)> = HashMap::new();
        for case in &report.cases {
            for key in syntax.case_keys(case, report) {
                by_key.entry(key).or_default().push(case);
            }
            if syntax == IdSyntax::Sympy
                && let Some(file) = &case.file
            {
                last.insert((case.source, file), (case.source, case.index));
            }
        }
        Index {
            report,
            syntax,
            by_key,
            unread: last.into_values().collect(),
        }
    }

    /// The testcases an id names, in report order.
    pub fn matches(&self, id: &str) -> Vec<&'a Case> {
        let query = self.syntax.parse(id);
        self.matching(&query)
    }

    fn matching(&self, query: &Query) -> Vec<&'a Case> {
        let scoped = |c: &&Case| self.in_scope(&query.scope, c);
        let mut found: Vec<&Case> = if query.widened {
            let mut all: Vec<&Case> = self
                .by_key
                .iter()
                .filter(|(k, _)| pytest::widened_match(k, &query.key))
                .flat_map(|(_, v)| v.iter().copied())
                .filter(scoped)
                .collect();
            all.sort_by_key(|c| (c.source, c.index));
            all
        } else {
            self.by_key
                .get(&query.key)
                .into_iter()
                .flatten()
                .copied()
                .filter(scoped)
                .collect()
        };
        found.dedup_by_key(|c| (c.source, c.index));
        found
    }

    fn in_scope(&self, scope: &Scope, case: &Case) -> bool {
        match scope {
            Scope::Any => true,
            Scope::Classname { classname, file } => {
                case.classname == *classname
                    && match (&case.file, file) {
                        (Some(have), Some(want)) => have == want,
                        _ => true,
                    }
            }
            Scope::Native(q) => q.admits(case),
            Scope::Js(q) => q.admits(self.syntax, case, self.report),
        }
    }

    /// Resolve one id.
    pub fn resolve(&self, id: &str) -> Resolution {
        let query = self.syntax.parse(id);
        let matched = self.matching(&query);
        if matched.is_empty() {
            return Resolution {
                observation: self.explain_missing(&query),
                matches: 0,
                ambiguous: false,
                widened: query.widened,
                suggestions: self.suggest(id, &query),
                swebench: SwebenchView::Fail,
            };
        }
        let (observation, ambiguous) = match self.syntax {
            IdSyntax::Go => native::go_attempts(&matched),
            IdSyntax::Java => (
                first_not_passing(&matched),
                native::java_classes_differ(&matched),
            ),
            _ => (first_not_passing(&matched), distinct_tests(&matched)),
        };
        Resolution {
            observation,
            matches: matched.len(),
            ambiguous: ambiguous && !query.widened,
            widened: query.widened,
            suggestions: Vec::new(),
            swebench: SwebenchView::of_cases(
                self.syntax.swebench_log(),
                matched
                    .iter()
                    .filter(|c| !self.unread.contains(&(c.source, c.index)))
                    .map(|c| (c.observation.status, c.xfail)),
            ),
        }
    }

    /// Every testcase of the report written as an id of this syntax, once each, in report
    /// order, with what that id resolves to here: the ids a user (or `derive`) can put in a
    /// task. An id that resolves to nothing or to several tests is listed as such, so that no
    /// caller writes an id that would grade something else.
    pub fn listing(&self) -> Vec<Listed> {
        let neutral = Query {
            key: String::new(),
            widened: false,
            scope: Scope::Any,
        };
        let mut seen = std::collections::HashSet::new();
        let mut listed = Vec::new();
        for case in &self.report.cases {
            let id = self.syntax.display(case, self.report, &neutral);
            if !seen.insert(id.clone()) {
                continue;
            }
            // An id that names nothing is not resolved: that would look for suggestions
            // across the whole report, once per such id.
            if self.matches(&id).is_empty() {
                listed.push(Listed {
                    status: TestStatus::Missing,
                    exact: false,
                    id,
                });
                continue;
            }
            let resolution = self.resolve(&id);
            listed.push(Listed {
                status: resolution.observation.status,
                exact: !resolution.ambiguous && !resolution.widened,
                id,
            });
        }
        listed
    }

    /// A missing pytest test whose module failed to import has a collection error instead:
    /// carry that error so the user sees why.
    fn explain_missing(&self, query: &Query) -> Observation {
        let module = match (&self.syntax, &query.scope) {
            (IdSyntax::Pytest | IdSyntax::Unittest, Scope::Classname { file: Some(f), .. }) => {
                pytest::module_of(f)
            }
            _ => return Observation::missing(),
        };
        let collection_error = self
            .by_key
            .get(&module)
            .into_iter()
            .flatten()
            .find(|c| c.classname.is_empty() && c.observation.status == TestStatus::Error);
        match collection_error {
            Some(case) => {
                // pytest's message is only "collection failure"; the exception is the last
                // `E   ` line of the failure text.
                let error = case.observation.details.as_deref().and_then(|d| {
                    d.lines()
                        .rev()
                        .find_map(|l| l.strip_prefix("E "))
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                });
                let message = error
                    .or(case.observation.message.as_deref())
                    .unwrap_or("collection error");
                Observation {
                    status: TestStatus::Missing,
                    message: Some(format!("not collected: {message}")),
                    details: case.observation.details.clone(),
                }
            }
            None => Observation::missing(),
        }
    }

    /// The closest ids the report holds, best first.
    fn suggest(&self, id: &str, query: &Query) -> Vec<String> {
        const KEEP: usize = 3;
        const THRESHOLD: f64 = 0.6;
        let mut scored: Vec<(f64, String)> = self
            .report
            .cases
            .iter()
            .map(|c| self.syntax.display(c, self.report, query))
            .map(|shown| (similarity(id, &shown), shown))
            .filter(|(score, _)| *score >= THRESHOLD)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored.into_iter().take(KEEP).map(|(_, s)| s).collect()
    }
}

/// How alike two ids are, from 0 to 1. An id that is the end of another (a class without its
/// namespace, a test without its file) is a strong hint whatever the length difference. Two
/// node ids must also have alike test names: a shared long path is no hint.
fn similarity(id: &str, shown: &str) -> f64 {
    let whole = whole_similarity(id, shown);
    match (id.rsplit_once("::"), shown.rsplit_once("::")) {
        (Some((_, a)), Some((_, b))) => whole.min(strsim::normalized_damerau_levenshtein(a, b)),
        _ => whole,
    }
}

fn whole_similarity(id: &str, shown: &str) -> f64 {
    // The id may carry a qualifier the report cannot show (a file node's report lacks):
    // compare its tail too.
    let chars = id.chars().count();
    let tail: String = id
        .chars()
        .skip(chars.saturating_sub(shown.chars().count()))
        .collect();
    let edit = strsim::normalized_damerau_levenshtein(id, shown)
        .max(strsim::normalized_damerau_levenshtein(&tail, shown));
    if id.len() >= 4 && shown.ends_with(id) {
        edit.max(0.9)
    } else {
        edit
    }
}

/// Several elements for one id (pytest writes a failing test whose teardown also fails twice):
/// the first element that did not pass decides; otherwise the first one.
fn first_not_passing(matched: &[&Case]) -> Observation {
    matched
        .iter()
        .find(|c| !c.observation.status.is_pass())
        .unwrap_or(&matched[0])
        .observation
        .clone()
}

/// Whether the matches are different tests: their classname, name or file differ, or they
/// come from different reports.
fn distinct_tests(matched: &[&Case]) -> bool {
    let first = matched[0];
    let same = |c: &&Case| {
        c.classname == first.classname
            && c.name == first.name
            && c.file == first.file
            && c.source == first.source
    };
    // pytest's [failure, teardown error] pair is one test; two passing or two failing
    // elements with the same names are two tests that collide.
    matched.len() > 1 && !(matched.iter().all(same) && one_test_written_twice(matched))
}

/// One test written as two elements: pytest's failing test whose teardown also fails, and
/// jest-junit's file that failed to load (an error and a failure).
fn one_test_written_twice(matched: &[&Case]) -> bool {
    if matched
        .iter()
        .all(|c| c.classname == "Test suite failed to run")
    {
        return true;
    }
    matched.len() == 2
        && matched[1].observation.status == TestStatus::Error
        && matched[1]
            .observation
            .message
            .as_deref()
            .is_some_and(|m| m.contains("teardown"))
}

#[cfg(test)]
mod tests;
