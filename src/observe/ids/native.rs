//! Runners whose ids are a name plus one qualifier: nextest (binary id), Go (package), CTest,
//! PHPUnit (class), Java (class), and plain `classname.name`.

use super::{IdSyntax, Query, Scope};
use crate::observe::junit::Case;
use crate::observe::status::{Observation, TestStatus};

/// What an id names beyond its lookup key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Qualifier {
    /// nextest: the binary id, which is the testcase's classname.
    Binary(String),
    /// Go: an import path, full or relative (gotestsum's classname may be either).
    Package(String),
    /// PHPUnit: the class, fully qualified (`Corpus\Sub\CalcTest`) or short.
    PhpClass(String),
    /// Java: the class, fully qualified or simple; the exact name when the id has parameters.
    JavaClass { class: String, name: Option<String> },
}

/// Go test functions: what a package-qualified id's name starts with.
const GO_PREFIXES: [&str; 4] = ["Test", "Example", "Fuzz", "Benchmark"];

pub(super) fn parse(syntax: IdSyntax, id: &str) -> Query {
    let query = |key: String, qualifier: Option<Qualifier>| Query {
        key,
        widened: false,
        scope: qualifier.map_or(Scope::Any, Scope::Native),
    };
    match syntax {
        IdSyntax::Nextest => match id.split_once(' ') {
            Some((binary, test)) => query(test.to_string(), Some(Qualifier::Binary(binary.into()))),
            None => query(id.to_string(), None),
        },
        IdSyntax::Go => {
            let (package, name) = split_go(id);
            query(
                go_name(name),
                package.map(|p| Qualifier::Package(p.to_string())),
            )
        }
        IdSyntax::Phpunit => match id.split_once("::") {
            Some((class, name)) => query(name.to_string(), Some(Qualifier::PhpClass(class.into()))),
            None => query(id.to_string(), None),
        },
        IdSyntax::Java => match split_java(id) {
            Some((class, name)) => query(
                java_method(name),
                Some(Qualifier::JavaClass {
                    class: class.to_string(),
                    name: (java_method(name) != name).then(|| name.to_string()),
                }),
            ),
            None => query(java_method(id), None),
        },
        _ => query(id.to_string(), None),
    }
}

pub(super) fn case_key(syntax: IdSyntax, case: &Case) -> String {
    match syntax {
        IdSyntax::Java => java_method(&case.name),
        IdSyntax::ClassnameName if !case.classname.is_empty() => {
            format!("{}.{}", case.classname, case.name)
        }
        _ => case.name.clone(),
    }
}

pub(super) fn display(syntax: IdSyntax, case: &Case) -> String {
    match syntax {
        IdSyntax::Nextest => format!("{} {}", case.classname, case.name),
        IdSyntax::Go => format!("{}.{}", case.classname, case.name),
        IdSyntax::Phpunit => format!("{}::{}", php_class(case), case.name),
        IdSyntax::Java => format!("{}#{}", case.classname, case.name),
        other => case_key(other, case),
    }
}

impl Qualifier {
    pub(super) fn admits(&self, case: &Case) -> bool {
        match self {
            Qualifier::Binary(binary) => case.classname == *binary,
            Qualifier::Package(p) => {
                let c = &case.classname;
                c == p || c.ends_with(&format!("/{p}")) || p.ends_with(&format!("/{c}"))
            }
            // Exact: `CalcTest` and `Corpus\Sub\CalcTest` are different classes.
            Qualifier::PhpClass(want) => php_class(case) == *want,
            Qualifier::JavaClass { class, name } => {
                let c = &case.classname;
                let class_ok = c == class
                    || c.ends_with(&format!(".{class}"))
                    || c.ends_with(&format!("${class}"));
                class_ok && name.as_ref().is_none_or(|n| *n == case.name)
            }
        }
    }
}

/// `example.com/x/calc.TestTable/sub` → (`example.com/x/calc`, `TestTable/sub`).
fn split_go(id: &str) -> (Option<&str>, &str) {
    if GO_PREFIXES.iter().any(|p| id.starts_with(p)) {
        return (None, id);
    }
    let at = GO_PREFIXES
        .iter()
        .filter_map(|p| id.find(&format!(".{p}")))
        .min();
    match at {
        Some(i) => (Some(&id[..i]), &id[i + 1..]),
        None => (None, id),
    }
}

/// `go test` rewrites subtest names: spaces and tabs become `_`, an empty name `#00`.
fn go_name(name: &str) -> String {
    let Some((top, subs)) = name.split_once('/') else {
        return name.to_string();
    };
    let subs: Vec<String> = subs
        .split('/')
        .map(|s| {
            if s.is_empty() {
                "#00".to_string()
            } else {
                s.replace([' ', '\t'], "_")
            }
        })
        .collect();
    format!("{top}/{}", subs.join("/"))
}

/// `com.x.FooTest#bar[1]` or `com.x.FooTest.bar[1]` → (`com.x.FooTest`, `bar[1]`).
fn split_java(id: &str) -> Option<(&str, &str)> {
    id.split_once('#').or_else(|| {
        // `Class.method`: the method starts after the last `.` outside parameters.
        let head = &id[..id.find(['(', '[']).unwrap_or(id.len())];
        head.rfind('.').map(|i| (&id[..i], &id[i + 1..]))
    })
}

/// The selection Surefire's `-Dtest` and Gradle's `--tests` accept: `Class#method`, without
/// parameters (neither runner selects one parameter set), so the whole method runs.
pub(super) fn java_run_form(id: &str) -> String {
    match split_java(id) {
        Some((class, name)) => format!("{class}#{}", java_method(name)),
        None => java_method(id),
    }
}

/// `testBar(int)[1]` → `testBar`: Surefire and Gradle decorate method names.
fn java_method(name: &str) -> String {
    name[..name.find(['(', '[']).unwrap_or(name.len())].to_string()
}

/// A Java method is one test whatever its parameter sets, and a class name is unique within a
/// build: several testcases for `Class#method` are its parameter sets (or Gradle running an
/// `Enclosed` class's nested class twice), and ambiguous only across classes or modules.
pub(super) fn java_classes_differ(matched: &[&Case]) -> bool {
    let first = matched[0];
    matched
        .iter()
        .any(|c| c.classname != first.classname || c.source != first.source)
}

/// PHPUnit's `class` attribute keeps the namespace backslashes; `classname` uses dots.
fn php_class(case: &Case) -> String {
    case.class
        .clone()
        .unwrap_or_else(|| case.classname.replace('.', "\\"))
}

/// gotestsum writes one testcase per attempt (`--rerun-fails`): a failure followed by a pass is
/// flaky. Testcases in different packages are different tests.
pub(super) fn go_attempts(matched: &[&Case]) -> (Observation, bool) {
    let first = matched[0];
    let ambiguous = matched
        .iter()
        .any(|c| c.classname != first.classname || c.source != first.source);
    if ambiguous {
        return (super::first_not_passing(matched), true);
    }
    let failed_before = matched.iter().position(|c| !c.observation.status.is_pass());
    let passed_after = failed_before.and_then(|i| {
        matched[i..]
            .iter()
            .position(|c| c.observation.status.is_pass())
    });
    match (failed_before, passed_after) {
        (Some(i), Some(_)) => {
            let failure = &matched[i].observation;
            let observation = Observation {
                status: TestStatus::Flaky,
                message: Some(format!(
                    "failed, then passed on a rerun: {}",
                    failure.message.as_deref().unwrap_or("")
                )),
                details: failure.details.clone(),
            };
            (observation, false)
        }
        _ => (super::first_not_passing(matched), false),
    }
}
