//! Test ids: how an id a user writes maps to `<testcase>` elements of a report.

use crate::junit::{Case, Report};
use crate::status::{Observation, TestStatus};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The syntax of test ids, which decides how they map to testcases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdSyntax {
    /// pytest node ids (`tests/test_x.py::TestC::test_y[param]`), relative to the rootdir.
    Pytest,
}

/// Where an id points in a report: the `classname` and `name` attributes it must carry, and the
/// `file` attribute when the runner writes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Expected `classname`.
    pub classname: String,
    /// Expected `name`.
    pub name: String,
    /// Expected `file` (compared only when the testcase has one).
    pub file: Option<String>,
}

impl IdSyntax {
    /// The testcase an id names.
    pub fn target(self, id: &str) -> Target {
        match self {
            IdSyntax::Pytest => pytest_target(id),
        }
    }
}

/// pytest's own `mangle_test_address` (junitxml.py): split off the parameter part at the first
/// `[`, split the rest on `::`, turn the path into a dotted module, then put the parameters back.
fn pytest_target(id: &str) -> Target {
    let (path, params) = match id.find('[') {
        Some(i) => id.split_at(i),
        None => (id, ""),
    };
    let mut names: Vec<String> = path.split("::").map(str::to_string).collect();
    let file = names[0].clone();
    let module = file.replace('/', ".");
    names[0] = module.strip_suffix(".py").unwrap_or(&module).to_string();
    if let Some(last) = names.last_mut() {
        last.push_str(params);
    }
    let name = names.pop().unwrap_or_default();
    Target {
        classname: names.join("."),
        name,
        file: Some(file),
    }
}

/// How one id resolved against a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The combined observation.
    pub observation: Observation,
    /// How many testcases matched (0 = missing; more than 1 = ambiguous or a teardown error).
    pub matches: usize,
}

/// A report indexed by (classname, name) for repeated lookups.
#[derive(Debug)]
pub struct Index<'a> {
    /// Keyed by name alone so lookups borrow nothing; classnames are compared on the few hits.
    by_name: HashMap<&'a str, Vec<&'a Case>>,
}

impl<'a> Index<'a> {
    /// Index every case of a report.
    pub fn new(report: &'a Report) -> Index<'a> {
        let mut by_name: HashMap<&str, Vec<&Case>> = HashMap::new();
        for case in &report.cases {
            by_name.entry(case.name.as_str()).or_default().push(case);
        }
        Index { by_name }
    }

    /// Resolve one id.
    pub fn resolve(&self, syntax: IdSyntax, id: &str) -> Resolution {
        let target = syntax.target(id);
        // A `file` attribute (pytest xunit1) tells apart ids whose dotted names collide.
        let matched: Vec<&Case> = self
            .lookup(&target.classname, &target.name)
            .filter(|c| match (&c.file, &target.file) {
                (Some(have), Some(want)) => have == want,
                _ => true,
            })
            .collect();
        if matched.is_empty() {
            return Resolution {
                observation: self.explain_missing(syntax, &target),
                matches: 0,
            };
        }
        // Several elements for one id: pytest writes a failing test whose teardown also fails
        // twice. The first element that did not pass decides; otherwise the first one.
        let decisive = matched
            .iter()
            .find(|c| !c.observation.status.is_pass())
            .unwrap_or(&matched[0]);
        Resolution {
            observation: decisive.observation.clone(),
            matches: matched.len(),
        }
    }

    fn lookup<'s>(&'s self, classname: &'s str, name: &str) -> impl Iterator<Item = &'a Case> + 's {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |c| c.classname == classname)
    }

