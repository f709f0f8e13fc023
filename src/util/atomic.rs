//! Writing output files whole or not at all: a full disk or a kill halfway leaves the old file
//! (or none), never a truncated one that a reader or a resumed run would take for a result.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` through a temporary file in the same directory, synced, then
/// renamed over it. A path that exists and is not a regular file (`/dev/stdout`, a FIFO) is
/// written in place: renaming over it would replace the device, not write to it.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".partial-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // A temporary file is 0600; the result gets the mode a plain write would give it.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = 0o666 & !umask();
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The process's umask, read from `/proc/self/status` (setting it to read it, as `umask(2)`
/// does, would race with other threads creating files); the usual 022 where it cannot be read.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write(&path, b"old").unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o666 & !umask(), "a plain write's mode, not 0600");
        }
        // A directory where the file should be: the error, and nothing else changed.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), "").unwrap();
        assert!(write(&blocked, b"data").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_device_is_written_in_place() {
        write(Path::new("/dev/null"), b"x").unwrap();
        assert!(Path::new("/dev/null").exists());
        let full = write(Path::new("/dev/full"), b"x").unwrap_err();
        assert_eq!(full.raw_os_error(), Some(28), "ENOSPC");
    }
}
