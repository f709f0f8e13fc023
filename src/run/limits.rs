//! Resource limits of a command: memory and processes, so that one candidate's allocation or
//! fork loop cannot take down the machine, or the other runs of a check or a batch.
//!
//! On the host and in bwrap a command runs in control groups of its own, made for it under
//! patchgrade's own (as `/proc/self/cgroup` names it) and removed after it: cgroup v1's
//! `memory` and `pids` hierarchies, or v2's where its controllers are enabled. What a group
//! records tells a limit that was hit from a crash. Where no group can be made, `setrlimit`
//! bounds the command instead (the address space, and the user's processes), which is said
//! once. A container gets the engine's own flags.

use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The limits of each command of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of memory.
    pub memory: u64,
    /// Processes (and threads).
    pub pids: u64,
}

impl Limits {
    /// A quarter of the machine's memory, at least 1 GiB and at most 8 GiB, and 4096
    /// processes: room for a build and its tests, and for the other side of the check (and
    /// another check) beside it.
    pub fn default_for_machine() -> Limits {
        const GIB: u64 = 1 << 30;
        let total = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
            .map_or(8 * GIB, |kb| kb * 1024);
        Limits {
            memory: (total / 4).clamp(GIB, 8 * GIB),
            pids: 4096,
        }
    }
}

/// A limit a command ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// The kernel killed a process for memory.
    Memory,
    /// A fork was refused for the process limit.
    Pids,
}

/// A command's control groups: made before it starts, joined by it between fork and exec (or
/// by the thread that forks it, a launcher), emptied and removed when dropped.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<(Controller, PathBuf)>,
    /// Each group's `cgroup.procs`, open for the child to write `0` into (joining it).
    procs: Vec<OwnedFd>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controller {
    V1Memory,
    V1Pids,
    /// Both, in the unified hierarchy.
    V2,
}

/// Whether the fallback has been said.
static SAID: AtomicBool = AtomicBool::new(false);

impl Cgroup {
    /// Groups limiting a command to `limits`; `None` where none can be made here (not root,
    /// no controller, a read-only hierarchy), after saying so once.
    pub fn create(limits: Limits) -> Option<Cgroup> {
        Cgroup::create_with(limits, 0)
    }

    /// As [`Cgroup::create`], with room for `spare` tasks beyond the limit: a thread of
    /// patchgrade's own that joins the groups to start the command from inside them
    /// (a launcher) must not take one of the command's processes.
    pub(super) fn create_with(limits: Limits, spare: u64) -> Option<Cgroup> {
        match Cgroup::try_create(limits, spare) {
            Ok(group) => Some(group),
            Err(why) => {
                if !SAID.swap(true, Ordering::Relaxed) {
                    log::warn!(
                        "no control group could be made for the commands ({why}): their \
                         memory and processes are bounded with setrlimit instead (the address \
                         space, and the processes of your user)"
                    );
                }
                None
            }
        }
    }

    fn try_create(limits: Limits, spare: u64) -> Result<Cgroup, String> {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "patchgrade-{}-{}-{}",
            pid_namespace(),
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let own = fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let mut group = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        match (v1_dir(&own, "memory"), v1_dir(&own, "pids")) {
            (Some(memory), Some(pids)) if memory.is_dir() && pids.is_dir() => {
                let dir = make(&memory, &name)?;
                group.dirs.push((Controller::V1Memory, dir.clone()));
                write(&dir.join("memory.limit_in_bytes"), limits.memory)?;
                // Without swap accounting the file is absent; then memory alone is bounded.
                let _ = write(&dir.join("memory.memsw.limit_in_bytes"), limits.memory);
                let dir = make(&pids, &name)?;
                group.dirs.push((Controller::V1Pids, dir.clone()));
                write(&dir.join("pids.max"), limits.pids + spare)?;
            }
            _ => {
                let path = own
                    .lines()
                    .find_map(|l| l.strip_prefix("0::"))
                    .ok_or("neither cgroup v1's memory and pids nor cgroup v2 is mounted")?;
                let base = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
                let enabled = fs::read_to_string(base.join("cgroup.subtree_control"))
                    .map_err(|e| format!("{}: {e}", base.display()))?;
                if !(enabled.contains("memory") && enabled.contains("pids")) {
                    return Err(format!(
                        "cgroup v2's memory and pids controllers are not enabled for {}",
                        base.display()
                    ));
                }
                let dir = make(&base, &name)?;
                group.dirs.push((Controller::V2, dir.clone()));
                write(&dir.join("memory.max"), limits.memory)?;
                let _ = write(&dir.join("memory.swap.max"), 0);
                write(&dir.join("pids.max"), limits.pids + spare)?;
            }
        }
        for (_, dir) in &group.dirs {
            let path = dir.join("cgroup.procs");
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            group.procs.push(OwnedFd::from(file));
        }
        Ok(group)
    }

