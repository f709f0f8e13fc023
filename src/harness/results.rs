//! A results directory: one verdict per task, as `batch` writes it and `report`, `compare` and
//! `merge` read it.
//!
//! ```text
//! DIR/results/<instance_id>.json   the verdict, written atomically
//! DIR/logs/<instance_id>/          the tails of the runs' logs
//! DIR/cache/                       baselines, shared by every prediction of a task
//! ```

use super::dataset::InputError;
use crate::judge::verdict::Verdict;
use std::path::{Path, PathBuf};

/// A result (or the directory for it) that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write: {source}")]
pub struct WriteError {
    /// The file or directory.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

/// The file name for an instance id: ids are kept as they are where they are safe in a file
/// name, and bytes outside `[A-Za-z0-9._-]` are written `%XX` (so no id can escape the
/// directory or collide with another).
pub fn file_stem(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.starts_with('.') {
        out.replace_range(0..1, "%2E");
    }
    out
}

/// Where a task's result lives in an output directory.
pub fn result_path(out: &Path, id: &str) -> PathBuf {
    out.join("results").join(format!("{}.json", file_stem(id)))
}

/// Write a result so that a reader (or a resumed run) sees the whole file or none.
pub fn write_result(path: &Path, verdict: &Verdict) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let json = format!("{}\n", verdict.json());
    crate::util::atomic::write(path, json.as_bytes()).map_err(fail)
}

/// Write results into a new results directory (`DIR/results/`), refusing one that holds
/// results already: runs are never mixed. Returns how many were written.
pub fn write_all(out: &Path, verdicts: &[Verdict]) -> Result<usize, InputError> {
    let results = out.join("results");
    let fail = |path: &Path, reason: String| InputError {
        path: path.to_path_buf(),
        line: None,
        reason,
    };
    if let Ok(entries) = std::fs::read_dir(&results)
        && entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
    {
        return Err(fail(&results, "already holds results".into()));
    }
    std::fs::create_dir_all(&results).map_err(|e| fail(&results, e.to_string()))?;
    for v in verdicts {
        let path = result_path(out, id(v));
        write_result(&path, v).map_err(|e| fail(&path, e.source.to_string()))?;
    }
    Ok(verdicts.len())
}

/// Every result of an output directory (`DIR/results/*.json`), in instance id order.
pub fn load(dir: &Path) -> Result<Vec<Verdict>, InputError> {
    let results = dir.join("results");
    let fail = |path: &Path, reason: String| InputError {
        path: path.to_path_buf(),
        line: None,
        reason,
    };
    let entries = std::fs::read_dir(&results).map_err(|e| {
        fail(
            &results,
            format!("{e} (not a batch output directory: it has no results/)"),
        )
    })?;
    let mut verdicts = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| fail(&results, e.to_string()))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !name.ends_with(".json") || name.starts_with('.') {
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|e| fail(&path, e.to_string()))?;
        let verdict: Verdict = serde_json::from_slice(&bytes)
            .map_err(|e| fail(&path, format!("not a patchgrade result: {e}")))?;
        verdicts.push(verdict);
    }
    verdicts.sort_by(|a, b| id(a).cmp(id(b)));
    Ok(verdicts)
}

/// A verdict's instance id ("" when it has none).
pub fn id(v: &Verdict) -> &str {
    v.task.instance_id.as_deref().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_safe_and_distinct() {
        assert_eq!(file_stem("django__django-11099"), "django__django-11099");
        assert_eq!(file_stem("a/b"), "a%2Fb");
        assert_eq!(file_stem("../x"), "%2E.%2Fx");
        assert_eq!(file_stem(".hidden"), "%2Ehidden");
        assert_ne!(file_stem("a b"), file_stem("a_b"));
    }
}
