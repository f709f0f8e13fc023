//! bubblewrap: the host's tree read-only, the checkout and the report directory writable, a
//! private `/tmp`, an empty home, the cache, the pool and other runs hidden, no network, and a
//! PID namespace whose processes all die with the run.

mod reach;

use super::backend::{Backend, Confined, Env, Pending};
use super::paths::Paths;
use crate::run::Limits;
use reach::home;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// bubblewrap, around each command on the host.
#[derive(Debug)]
pub(super) struct Bwrap;

impl Backend for Bwrap {
    fn name(&self) -> &'static str {
        "bwrap"
    }

    fn image(&self) -> Option<&str> {
        None
    }

    fn cache_key(&self) -> String {
        self.name().to_string()
    }

    /// The host's tools, as without a sandbox: a build seed made here serves both.
    fn seed_place(&self) -> String {
        "host".into()
    }

    /// The candidate's code could not reach what a run here keeps.
    fn may_keep(&self) -> bool {
        true
    }

    fn has_gate(&self) -> bool {
        true
    }

    fn tools_on_host(&self) -> bool {
        true
    }

    /// Shows, read-only, the tools on `PATH` (the `--python` interpreter's first) and the
    /// paths the user named, where the covered directories would hide them.
    fn open<'a>(
        &'a self,
        paths: &'a mut Paths,
        _: bool,
        _: Limits,
    ) -> Pending<'a, Result<Box<dyn Confined>, String>> {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let dirs = paths
            .tools
            .iter()
            .cloned()
            .chain(std::env::split_paths(&inherited));
        let path = std::env::join_paths(dirs).unwrap_or(inherited);
        paths
            .readonly
            .extend(reach::path_tools(&path, &paths.hidden));
        let named = reach::named_paths(&paths.named, &paths.hidden);
        paths.readonly.extend(named);
        Box::pin(async { Ok(Box::new(Bwrap) as Box<dyn Confined>) })
    }
}

impl Confined for Bwrap {
    fn workdir(&self, paths: &Paths) -> PathBuf {
        workdir_inside(paths)
    }

    fn out_dir(&self, paths: &Paths) -> PathBuf {
        paths.out.clone()
    }

    fn scripts_dir(&self, paths: &Paths) -> PathBuf {
        paths.scripts.clone()
    }

    fn argv(
        &self,
        paths: &Paths,
        script: &Path,
        env: Env,
        network: bool,
        writable: &[PathBuf],
    ) -> (Vec<OsString>, Env) {
        (argv(paths, script, network, writable), env)
    }

    /// bwrap's `--block-fd`: it reads the descriptor once its mounts and namespaces are made,
    /// just before it runs the command.
    fn gated(&self, argv: &[OsString], fd: std::os::fd::RawFd) -> Option<Vec<OsString>> {
        let (program, rest) = argv.split_first()?;
        let mut gated = vec![program.clone(), "--block-fd".into(), fd.to_string().into()];
        gated.extend(rest.iter().cloned());
        Some(gated)
    }

    fn on_host(&self) -> bool {
        true
    }

    /// Each command gets its own network namespace, or none: nothing to take away.
    fn end_setup(&self, _: bool) -> Pending<'_, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }

    fn hidden_hint(&self, paths: &Paths, output: &str) -> String {
        let hidden = reach::hidden_paths(paths, &super::named_in([output]));
        if hidden.is_empty() {
            return String::new();
        }
        let names: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
        format!(
            "\n(the bwrap sandbox hides {}, which the host has: the commands get a private \
             /tmp and an empty home (your toolchains' directories come back read-only) and do \
             not see patchgrade's own directories, so that code under test cannot reach other \
             runs or your files there; show a path with --sandbox-ro PATH or --sandbox-rw \
             PATH, or run with --sandbox none)",
            names.join(", ")
        )
    }

    /// Its PID namespace died with the command.
    fn settle(&self) -> Pending<'_, ()> {
        Box::pin(async {})
    }
}

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
const WORKDIR: &str = "/tmp/testbed";

