//! What bubblewrap shows of the host besides the side's own directories (the tools on `PATH`,
//! the paths the user named) and what it hides (a private `/tmp`, an empty home, patchgrade's
//! own directories), and which paths a failed command's output names that it hid.

use super::super::paths::Paths;
use std::path::{Path, PathBuf};

/// The directories of the tools on `PATH` that the sandbox's covered directories (the
/// private temporary ones, the home) would hide, to be brought back read-only, each with the
/// tree it needs ([`tool_tree`]). Never one that would show what is hidden: a covered
/// directory itself, a directory holding a hidden one, or one inside a hidden directory that
/// is not a covered one (a run, the cache, the pool).
pub(super) fn path_tools(path: &std::ffi::OsStr, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in std::env::split_paths(path) {
        for dir in tool_tree(entry) {
            if let Some(dir) = bring_back(dir, hidden)
                && !found.contains(&dir)
            {
                found.push(dir);
            }
        }
    }
    found
}

/// The user's home, covered by an empty tmpfs so that the tests read none of the user's
/// files (registry tokens, keys, shell history): `HOME` where it is an absolute directory
/// other than `/` or a private temporary directory.
pub(super) fn home() -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let temporary = private_temporary();
    (home.is_absolute() && home.parent().is_some() && home.is_dir() && !temporary.contains(&home))
        .then_some(home)
}

/// The private temporary directories, covered by an empty tmpfs each.
fn private_temporary() -> [PathBuf; 3] {
    [
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        std::env::temp_dir(),
    ]
}

/// Every directory the sandbox covers with an empty one: the private temporary directories
/// and the home (also by its real path, where `HOME` is a link).
fn private() -> Vec<PathBuf> {
    let mut covered = private_temporary().to_vec();
    if let Some(home) = home() {
        if let Ok(real) = std::fs::canonicalize(&home)
            && real != home
        {
            covered.push(real);
        }
        covered.push(home);
    }
    covered
}

/// What a tool directory needs shown with it. A `node_modules/.bin` needs its `node_modules`.
/// A `bin` directory needs its parent (a virtualenv, an interpreter's install): the whole
/// parent under a temporary directory, but in the home only the parts an install has (`lib`,
/// `lib64`, `libexec`, `include`, a virtualenv's `pyvenv.cfg`), since beside `~/.cargo/bin`
/// or `~/.local/bin` lie the user's credentials and data. A virtualenv needs its base
/// interpreter too (`home` in its `pyvenv.cfg`), which is often elsewhere in the home.
fn tool_tree(dir: PathBuf) -> Vec<PathBuf> {
    let name = dir.file_name().map(|n| n.to_os_string());
    let Some(parent) = dir.parent().map(Path::to_path_buf) else {
        return vec![dir];
    };
    if name.as_deref() == Some(".bin".as_ref()) {
        return vec![parent];
    }
    if name.as_deref() != Some("bin".as_ref()) {
        return vec![dir];
    }
    let in_temporary = private_temporary().iter().any(|t| parent.starts_with(t));
    let mut tree = if in_temporary {
        vec![parent.clone()]
    } else {
        ["lib", "lib64", "libexec", "include", "pyvenv.cfg"]
            .iter()
            .map(|part| parent.join(part))
            .chain([dir])
            .collect()
    };
    if let Some(base) = venv_base(&parent) {
        tree.extend(tool_tree(base));
    }
    tree
}

/// A virtualenv's base interpreter's directory: `home` in its `pyvenv.cfg`, when that is
/// another absolute `bin` directory (so the recursion of [`tool_tree`] ends).
fn venv_base(venv: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    let elsewhere = home.is_absolute() && !home.starts_with(venv);
    (elsewhere && home.file_name().is_some_and(|n| n == "bin")).then_some(home)
}

/// `path` if a covered directory (temporary, the home) hides it and bringing it back
/// read-only shows nothing hidden: not a covered directory itself, nor a directory holding a
/// hidden one, nor one inside a hidden directory that is not a covered one.
fn bring_back(path: PathBuf, hidden: &[PathBuf]) -> Option<PathBuf> {
    let private = private();
    let covered = private.iter().any(|p| path.starts_with(p));
    let shows_hidden = private.contains(&path)
        || hidden
            .iter()
            .any(|h| h.starts_with(&path) || (path.starts_with(h) && !private.contains(h)));
    (path.is_absolute() && covered && !shows_hidden).then_some(path)
}

/// Of the host paths the user named, what to bring back read-only: for each that exists (and
/// where it leads, if it is a link), the directory it is (or its file's), with the tree a
/// `bin` directory needs ([`tool_tree`]); the file alone where that directory is a covered
/// one itself (a script in `/tmp` or in the home) or would show a hidden one. Only what the
/// covered directories would hide, and never what shows a hidden directory ([`bring_back`]).
pub(super) fn named_paths(named: &[PathBuf], hidden: &[PathBuf]) -> Vec<PathBuf> {
    let private = private();
    let mut found: Vec<PathBuf> = Vec::new();
    for path in named {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let mut each = vec![path.clone()];
        if meta.file_type().is_symlink()
            && let Ok(target) = std::fs::canonicalize(path)
        {
            each.push(target);
        }
        for p in each {
            let dir = if p.is_dir() {
                p.clone()
            } else {
                p.parent().map_or_else(|| p.clone(), Path::to_path_buf)
            };
            let wanted = if private.contains(&dir) {
                vec![p.clone()]
            } else {
                tool_tree(dir)
            };
            let mut shown: Vec<PathBuf> = wanted
                .into_iter()
                .filter_map(|w| bring_back(w, hidden))
                .collect();
            // A file whose directory would show a hidden one (a script beside the pool):
            // the file alone.
            if shown.is_empty() && !p.is_dir() {
                shown.extend(bring_back(p, hidden));
            }
            for shown in shown {
                if !found.iter().any(|f| shown.starts_with(f)) {
                    found.push(shown);
                }
            }
        }
    }
    found
}

