//! What can go wrong rendering a document, or naming its format.

/// A document that could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The JSON serializer failed.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The TOML serializer failed (a task file).
    #[error("cannot write the task as TOML: {0}")]
    Toml(#[from] toml::ser::Error),
    /// The JUnit serializer failed.
    #[error("cannot render the JUnit report: {0}")]
    Junit(#[from] quick_junit::SerializeError),
}

/// A format name that is not one of `VerdictFormat::NAMES`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (known: human, json, feedback, junit)")]
pub struct UnknownFormat(pub String);
