//! Django's test runner's ids, as its verbose output prints them and SWE-bench's datasets
//! write them: `test_x (module.Class)` (Python before 3.11), `test_x (module.Class.test_x)`
//! (3.11 and later), or, for a test with a docstring, the docstring's first line alone.

use super::{Query, Scope};
use crate::observe::junit::Case;

/// What a description key starts with, so that no test's name is ever taken for one.
const DESCRIPTION: char = '\u{1}';

pub(super) fn parse(id: &str) -> Query {
    match structured(id) {
        Some((name, classname)) => Query {
            key: name.to_string(),
            widened: false,
            scope: Scope::Classname {
                classname: classname.to_string(),
                file: None,
            },
        },
        None => Query {
            key: description_key(id),
            widened: false,
            scope: Scope::Any,
        },
    }
}

/// `name (dotted)` as the test's name and class: the class is the dotted part, less a
/// trailing `.name` (Python 3.11 repeats the method there).
fn structured(id: &str) -> Option<(&str, &str)> {
    let inner = id.strip_suffix(')')?;
    let (name, dotted) = inner.rsplit_once(" (")?;
    if name.is_empty() || name.contains(char::is_whitespace) || !dotted.contains('.') {
        return None;
    }
    let class = dotted
        .strip_suffix(name)
        .and_then(|c| c.strip_suffix('.'))
        .unwrap_or(dotted);
    Some((name, class))
}

fn description_key(line: &str) -> String {
    format!("{DESCRIPTION}{}", line.trim())
}

/// Every key a testcase answers to: its name, and its description's.
pub(super) fn case_keys(case: &Case) -> Vec<String> {
    let mut keys = vec![case.name.clone()];
    keys.extend(case.description.as_deref().map(description_key));
    keys
}

/// The id SWE-bench's datasets would hold: the description where the test has one, else the
/// name with its class, in the form before Python 3.11 (most of SWE-bench's Django versions).
pub(super) fn display(case: &Case) -> String {
    match &case.description {
        Some(line) => line.clone(),
        None => format!("{} ({})", case.name, case.classname),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_name_the_same_test_and_anything_else_is_a_description() {
        assert_eq!(
            structured("test_x (admin_views.tests.AdminViewBasicTest)"),
            Some(("test_x", "admin_views.tests.AdminViewBasicTest"))
        );
        assert_eq!(
            structured("test_x (admin_views.tests.AdminViewBasicTest.test_x)"),
            Some(("test_x", "admin_views.tests.AdminViewBasicTest"))
        );
        // A description that happens to end in parentheses is still one.
        assert_eq!(structured("Allow html in output (i18n strings)"), None);
        assert_eq!(structured("Regression for #12345 (lists)"), None);
        let q = parse("Allow html in output on i18n strings");
        assert_eq!(q.key, "\u{1}Allow html in output on i18n strings");
        assert_eq!(q.scope, Scope::Any);
    }
}
