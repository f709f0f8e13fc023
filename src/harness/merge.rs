//! `merge`: the output directories of a sharded run joined into one.

use super::dataset::InputError;
use super::results::{WriteError, file_stem, id, load, result_path, write_result};
use crate::judge::verdict::Verdict;
use std::path::{Path, PathBuf};

/// Why directories cannot be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// An input is not a batch output directory, or a result in it is unreadable.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Two inputs hold different results for one task: which is right is not ours to guess.
    #[error("`{id}` has different results in {first} and {second}")]
    Conflict {
        /// The task.
        id: String,
        /// The first directory holding it.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// The output could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Join the results (and logs) of `inputs` into `out`. The same result in two inputs (a task
/// graded twice, identically) is kept once. Returns how many results `out` now holds.
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<usize, MergeError> {
    let mut all: std::collections::BTreeMap<String, (PathBuf, Verdict)> = Default::default();
    for dir in inputs {
        for verdict in load(dir)? {
            let key = id(&verdict).to_string();
            match all.get(&key) {
                Some((first, kept)) if !same_result(kept, &verdict) => {
                    return Err(MergeError::Conflict {
                        id: key,
                        first: first.clone(),
                        second: dir.clone(),
                    });
                }
                Some(_) => {}
                None => {
                    all.insert(key, (dir.clone(), verdict));
                }
            }
        }
    }
    let results = out.join("results");
    std::fs::create_dir_all(&results).map_err(|source| WriteError {
        path: results.clone(),
        source,
    })?;
    for (key, (dir, verdict)) in &all {
        write_result(&result_path(out, key), verdict)?;
        let stem = file_stem(key);
        let logs = dir.join("logs").join(&stem);
        if logs.is_dir() && dir != out {
            copy_dir(&logs, &out.join("logs").join(&stem))?;
        }
    }
    Ok(all.len())
}

/// Equal but for timings: the same task graded twice the same way.
fn same_result(a: &Verdict, b: &Verdict) -> bool {
    a.outcome == b.outcome && a.tests == b.tests && a.error == b.error && a.patch == b.patch
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), WriteError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    std::fs::create_dir_all(to).map_err(fail(to))?;
    for entry in std::fs::read_dir(from).map_err(fail(from))?.flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::copy(entry.path(), &target).map_err(fail(&target))?;
        }
    }
    Ok(())
}
