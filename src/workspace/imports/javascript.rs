//! JavaScript's imports: `import … from`, `import(…)` and `require(…)` of a relative path.

use std::path::{Component, Path, PathBuf};

/// The relative paths a JavaScript file imports or requires, resolved against its directory.
pub(super) fn js_imports(path: &str, source: &str) -> Vec<String> {
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for quote in ['\'', '"', '`'] {
        let mut rest = source;
        while let Some(at) = rest.find(quote) {
            let after = &rest[at + 1..];
            let Some(end) = after.find(quote) else { break };
            let spec = &after[..end];
            let before = rest[..at].trim_end();
            let imports = before.ends_with("from")
                || before.ends_with("require(")
                || before.ends_with("import(")
                || before.ends_with("import");
            if imports && (spec.starts_with("./") || spec.starts_with("../")) {
                out.extend(normalize(&dir.join(spec)));
            }
            rest = &after[end + 1..];
        }
    }
    out
}

/// A path with `.` and `..` resolved, as `/`-separated text; `None` above the root.
fn normalize(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(
        PathBuf::from(parts.join("/"))
            .to_string_lossy()
            .into_owned(),
    )
}

/// The files an import specifier may mean: itself, with each extension, or its index file.
pub(super) fn js_candidates(spec: &str) -> Vec<String> {
    let exts = ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];
    let mut out = vec![spec.to_string()];
    for x in exts {
        out.push(format!("{spec}.{x}"));
        out.push(format!("{spec}/index.{x}"));
    }
    // `./x.js` in TypeScript sources means `./x.ts`.
    if let Some(stem) = spec.strip_suffix(".js") {
        out.push(format!("{stem}.ts"));
        out.push(format!("{stem}.tsx"));
    }
    out
}
