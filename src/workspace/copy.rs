//! Directory trees copied, and store entries locked, as the workspace's stores (build seeds,
//! kept base trees) do it: copies are new files, never links to what is kept, so what a test
//! writes in its copy stays in its checkout.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// What a copy keeps of its original besides content and permissions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Keep {
    /// Modification times (build output, whose tools compare them); else the copies are new.
    pub(super) times: bool,
    /// Symbolic links, as links; else they are left out (build output never needs one, and a
    /// link in a seed could point anywhere).
    pub(super) links: bool,
    /// Directories' modes (a checkout's, whatever this process's umask).
    pub(super) dir_modes: bool,
}

/// A failed copy or lock: the path, and what failed.
pub(super) type Failed = (PathBuf, std::io::Error);

fn at(path: &Path) -> impl FnOnce(std::io::Error) -> Failed + '_ {
    move |e| (path.to_path_buf(), e)
}

/// Copy the tree `from` into `to` (created), keeping what `keep` says; `skip`: names left out
/// at the top. Files are copied with `copy_file_range` (a reflink where the file system has
/// them).
pub(super) fn copy_tree(from: &Path, to: &Path, skip: &[&str], keep: Keep) -> Result<(), Failed> {
    fs::create_dir_all(to).map_err(at(to))?;
    for entry in fs::read_dir(from).map_err(at(from))? {
        let entry = entry.map_err(at(from))?;
        if skip.iter().any(|s| entry.file_name() == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(at(&src))?;
        if kind.is_dir() {
            copy_tree(&src, &dst, &[], keep)?;
            if keep.dir_modes {
                let mode = entry.metadata().map_err(at(&src))?.permissions();
                fs::set_permissions(&dst, mode).map_err(at(&dst))?;
            }
        } else if kind.is_symlink() {
            if keep.links {
                let target = fs::read_link(&src).map_err(at(&src))?;
                std::os::unix::fs::symlink(target, &dst).map_err(at(&dst))?;
            }
        } else if kind.is_file() {
            fs::copy(&src, &dst).map_err(at(&src))?;
            if keep.times {
                let modified = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .map_err(at(&src))?;
                // Opened for reading: setting a time needs ownership, not write permission.
                File::open(&dst)
                    .and_then(|f| f.set_modified(modified))
                    .map_err(at(&dst))?;
            }
        }
    }
    Ok(())
}

/// The lock file `path` (created), not locked yet.
pub(super) fn lock_file(path: &Path) -> Result<File, Failed> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(at(path))
}

/// The lock file `path`, locked: shared (entries copied out) or exclusive (replaced, removed).
pub(super) fn lock(path: &Path, exclusive: bool) -> Result<File, Failed> {
    let file = lock_file(path)?;
    if exclusive {
        file.lock()
    } else {
        file.lock_shared()
    }
    .map_err(at(path))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::{Duration, SystemTime};

    fn tree(from: &Path) -> SystemTime {
        fs::create_dir_all(from.join("debug/deps")).unwrap();
        fs::create_dir_all(from.join("nextest")).unwrap();
        fs::write(from.join("debug/deps/a"), "a").unwrap();
        fs::write(from.join("nextest/junit.xml"), "x").unwrap();
        fs::set_permissions(from.join("debug"), fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", from.join("debug/link")).unwrap();
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        File::options()
            .write(true)
            .open(from.join("debug/deps/a"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        old
    }

    #[test]
    fn a_seed_copy_keeps_times_and_leaves_out_links_and_skipped_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("from");
        let old = tree(&from);
        let to = tmp.path().join("to");
        let keep = Keep {
            times: true,
            links: false,
            dir_modes: false,
        };
        copy_tree(&from, &to, &["nextest"], keep).unwrap();
        let meta = fs::metadata(to.join("debug/deps/a")).unwrap();
        assert_eq!(meta.modified().unwrap(), old);
        assert_eq!(fs::read(to.join("debug/deps/a")).unwrap(), b"a");
        assert!(!to.join("nextest").exists());
        assert!(fs::symlink_metadata(to.join("debug/link")).is_err());
    }

    #[test]
    fn a_tree_copy_keeps_links_and_modes_and_its_files_are_new() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("from");
        let old = tree(&from);
        let to = tmp.path().join("to");
        let keep = Keep {
            times: false,
            links: true,
            dir_modes: true,
        };
        copy_tree(&from, &to, &[], keep).unwrap();
        let meta = fs::metadata(to.join("debug/deps/a")).unwrap();
        assert!(meta.modified().unwrap() > old);
        assert_eq!(
            fs::read_link(to.join("debug/link")).unwrap(),
            Path::new("/etc/passwd")
        );
        let mode = fs::metadata(to.join("debug")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(fs::read(to.join("nextest/junit.xml")).unwrap(), b"x");
    }
}
