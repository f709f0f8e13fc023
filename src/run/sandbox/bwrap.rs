//! bubblewrap: the host's tree read-only, the checkout and the report directory writable, a
//! private `/tmp`, the cache, the pool and other runs hidden, no network, and a PID namespace
//! whose processes all die with the run.

use super::jail::Paths;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The flags every sandboxed command gets; the probe runs with them too, so `auto` finds
/// bwrap only where a real run would work.
const BASE: &[&str] = &[
    // A process that leaves the group (`setsid`, `setpgid`) still dies with the run, and
    // with patchgrade itself when that is SIGKILLed.
    "--die-with-parent",
    "--unshare-pid",
    // No controlling terminal: code under test cannot push keystrokes into the user's shell.
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    // Private and writable; it must come before the binds under /tmp, or it hides them.
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/var/tmp",
];

/// Where the checkout is seen inside: one path for every run, as a container's `/testbed`, so
/// that what a build records of its own directory (rustc's incremental cache depends on it)
/// is the same in the baseline that left a build seed and in the candidate that starts from it.
pub(super) const WORKDIR: &str = "/tmp/testbed";

/// The checkout's path inside: [`WORKDIR`], unless the run's own directories are under it
/// (a `--keep` there), where it stays at its own path.
pub(super) fn workdir_inside(paths: &Paths) -> PathBuf {
    let inside = Path::new(WORKDIR);
    let clash = [&paths.out, &paths.scripts]
        .into_iter()
        .chain(&paths.readonly)
        .any(|p| p.starts_with(inside) || inside.starts_with(p));
    if clash {
        paths.workdir.clone()
    } else {
        inside.to_path_buf()
    }
}

/// Whether bwrap runs here, probed once per process.
pub(super) fn available() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let out = std::process::Command::new("bwrap")
                .args(BASE)
                .args(["--unshare-net", "--", "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot run bwrap: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                let err = String::from_utf8_lossy(&out.stderr);
                Err(format!("bwrap {}: {}", out.status, err.trim()))
            }
        })
        .clone()
}

/// The directories of the tools on `PATH` that the sandbox's private temporary directories
/// (`/tmp`, `/var/tmp`, `TMPDIR`) would cover, to be brought back read-only: a `PATH` entry
/// itself, or for a `bin` or `.bin` directory its parent (a virtualenv's `.venv/bin` needs
/// `.venv`, a `node_modules/.bin` its `node_modules`). Never one that would show what is
/// hidden: a temporary directory itself, a directory holding a hidden one, or one inside a
/// hidden directory that is not a temporary one (a run, the cache, the pool).
pub(super) fn path_tools(path: &std::ffi::OsStr, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in std::env::split_paths(path) {
        if let Some(dir) = bring_back(with_its_tree(entry), hidden)
            && !found.contains(&dir)
        {
            found.push(dir);
        }
    }
    found
}

/// The private temporary directories, covered by an empty tmpfs each.
fn private() -> [PathBuf; 3] {
    [
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        std::env::temp_dir(),
    ]
}

/// A `bin` or `.bin` directory stands for its parent (a virtualenv, a `node_modules`).
fn with_its_tree(dir: PathBuf) -> PathBuf {
    let bin = dir.file_name().is_some_and(|n| n == "bin" || n == ".bin");
    match dir.parent() {
        Some(parent) if bin => parent.to_path_buf(),
        _ => dir,
    }
}

/// `path` if the private temporary directories cover it and bringing it back read-only shows
/// nothing hidden: not a temporary directory itself, nor a directory holding a hidden one,
/// nor one inside a hidden directory that is not a temporary one.
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
/// where it leads, if it is a link), the directory it is (or its file's), widened to the tree
/// of a `bin` directory; the file alone where that directory is a temporary one itself (a
/// script in `/tmp`). Only what the private temporary directories would cover, and never
/// what shows a hidden directory ([`bring_back`]).
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
                p
            } else {
                with_its_tree(dir)
            };
            if let Some(shown) = bring_back(wanted, hidden)
                && !found.iter().any(|f| shown.starts_with(f))
            {
                found.push(shown);
            }
        }
    }
    found
}

/// Of these paths (named in a failed command's output), those the host has but the commands
/// cannot see here: under a private temporary directory or a hidden one, and not brought
/// back (the side's own directories, what was shown read-only or by the user).
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

