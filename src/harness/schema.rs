//! The JSON Schemas of patchgrade's documents, generated from the types that write them: the
//! verdict (`check`, `grade`, `batch` results, the MCP tool's structured content), the report
//! and the comparison. The repository ships them in `schemas/`; a test keeps those equal to
//! these.

use super::compare::Comparison;
use super::summary::Summary;
use crate::judge::verdict::Verdict;

/// The documents that have a schema, by the name `patchgrade schema` takes.
pub const NAMES: [&str; 3] = ["verdict", "report", "compare"];

/// The JSON Schema (draft 2020-12) of a document, as pretty JSON with a final newline;
/// `None` for a name that is not one.
pub fn schema(name: &str) -> Option<String> {
    let schema = match name {
        "verdict" => schemars::schema_for!(Verdict),
        "report" => schemars::schema_for!(Summary),
        "compare" => schemars::schema_for!(Comparison),
        _ => return None,
    };
    let json = serde_json::to_string_pretty(&schema).ok()?;
    Some(format!("{json}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files in `schemas/` are these schemas: a type that changes without them fails here.
    #[test]
    fn the_shipped_schemas_are_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        for name in NAMES {
            let path = dir.join(format!("{name}.schema.json"));
            let shipped = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                shipped == schema(name).unwrap(),
                "{} is stale: cargo run -- schema {name} > schemas/{name}.schema.json",
                path.display()
            );
        }
        assert!(schema("nothing").is_none());
    }
}
