//! The small values a user writes by hand: durations, id files, `KEY=VALUE` pairs.

use std::time::Duration;

/// A value that does not parse, with what it should look like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not a duration.
    #[error("invalid duration `{text}`: {reason}")]
    Duration {
        /// The text given.
        text: String,
        /// humantime's reason.
        reason: String,
    },
    /// An id file that starts as a JSON array but is not one of strings.
    #[error("invalid JSON array of ids: {0}")]
    IdArray(String),
    /// Not `KEY=VALUE`.
    #[error("invalid environment variable `{0}`: expected KEY=VALUE")]
    Env(String),
}

/// Parse `1h30m`, `90s`, `45` (seconds).
pub fn parse_duration(s: &str) -> Result<Duration, ValueError> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s).map_err(|e| ValueError::Duration {
        text: s.to_string(),
        reason: e.to_string(),
    })
}

/// Parse an id file: a JSON array of strings, or one id per line (blank lines and `#`
/// comments skipped). A line is the id exactly, spaces included (vitest titles end in
/// spaces); only the line end (`\n` or `\r\n`) is removed.
pub fn parse_id_file(text: &str) -> Result<Vec<String>, ValueError> {
    // A byte-order mark is an editor's, never part of the first id.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return serde_json::from_str(trimmed).map_err(|e| ValueError::IdArray(e.to_string()));
    }
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// Split `KEY=VALUE`.
pub fn parse_env(s: &str) -> Result<(String, String), ValueError> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(ValueError::Env(s.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_files() {
        assert_eq!(
            parse_id_file("a\n\n# c\n  \nb \r\nc › d \n").unwrap(),
            ["a", "b ", "c › d "]
        );
        assert_eq!(parse_id_file(" [\"a b\", \"c\"]").unwrap(), ["a b", "c"]);
        assert!(matches!(
            parse_id_file("[oops"),
            Err(ValueError::IdArray(_))
        ));
        assert!(matches!(
            parse_id_file("[1, 2]"),
            Err(ValueError::IdArray(_))
        ));
        assert_eq!(parse_id_file("\u{feff}t.py::a\n").unwrap(), ["t.py::a"]);
        assert_eq!(parse_id_file("\u{feff}[\"a\"]").unwrap(), ["a"]);
    }

    #[test]
    fn durations_and_env() {
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(
            parse_duration("x")
                .unwrap_err()
                .to_string()
                .starts_with("invalid duration `x`")
        );
        assert_eq!(parse_env("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert_eq!(parse_env("=x"), Err(ValueError::Env("=x".into())));
        assert!(parse_env("nope").is_err());
    }
}
