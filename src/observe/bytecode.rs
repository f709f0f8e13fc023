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
                name.starts_with(&prefix) && name.ends_with(".pyc") && pyc_is_for(&e.path(), &meta)
            });
        if imported {
            return Some(true);
        }
    }
    any.then_some(false)
}

/// Whether a `.pyc` was compiled from a source with this metadata (PEP 552 header: magic,
/// flags, then the source's mtime and size as 32-bit little-endian numbers). Hash-based
/// bytecode carries no mtime; it counts as written for the source.
fn pyc_is_for(pyc: &Path, source: &std::fs::Metadata) -> bool {
    use std::io::Read;
    let mut header = [0u8; 16];
    let read = std::fs::File::open(pyc).and_then(|mut f| f.read_exact(&mut header));
    if read.is_err() {
        return false;
    }
    let word =
        |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    if word(4) & 1 == 1 {
        return true;
    }
    let mtime = source
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as u32);
    word(8) == mtime && word(12) == source.len() as u32
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