/// The checkout's path inside: [`WORKDIR`], unless the run's own directories are under it
/// (a `--keep` there), where it stays at its own path.
fn workdir_inside(paths: &Paths) -> PathBuf {
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

/// Whether bwrap runs here, probed once per process; a success is remembered in `memo` (a
/// directory of the cache) for what it depends on ([`probe_key`]), so that a later process on
/// the same machine skips the probe: a network namespace alone costs it 10–30 ms, a third of
/// what a check adds to a sub-second suite. A failure is never remembered: a fix is seen at
/// once.
pub(super) fn available(memo: Option<&Path>) -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let remembered = memo.zip(probe_key()).map(|(dir, key)| dir.join(key));
            if remembered.as_ref().is_some_and(|f| f.is_file()) {
                return Ok(());
            }
            let out = std::process::Command::new("bwrap")
                .args(BASE)
                .args(["--unshare-net", "--", "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot run bwrap: {e}"))?;
            if out.status.success() {
                if let Some(file) = remembered {
                    // Best effort: without it the next process probes again.
                    let _ = file
                        .parent()
                        .map(std::fs::create_dir_all)
                        .map(|_| std::fs::write(&file, b"ok\n"));
                }
                Ok(())
            } else {
                let err = String::from_utf8_lossy(&out.stderr);
                Err(format!("bwrap {}: {}", out.status, err.trim()))
            }
        })
        .clone()
}

/// The name of a remembered probe: what its success depends on, hashed. The bwrap that
/// `PATH` finds (its path, inode, size and time), this boot, the user, the namespaces this
/// process runs in (a container's are others), and the kernel's settings for user
/// namespaces. `None` where bwrap is not on `PATH`: nothing to remember.
fn probe_key() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH")?;
    let bwrap = std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())?;
    let meta = std::fs::metadata(&bwrap).ok()?;
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let link = |p: &str| {
        std::fs::read_link(p)
            .map(|l| l.display().to_string())
            .unwrap_or_default()
    };
    let parts = [
        bwrap.display().to_string(),
        format!(
            "{} {} {} {}",
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.mtime_nsec() + meta.mtime() * 1_000_000_000
        ),
        read("/proc/sys/kernel/random/boot_id"),
        nix::unistd::geteuid().to_string(),
        link("/proc/self/ns/user"),
        link("/proc/self/ns/mnt"),
        link("/proc/self/ns/pid"),
        read("/proc/sys/user/max_user_namespaces"),
        read("/proc/sys/kernel/unprivileged_userns_clone"),
        read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    ];
    Some(format!(
        "bwrap-{}",
        crate::util::digest::hash(parts.join("\0").as_bytes())
    ))
}

/// The command line running `sh script` in the checkout, confined; `writable`: host
/// directories this command alone may write (a preset's dependency cache, for its download
/// step).
fn argv(paths: &Paths, script: &Path, network: bool, writable: &[PathBuf]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec!["bwrap".into()];
    argv.extend(BASE.iter().map(OsString::from));
    if !network {
        // Its own loopback only: a fixed port is free in every run.
        argv.push("--unshare-net".into());
    }
    // An empty home, writable (tools keep caches there), before every bind that brings a
    // part of it back; unless the user showed a path holding it.
    if let Some(home) = home()
        && !paths.shown.iter().any(|(s, _)| home.starts_with(s))
    {
        argv.extend(["--tmpfs".into(), home.into()]);
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
            readonly: vec![objects_dir().into()],
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

    fn objects_dir() -> &'static str {
        "/tmp/user/repo/.git/objects"
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
        let objects = objects_dir();
        assert!(at(&["--ro-bind", objects, objects]) > at(&["--tmpfs", "/tmp"]));
        // The empty home comes before every bind that brings a part of it back.
        if let Some(home) = home() {
            let home = home.to_str().unwrap();
            assert!(at(&["--tmpfs", home]) < at(&["--ro-bind", objects_dir(), objects_dir()]));
        }
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
