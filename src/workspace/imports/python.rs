//! Python's imports: `import a.b` and `from … import …`, relative imports resolved against
//! the file's package.

use std::collections::BTreeSet;

/// `pkg/sub/mod.py` → `pkg.sub.mod` (`__init__.py` names its package; a leading `src/` or
/// `lib/` is not part of the name).
pub(super) fn python_module(path: &str) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let stem = ["src/", "lib/"]
        .iter()
        .find_map(|p| stem.strip_prefix(p))
        .unwrap_or(stem);
    Some(stem.replace('/', "."))
}

/// Every module a Python file's import statements name, absolute: `import a.b` names `a.b`;
/// `from a import b` names `a` and `a.b` (b may be a module); relative imports are resolved
/// against the file's package.
pub(super) fn python_imports(path: &str, source: &str) -> BTreeSet<String> {
    // The file's package, for relative imports.
    let module = python_module(path).unwrap_or_default();
    let mut here: Vec<&str> = module.split('.').collect();
    here.pop();
    let mut out = BTreeSet::new();
    for statement in logical_lines(source) {
        let s = statement.trim();
        if let Some(rest) = s.strip_prefix("import ") {
            for name in rest.split(',') {
                let name = name.split(" as ").next().unwrap_or("").trim();
                if !name.is_empty() {
                    out.insert(name.to_string());
                }
            }
        } else if let Some(rest) = s.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else {
                continue;
            };
            let from = from.trim();
            let dots = from.chars().take_while(|c| *c == '.').count();
            let base = if dots == 0 {
                from.to_string()
            } else {
                let up = dots - 1;
                if up > here.len() {
                    continue;
                }
                let mut parts: Vec<&str> = here[..here.len() - up].to_vec();
                let rest = &from[dots..];
                if !rest.is_empty() {
                    parts.push(rest);
                }
                parts.join(".")
            };
            if !base.is_empty() {
                out.insert(base.clone());
            }
            let names = names.trim().trim_start_matches('(').trim_end_matches(')');
            for name in names.split(',') {
                let name = name.split(" as ").next().unwrap_or("").trim();
                if name.is_empty() || name == "*" {
                    continue;
                }
                out.insert(if base.is_empty() {
                    name.to_string()
                } else {
                    format!("{base}.{name}")
                });
            }
        }
    }
    out
}

/// Statements joined across the lines a parenthesised import spans; comments dropped.
fn logical_lines(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for line in source.lines() {
        let line = line.split('#').next().unwrap_or("");
        match &mut open {
            Some(s) => {
                s.push(' ');
                s.push_str(line.trim());
                if line.contains(')') {
                    out.extend(open.take());
                }
            }
            None if line.contains('(')
                && !line.contains(')')
                && line.trim_start().starts_with("from ") =>
            {
                open = Some(line.trim().to_string());
            }
            None => out.push(line.to_string()),
        }
    }
    out.extend(open);
    out
}
