//! pytest node ids, and unittest ids (dotted, or node ids when pytest runs them).

use super::{Query, Scope};
use crate::observe::junit::Case;

/// pytest's own `mangle_test_address` (junitxml.py): split off the parameter part at the first
/// `[`, split the rest on `::`, turn the path into a dotted module, then put the parameters back.
pub(super) fn parse(id: &str) -> Query {
    let (path, params) = match id.find('[') {
        Some(i) => id.split_at(i),
        None => (id, ""),
    };
    let mut names: Vec<&str> = path.split("::").collect();
    let file = names[0].to_string();
    names[0] = "";
    let name = format!("{}{params}", names.pop().unwrap_or_default());
    let mut classname = module_of(&file);
    for class in names.iter().filter(|n| !n.is_empty()) {
        classname.push('.');
        classname.push_str(class);
    }
    // A module alone (collection errors) has classname "" and the module as name.
    let (classname, name) = if name.is_empty() || path == file {
        (String::new(), module_of(&file))
    } else {
        (classname, name)
    };
    Query {
        key: name,
        widened: is_truncated(id),
        scope: Scope::Classname {
            classname,
            file: Some(file),
        },
    }
}

/// SWE-bench's datasets hold ids cut at the first space: `test_valid[` for `test_valid[  42]`.
fn is_truncated(id: &str) -> bool {
    id.contains('[') && !id.ends_with(']')
}

/// A truncated id runs as its enclosing test function, which pytest accepts. One with no
/// function before its `[` (`[`, `[100%]----`: SWE-bench's data holds such ids, read from a
/// progress bar) runs as it is, for pytest to refuse: an empty argument would run the whole
/// suite.
pub(super) fn run_form(id: &str) -> String {
    match id.find('[') {
        Some(i) if is_truncated(id) && !id[..i].is_empty() && !id[..i].ends_with("::") => {
            id[..i].to_string()
        }
        _ => id.to_string(),
    }
}

/// A truncated name matches the names it was cut from: the same text, then the whitespace it
/// was cut at.
pub(super) fn widened_match(case_key: &str, prefix: &str) -> bool {
    case_key
        .strip_prefix(prefix)
        .and_then(|rest| rest.chars().next())
        .is_some_and(char::is_whitespace)
}

/// `tests/test_a.py` → `tests.test_a` (only a trailing `.py` is dropped).
pub(super) fn module_of(file: &str) -> String {
    let dotted = file.replace('/', ".");
    dotted.strip_suffix(".py").unwrap_or(&dotted).to_string()
}

/// unittest ids: `pkg.mod.Class.test`, xmlrunner's `setUpClass (pkg.mod.Class)`, or a node id.
pub(super) fn parse_unittest(id: &str) -> Query {
    if id.contains("::") || id.ends_with(".py") {
        return parse(id);
    }
    if id.contains(" (") {
        return Query {
            key: id.to_string(),
            widened: false,
            scope: Scope::Classname {
                classname: String::new(),
                file: None,
            },
        };
    }
    let (classname, name) = id.rsplit_once('.').unwrap_or(("", id));
    Query {
        key: name.to_string(),
        widened: false,
        scope: Scope::Classname {
            classname: classname.to_string(),
            file: None,
        },
    }
}

/// A testcase as a unittest id: dotted, its subtests under their test; xmlrunner's
/// `setUpClass (pkg.mod.Class)` as it is; a module that pytest could not collect as its file.
pub(super) fn display_unittest(case: &Case, hint: &Query) -> String {
    if !case.classname.is_empty() {
        return format!("{}.{}", case.classname, unittest_key(case));
    }
    if case.name.contains(" (") {
        case.name.clone()
    } else {
        display(case, hint)
    }
}

/// xmlrunner writes only the failing subtests of a test, as `test_x (value='a')`: they key
/// under their test.
pub(super) fn unittest_key(case: &Case) -> String {
    if case.classname.is_empty() || !case.name.ends_with(')') {
        return case.name.clone();
    }
    match case.name.split_once(" (") {
        Some((test, _)) if !test.contains('[') => test.to_string(),
        _ => case.name.clone(),
    }
}

/// A testcase as a node id, using the file the id named when the report has none.
pub(super) fn display(case: &Case, hint: &Query) -> String {
    let hinted = match &hint.scope {
        Scope::Classname { file: Some(f), .. } => Some(f.as_str()),
        _ => None,
    };
    let file = case
        .file
        .as_deref()
        .filter(|f| f.ends_with(".py"))
        .or(hinted);
    if case.classname.is_empty() {
        return case.name.replace('.', "/") + ".py";
    }
    if let Some(file) = file {
        let module = module_of(file);
        if let Some(rest) = case.classname.strip_prefix(module.as_str())
            && (rest.is_empty() || rest.starts_with('.'))
        {
            let mut id = file.to_string();
            for class in rest.split('.').filter(|c| !c.is_empty()) {
                id.push_str("::");
                id.push_str(class);
            }
            return format!("{id}::{}", case.name);
        }
    }
    // No file (pytest's default xunit2 report): the classname is the module's dotted path,
    // then the classes. pytest collects classes named `Test…` and modules by file name, so the
    // module ends before the first capitalised part; where a package itself is capitalised
    // the guess is wrong and the caller's resolution check says so.
    let parts: Vec<&str> = case.classname.split('.').collect();
    let classes = parts
        .iter()
        .position(|p| p.starts_with(|c: char| c.is_ascii_uppercase()))
        .unwrap_or(parts.len());
    if classes == 0 {
        return format!("{}::{}", case.classname, case.name);
    }
    let mut id = format!("{}.py", parts[..classes].join("/"));
    for class in &parts[classes..] {
        id.push_str("::");
        id.push_str(class);
    }
    format!("{id}::{}", case.name)
}