/// Of these paths (named in a failed command's output), those the host has but the commands
/// cannot see here: under a covered directory or a hidden one, and not brought back (the
/// side's own directories, what was shown read-only or by the user).
pub(super) fn hidden_paths(paths: &Paths, named: &[PathBuf]) -> Vec<PathBuf> {
    let private = private();
    let seen = [&paths.workdir, &paths.out, &paths.scripts]
        .into_iter()
        .chain(&paths.readonly)
        .chain(paths.shown.iter().map(|(p, _)| p));
    let seen: Vec<&PathBuf> = seen.collect();
    named
        .iter()
        .filter(|p| {
            let covered = private
                .iter()
                .chain(&paths.hidden)
                .any(|h| p.starts_with(h));
            covered
                && !seen.iter().any(|s| p.starts_with(s))
                && std::fs::symlink_metadata(p).is_ok()
        })
        .cloned()
        .collect()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_on_path_under_tmp_come_back_without_what_is_hidden() {
        let hidden: Vec<PathBuf> = vec!["/tmp/run-root".into(), "/home/u/.cache/patchgrade".into()];
        let path = std::ffi::OsString::from(
            "/tmp/ci/.venv/bin:/usr/bin:/tmp/ci/.jsenv/node_modules/.bin:/tmp/tools:/tmp/bin:\
             /tmp:/tmp/run-root/work/bin:/home/u/.cache/patchgrade/x:relative/bin:/tmp/ci/.venv/bin",
        );
        let tools = path_tools(&path, &hidden);
        let want: Vec<PathBuf> = ["/tmp/ci/.venv", "/tmp/ci/.jsenv/node_modules", "/tmp/tools"]
            .iter()
            .map(PathBuf::from)
            .collect();
        // `/tmp/bin` would show all of /tmp; the run root and the cache stay hidden.
        assert_eq!(tools, want);
    }

    #[test]
    fn a_bin_directory_in_the_home_brings_back_its_install_and_not_its_neighbours() {
        let tree = |d: &str| tool_tree(PathBuf::from(d));
        let p = |d: &str| PathBuf::from(d);
        // Beside `~/.cargo/bin` lies `credentials.toml`: the bin directory alone, with the
        // parts an install would have (only those that exist are bound).
        let cargo = tree("/home/u/.cargo/bin");
        assert!(cargo.contains(&p("/home/u/.cargo/bin")), "{cargo:?}");
        assert!(cargo.contains(&p("/home/u/.cargo/lib")), "{cargo:?}");
        assert!(!cargo.contains(&p("/home/u/.cargo")), "{cargo:?}");
        assert!(
            cargo.iter().all(|d| d.starts_with("/home/u/.cargo/")),
            "{cargo:?}"
        );
        // Under a temporary directory, the whole tree; a `.bin` its `node_modules`; any
        // other directory itself.
        assert_eq!(tree("/tmp/ci/.venv/bin"), [p("/tmp/ci/.venv")]);
        assert_eq!(
            tree("/home/u/app/node_modules/.bin"),
            [p("/home/u/app/node_modules")]
        );
        assert_eq!(tree("/home/u/.pyenv/shims"), [p("/home/u/.pyenv/shims")]);
        assert_eq!(tree("/"), [p("/")]);
    }

    #[test]
    fn a_named_file_beside_a_hidden_directory_comes_back_alone() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("mk.py");
        std::fs::write(&script, "").unwrap();
        let pool = dir.path().join("pool");
        std::fs::create_dir(&pool).unwrap();
        let named = std::slice::from_ref(&script);
        // Its directory holds the pool: shown whole, it would show the pool.
        assert_eq!(
            named_paths(named, std::slice::from_ref(&pool)),
            std::slice::from_ref(&script)
        );
        assert_eq!(named_paths(named, &[]), [dir.path().to_path_buf()]);
    }

    #[test]
    fn a_virtualenv_brings_back_its_base_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        let base = "/home/u/.pyenv/versions/3.11.7/bin";
        let cfg = format!("home = {base}\ninclude-system-site-packages = false\n");
        std::fs::write(venv.join("pyvenv.cfg"), cfg).unwrap();
        let tree = tool_tree(venv.join("bin"));
        assert!(tree.contains(&venv), "{tree:?}");
        assert!(tree.contains(&PathBuf::from(base)), "{tree:?}");
        assert!(tree.contains(&PathBuf::from("/home/u/.pyenv/versions/3.11.7/lib")));
        // A `home` that is the virtualenv itself, relative, or not a bin directory: ignored.
        for home in ["bin", "/home/u/.pyenv/versions/3.11.7", "VENV/bin"] {
            let home = home.replace("VENV", &venv.display().to_string());
            std::fs::write(venv.join("pyvenv.cfg"), format!("home = {home}\n")).unwrap();
            assert_eq!(
                tool_tree(venv.join("bin")),
                std::slice::from_ref(&venv),
                "{home}"
            );
        }
    }
}
