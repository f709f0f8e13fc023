//! Whether the patched Python code ran from the checkout: a project installed in editable
//! mode elsewhere imports its original code, and a verdict about code that never ran means
//! nothing. The evidence is bytecode the run wrote into the checkout's `__pycache__`.

use std::path::Path;

/// Whether any of the patched Python files was imported from the checkout during the run,
/// judged by its bytecode in the checkout's `__pycache__`: bytecode written for the patched
/// source, as its header's source mtime and size tell, so that bytecode left by an earlier run
/// (a reused checkout keeps `__pycache__`) does not count. `None` when the patch touched no
/// Python file that still exists.
pub fn patched_python_imported(workdir: &Path, files: &[String]) -> Option<bool> {
    let mut any = false;
    for file in files.iter().filter(|f| f.ends_with(".py")) {
        let path = workdir.join(file);
        let Some(meta) = std::fs::metadata(&path).ok().filter(|m| m.is_file()) else {
            continue;
        };
        any = true;
        let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
            continue;
        };
        let prefix = format!("{}.", stem.to_string_lossy());
        let imported = std::fs::read_dir(dir.join("__pycache__"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with(&prefix)
                    && name.ends_with(".pyc")
                    && pyc_is_for(&e.path(), &path, &meta)
            });
        if imported {
            return Some(true);
        }
    }
    any.then_some(false)
}

/// Whether a `.pyc` was compiled from this source (PEP 552 header: magic, flags, then the
/// source's mtime and size, or its hash). Hash-based bytecode counts when its hash is the
/// source's: a build seed's bytecode of the unpatched file is not this run's.
fn pyc_is_for(pyc: &Path, source_path: &Path, source: &std::fs::Metadata) -> bool {
    use crate::util::pyc::{Header, header, source_hash};
    let Ok(bytes) = std::fs::read(pyc) else {
        return false;
    };
    match header(&bytes) {
        Some((magic, Header::Hash { hash, .. })) => {
            std::fs::read(source_path)
                .ok()
                .and_then(|s| source_hash(magic, &s))
                == Some(hash)
        }
        Some((_, Header::Timestamp { mtime, size })) => {
            let modified = source
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as u32);
            mtime == modified && size == source.len() as u32
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pycache_detection() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(pkg.join("__pycache__")).unwrap();
        std::fs::write(pkg.join("a.py"), "").unwrap();
        std::fs::write(pkg.join("b.py"), "").unwrap();
        let files = vec![
            "pkg/a.py".to_string(),
            "pkg/b.py".to_string(),
            "README".to_string(),
        ];
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        // Bytecode of an earlier version of b.py (another mtime) is not this run's.
        let pyc = pkg.join("__pycache__/b.cpython-311.pyc");
        let header = |mtime: u32, size: u32| {
            let mut h = vec![0xa7, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0];
            h.extend(mtime.to_le_bytes());
            h.extend(size.to_le_bytes());
            h
        };
        std::fs::write(&pyc, header(1, 0)).unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        let mtime = std::fs::metadata(pkg.join("b.py"))
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as u32;
        std::fs::write(&pyc, header(mtime, 1)).unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        std::fs::write(&pyc, header(mtime, 0)).unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(true));
        // A build seed's hash-checked bytecode of the unpatched b.py is not this run's; the
        // same for b.py as it is, is.
        let hashed = |source: &[u8]| {
            let mut h = vec![0xa7, 0x0d, 0x0d, 0x0a, 3, 0, 0, 0];
            h.extend(crate::util::pyc::source_hash(3495, source).unwrap());
            h
        };
        std::fs::write(&pyc, hashed(b"old = 1\n")).unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        std::fs::write(&pyc, hashed(b"")).unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(true));
        std::fs::write(&pyc, b"short").unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        assert_eq!(
            patched_python_imported(dir.path(), &["README".to_string()]),
            None
        );
        assert_eq!(
            patched_python_imported(dir.path(), &["gone.py".to_string()]),
            None
        );
    }
}