    /// The groups' `tasks` files, through which one thread can join without its process:
    /// cgroup v1 only (v2 moves whole processes).
    pub(super) fn tasks(&self) -> Option<Tasks> {
        self.dirs
            .iter()
            .map(|(c, dir)| (*c != Controller::V2).then(|| dir.join("tasks")))
            .collect::<Option<Vec<_>>>()
            .map(Tasks)
    }

    /// Move the running process `pid`, all its threads, into the groups (what it forks after
    /// is born in them). Moved after its start, it ran outside them until now.
    pub(super) fn adopt(&self, pid: u32) -> std::io::Result<()> {
        let pid = pid.to_string();
        for procs in &self.procs {
            if nix::unistd::write(procs, pid.as_bytes())? != pid.len() {
                return Err(std::io::Error::other("short write to cgroup.procs"));
            }
        }
        Ok(())
    }

    /// The descriptors the child writes `0` into, between fork and exec, to join the groups.
    pub fn join_fds(&self) -> Vec<std::os::fd::RawFd> {
        self.procs.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// The limit the command ran into, if any: a process killed for memory, or a fork refused.
    pub fn hit(&self) -> Option<Hit> {
        let count = |path: PathBuf, key: &str| -> u64 {
            fs::read_to_string(path)
                .ok()
                .and_then(|text| {
                    text.lines().find_map(|l| {
                        let (k, v) = l.split_once(' ')?;
                        (k == key).then(|| v.trim().parse().ok()).flatten()
                    })
                })
                .unwrap_or(0)
        };
        let mut hit = None;
        for (controller, dir) in &self.dirs {
            let (memory, pids) = match controller {
                Controller::V1Memory => (count(dir.join("memory.oom_control"), "oom_kill"), 0),
                Controller::V1Pids => (0, count(dir.join("pids.events"), "max")),
                Controller::V2 => (
                    count(dir.join("memory.events"), "oom_kill"),
                    count(dir.join("pids.events"), "max"),
                ),
            };
            if memory > 0 {
                return Some(Hit::Memory);
            }
            if pids > 0 {
                hit = Some(Hit::Pids);
            }
        }
        hit
    }

    /// Kill whatever is still in the groups (a process that left the command's process
    /// group), and wait, bounded, until they are empty.
    pub async fn empty(&self) {
        for _ in 0..100 {
            if !kill_left(&self.dirs) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

/// This process's cgroup v1 directory for `controller`, from `own` (`/proc/self/cgroup`).
fn v1_dir(own: &str, controller: &str) -> Option<PathBuf> {
    own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names.split(',').any(|n| n == controller).then(|| {
            Path::new("/sys/fs/cgroup")
                .join(controller)
                .join(path.trim_start_matches('/'))
        })
    })
}

/// Whether commands here get cgroup v1 groups (`memory` and `pids` both mounted as v1), the
/// only kind a single thread can join: asked before a launcher makes any.
pub(super) fn v1_here() -> bool {
    fs::read_to_string("/proc/self/cgroup").is_ok_and(|own| {
        ["memory", "pids"]
            .iter()
            .all(|c| v1_dir(&own, c).is_some_and(|d| d.is_dir()))
    })
}

/// Cgroup v1 groups' `tasks` files ([`Cgroup::tasks`]).
pub(super) struct Tasks(Vec<PathBuf>);

impl Tasks {
    /// Move the calling thread, alone, into the groups: every process it then forks is born
    /// in them, with nothing to write between fork and exec.
    pub(super) fn join_this_thread(&self) -> std::io::Result<()> {
        let tid = nix::unistd::gettid().to_string();
        self.0.iter().try_for_each(|tasks| fs::write(tasks, &tid))
    }
}

/// The processes `pid`'s threads have started (`/proc/PID/task/TID/children`).
pub(super) fn children(pid: u32) -> std::io::Result<Vec<u32>> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let listed = std::fs::read_to_string(task?.path().join("children"))?;
        found.extend(
            listed
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    Ok(found)
}

/// SIGKILL every process still in these groups; whether there was any.
fn kill_left(dirs: &[(Controller, PathBuf)]) -> bool {
    let mut any = false;
    for (_, dir) in dirs {
        let pids = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in pids.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            // Never patchgrade itself: v1 lists a process whose thread is in the group
            // (a launcher's, which leaves before the group is emptied).
            if pid == std::process::id() as i32 {
                continue;
            }
            any = true;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    any
}

impl Cgroup {
    /// Remove the groups, once [`Cgroup::empty`]: the kernel refuses while a killed process
    /// is still being torn down, so this tries again for a while.
    pub async fn remove(mut self) {
        self.procs.clear();
        for _ in 0..100 {
            self.dirs.retain(|(_, dir)| match fs::remove_dir(dir) {
                Ok(()) => false,
                Err(e) => {
                    log::debug!("{}: {e}", dir.display());
                    dir.exists()
                }
            });
            if self.dirs.is_empty() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.procs.clear();
        let dirs = std::mem::take(&mut self.dirs);
        if dirs.is_empty() {
            return;
        }
        // A cancelled run (Ctrl-C, a dropped future): what is left in the groups dies now, and
        // is waited for (bounded), the processes of a sandbox's own PID namespace too, which
        // left the command's process group: killing that group only ends them once the
        // kernel tears the namespace down, which a loaded machine was seen to finish after
        // patchgrade had exited.
        for _ in 0..200 {
            if !kill_left(&dirs) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Not removed in order (a cancelled run): the kernel refuses while a killed process
        // is torn down, so a thread tries for a while. What it cannot remove, the next run's
        // sweep does.
        std::thread::spawn(move || {
            for _ in 0..200 {
                if dirs
                    .iter()
                    .all(|(_, d)| fs::remove_dir(d).is_ok() || !d.exists())
                {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
    }
}

/// This process's PID namespace (the inode `/proc/self/ns/pid` names): a pid means a
/// process only within it, so a group is swept only by a run of the same namespace.
fn pid_namespace() -> String {
    fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("pid:[")
                .and_then(|r| r.strip_suffix(']'))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "0".into())
}

/// Remove the groups of patchgrade processes of this PID namespace that are gone
/// (`patchgrade-<ns>-<pid>-<n>` in `parent`, their pid no longer running): what a killed run
/// left behind, whatever still runs in them (a process that left its command's process group)
/// killed first.
fn sweep(parent: &Path) {
    let ns = format!("patchgrade-{}-", pid_namespace());
    for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(ns.as_str()))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let procs = fs::read_to_string(entry.path().join("cgroup.procs")).unwrap_or_default();
            for left in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(left),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// `parent/name`, made.
fn make(parent: &Path, name: &str) -> Result<PathBuf, String> {
    sweep(parent);
    let dir = parent.join(name);
    fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn write(path: &Path, value: u64) -> Result<(), String> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.to_string().as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `256M`, `1G`, `512k`, or bytes: a size as `--memory` takes it (powers of 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let shift = match unit.to_ascii_lowercase().trim_end_matches(['b', 'i']) {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_size("256M"), Some(256 << 20));
        assert_eq!(parse_size("256m"), Some(256 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("4096"), Some(4096));
        for bad in ["", "M", "-1M", "1.5G", "0", "12X", "99999999999T"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