/// The command line running `sh script` in the checkout, confined; `writable`: host
/// directories this command alone may write (a preset's dependency cache, for its download
/// step).
pub(super) fn argv(
    paths: &Paths,
    script: &Path,
    network: bool,
    writable: &[PathBuf],
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec!["bwrap".into()];
    argv.extend(BASE.iter().map(OsString::from));
    if !network {
        // Its own loopback only: a fixed port is free in every run.
        argv.push("--unshare-net".into());
    }
    // What the user asked to show, before the hidden directories are covered: patchgrade's
    // own stay hidden even under a path the user shows (`--sandbox-rw /tmp`).
    for (path, writable) in &paths.shown {
        let bind = if *writable { "--bind" } else { "--ro-bind" };
        argv.extend([bind.into(), path.into(), path.into()]);
    }
    let under_shown = |p: &Path| paths.shown.iter().any(|(s, _)| p.starts_with(s));
    // Hidden: an empty tmpfs over each, parents first, before the binds that bring back
    // this run's own directories.
    let mut hidden: Vec<&PathBuf> = paths
        .hidden
        .iter()
        // Under the private /tmp already, unless the user showed a path holding it; and `/`
        // is never covered whole.
        .filter(|p| {
            (under_shown(p) || (!p.starts_with("/tmp") && !p.starts_with("/var/tmp")))
                && p.parent().is_some()
        })
        .collect();
    hidden.sort_by_key(|p| p.components().count());
    hidden.dedup();
    for dir in hidden {
        argv.extend(["--tmpfs".into(), dir.into()]);
    }
    for dir in &paths.readonly {
        argv.extend(["--ro-bind".into(), dir.into(), dir.into()]);
    }
    argv.extend(["--bind".into(), (&paths.workdir).into()]);
    argv.push(workdir_inside(paths).into());
    argv.extend(["--bind".into(), (&paths.out).into(), (&paths.out).into()]);
    argv.extend(["--ro-bind".into(), paths.scripts.clone().into()]);
    argv.push(paths.scripts.clone().into());
    for dir in writable {
        argv.extend(["--bind".into(), dir.into(), dir.into()]);
    }
    argv.extend(["--chdir".into(), workdir_inside(paths).into()]);
    argv.extend(["--".into(), "sh".into()]);
    argv.push(script.into());
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Paths {
        Paths {
            workdir: "/pool/abc/slot-0".into(),
            out: "/tmp/patchgrade-x/candidate/out".into(),
            scripts: "/tmp/patchgrade-x/candidate/scripts".into(),
            readonly: vec!["/tmp/user/repo/.git/objects".into()],
            tools: Vec::new(),
            hidden: vec![
                "/tmp/patchgrade-x".into(),
                "/pool".into(),
                "/pool/abc".into(),
            ],
            named: Vec::new(),
            shown: Vec::new(),
        }
    }

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

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn hidden_dirs_come_before_the_binds_that_bring_this_run_back() {
        let p = paths();
        let argv = words(&argv(&p, Path::new("/s/test.sh"), false, &[]));
        let at = |w: &[&str]| {
            argv.windows(w.len())
                .position(|x| x == w)
                .unwrap_or_else(|| panic!("{w:?} not in {argv:?}"))
        };
        let pool = at(&["--tmpfs", "/pool"]);
        // The checkout is seen at one path in every run.
        let slot = at(&["--bind", "/pool/abc/slot-0", WORKDIR]);
        assert!(at(&["--chdir", WORKDIR]) > slot);
        assert!(at(&["--tmpfs", "/pool/abc"]) > pool && pool < slot);
        let (out, scripts) = (p.out.to_str().unwrap(), p.scripts.to_str().unwrap());
        assert!(at(&["--tmpfs", "/tmp"]) < at(&["--bind", out, out]));
        assert!(at(&["--ro-bind", scripts, scripts]) > slot);
        let objects = "/tmp/user/repo/.git/objects";
        assert!(at(&["--ro-bind", objects, objects]) > at(&["--tmpfs", "/tmp"]));
        // Under the private /tmp already: not mounted again.
        assert!(!argv.iter().any(|a| a == "/tmp/patchgrade-x"));
        assert!(argv.contains(&"--unshare-net".to_string()));
        assert_eq!(&argv[argv.len() - 3..], ["--", "sh", "/s/test.sh"]);
        let open = words(&super::argv(&p, Path::new("/s/t.sh"), true, &[]));
        assert!(!open.contains(&"--unshare-net".to_string()));
    }

    #[test]
    fn the_checkout_keeps_its_own_path_where_the_run_is_under_the_fixed_one() {
        let mut p = paths();
        assert_eq!(workdir_inside(&p), Path::new(WORKDIR));
        p.out = Path::new(WORKDIR).join("candidate/out");
        assert_eq!(workdir_inside(&p), p.workdir);
    }
}