    /// A missing pytest test whose module failed to import has a collection error instead
    /// (classname "", name = dotted module): carry that error so the user sees why.
    fn explain_missing(&self, syntax: IdSyntax, target: &Target) -> Observation {
        let IdSyntax::Pytest = syntax;
        let module = target.file.as_deref().map(|file| {
            let dotted = file.replace('/', ".");
            dotted.strip_suffix(".py").unwrap_or(&dotted).to_string()
        });
        let collection_error = module.and_then(|m| {
            self.lookup("", &m)
                .find(|c| c.observation.status == TestStatus::Error)
        });
        match collection_error {
            Some(case) => Observation {
                status: TestStatus::Missing,
                message: Some(format!(
                    "not collected: {}",
                    case.observation
                        .message
                        .as_deref()
                        .unwrap_or("collection error")
                )),
                details: case.observation.details.clone(),
            },
            None => Observation::missing(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str) -> (String, String) {
        let t = IdSyntax::Pytest.target(id);
        (t.classname, t.name)
    }

    #[test]
    fn pytest_ids_map_like_pytest_does() {
        assert_eq!(
            t("tests/test_a.py::test_x"),
            ("tests.test_a".into(), "test_x".into())
        );
        assert_eq!(
            t("tests/test_classes.py::TestOuter::TestInner::test_inner_param[1]"),
            (
                "tests.test_classes.TestOuter.TestInner".into(),
                "test_inner_param[1]".into()
            )
        );
        // Brackets, slashes and `::` inside the parameter part stay verbatim.
        assert_eq!(
            t("t/test_p.py::test_ids[id/with/slash[and]brackets]"),
            (
                "t.test_p".into(),
                "test_ids[id/with/slash[and]brackets]".into()
            )
        );
        assert_eq!(
            t("t/test_p.py::test_p[a::b]"),
            ("t.test_p".into(), "test_p[a::b]".into())
        );
        assert_eq!(
            t("t/test_p.py::test_p[]"),
            ("t.test_p".into(), "test_p[]".into())
        );
        // Doctests and collection errors.
        assert_eq!(
            t("tests/helpers.py::tests.helpers.double"),
            ("tests.helpers".into(), "tests.helpers.double".into())
        );
        assert_eq!(
            t("broken/test_syntax_error.py"),
            ("".into(), "broken.test_syntax_error".into())
        );
        // Only a trailing `.py` is dropped.
        assert_eq!(
            t("a.py.d/test_b.py::t"),
            ("a.py.d.test_b".into(), "t".into())
        );
    }

    fn case(classname: &str, name: &str, status: TestStatus, msg: Option<&str>) -> Case {
        Case {
            classname: classname.into(),
            name: name.into(),
            file: None,
            observation: Observation {
                status,
                message: msg.map(str::to_string),
                details: None,
            },
        }
    }

    #[test]
    fn first_non_passing_element_decides() {
        let report = Report {
            cases: vec![
                case("m", "t", TestStatus::Failed, Some("boom")),
                case("m", "t", TestStatus::Error, Some("failed on teardown")),
            ],
        };
        let r = Index::new(&report).resolve(IdSyntax::Pytest, "m.py::t");
        assert_eq!(r.matches, 2);
        assert_eq!(r.observation.status, TestStatus::Failed);
        assert_eq!(r.observation.message.as_deref(), Some("boom"));
    }

    #[test]
    fn file_attribute_separates_colliding_names() {
        let mut a = case("p.v2.test_a", "test_c", TestStatus::Passed, None);
        a.file = Some("p/v2/test_a.py".into());
        let mut b = case("p.v2.test_a", "test_c", TestStatus::Failed, None);
        b.file = Some("p.v2/test_a.py".into());
        let report = Report { cases: vec![a, b] };
        let index = Index::new(&report);
        let r = index.resolve(IdSyntax::Pytest, "p/v2/test_a.py::test_c");
        assert_eq!((r.matches, r.observation.status), (1, TestStatus::Passed));
        let r = index.resolve(IdSyntax::Pytest, "p.v2/test_a.py::test_c");
        assert_eq!((r.matches, r.observation.status), (1, TestStatus::Failed));
    }

    #[test]
    fn missing_test_carries_its_modules_collection_error() {
        let report = Report {
            cases: vec![case(
                "",
                "tests.test_x",
                TestStatus::Error,
                Some("collection failure"),
            )],
        };
        let index = Index::new(&report);
        let r = index.resolve(IdSyntax::Pytest, "tests/test_x.py::test_a");
        assert_eq!(r.matches, 0);
        assert_eq!(r.observation.status, TestStatus::Missing);
        assert_eq!(
            r.observation.message.as_deref(),
            Some("not collected: collection failure")
        );
        let r = index.resolve(IdSyntax::Pytest, "tests/test_y.py::test_a");
        assert_eq!(r.observation, Observation::missing());
    }
}
