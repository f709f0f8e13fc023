//! Running one shell command in its own process group, with a timeout, logs to files, and
//! nothing left behind.

use super::launcher::Launcher;
use super::limits::{Cgroup, Hit, Limits};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a timed-out group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// Bytes of each stream written to its log from the start.
pub const LOG_HEAD: usize = 4 << 20;
/// Bytes of each stream kept from the end, past [`LOG_HEAD`]: a command that floods its
/// output costs this much memory and `LOG_HEAD + LOG_END` bytes of disk, however much it
/// writes; the end is where runners put their summary and errors.
pub const LOG_END: usize = 4 << 20;
/// How long the logs may take to drain once the group is gone (a process that left the group
/// can hold a pipe open forever).
const DRAIN: Duration = Duration::from_secs(2);

/// A shell command to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The shell script.
    pub script: String,
    /// Where it is written before `argv` runs it: as one `sh -c` argument it could not exceed
    /// the kernel's limit on a single argument (128 KiB), which a few thousand ids reach.
    pub script_file: PathBuf,
    /// What runs it: `sh <script_file>`, or a sandbox's command line around that.
    pub argv: Vec<std::ffi::OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to (or replacing) the inherited environment.
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// The variables of patchgrade's own environment the command inherits, by name (`LC_*`:
    /// every one with that prefix); `None`: all of them (patchgrade's own probes, and a
    /// container engine's client, whose command inside gets only the task's).
    pub pass_env: Option<Vec<String>>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Where stdout goes (capped: see [`LOG_HEAD`] and [`LOG_END`]).
    pub stdout: PathBuf,
    /// Where stderr goes (capped the same way).
    pub stderr: PathBuf,
    /// A file descriptor the command inherits (every other is closed on exec): a pool slot's
    /// lock, which the kernel then releases only when the last process holding it is gone.
    pub hold_open: Option<std::os::fd::RawFd>,
    /// Its memory and processes, bounded in control groups of its own (`None`: a container,
    /// which the engine bounds).
    pub limits: Option<Limits>,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Termination {
    /// Exited with a code.
    Exited(i32),
    /// Killed by a signal it did not get from us.
    Signaled(i32),
    /// Ran past its timeout; its group was killed.
    TimedOut,
}

/// A finished command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// How it ended.
    pub termination: Termination,
    /// Wall-clock time.
    pub duration: Duration,
    /// The limit it ran into, as its control groups recorded it.
    pub limit_hit: Option<Hit>,
}

/// Kills the whole process group when dropped, so a cancelled run (Ctrl-C, a dropped future)
/// leaves nothing behind.
struct GroupGuard(Pid);

impl GroupGuard {
    fn signal(&self, signal: Signal) {
        // ESRCH (group already gone) is the normal case.
        let _ = killpg(self.0, signal);
    }

    /// Kill what is left of the group and wait (bounded) until it is gone.
    async fn reap(&self) {
        self.signal(Signal::SIGKILL);
        for _ in 0..100 {
            if killpg(self.0, None).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

impl Spec {
    /// `script` run on the host with `sh`, its file and logs `dir/name.sh`,
    /// `dir/name.stdout.log` and `dir/name.stderr.log`; no extra environment, nothing held.
    pub fn on_host(script: String, cwd: &Path, dir: &Path, name: &str, timeout: Duration) -> Spec {
        let script_file = dir.join(format!("{name}.sh"));
        Spec {
            script,
            argv: vec!["sh".into(), script_file.clone().into()],
            script_file,
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            env_remove: Vec::new(),
            pass_env: None,
            timeout,
            stdout: dir.join(format!("{name}.stdout.log")),
            stderr: dir.join(format!("{name}.stderr.log")),
            hold_open: None,
            limits: None,
        }
    }
}

/// Run a command to completion or timeout. `Err` only when it could not be started.
pub async fn run(spec: &Spec) -> std::io::Result<Finished> {
    run_from(spec, None).await
}

/// [`run`], started from `ahead`'s thread, already in control groups made for the spec's
/// limits, where it could join them (else as [`run`]: the child joins groups of its own).
pub async fn run_from(spec: &Spec, ahead: Option<Launcher>) -> std::io::Result<Finished> {
    std::fs::write(&spec.script_file, &spec.script)?;
    let confinement = match ahead.filter(|l| Some(l.limits()) == spec.limits) {
        Some(launcher) => match launcher.ready().await {
            Some(ready) => Confinement::Launcher(ready),
            None => Confinement::Own,
        },
        None => Confinement::Own,
    };
    let spawned = spawn(spec, &spec.argv, confinement, None).await?;
    spawned.finish(spec.timeout).await
}

/// A command started ahead of its time, held at a gate (bwrap's `--block-fd`) with its
/// sandbox built: its start costs nothing once the checkout it runs in is written. It runs
/// only when [`release`]d; dropped, it is killed before the gate can open.
pub struct Gated {
    /// `None` once released.
    spawned: Option<Spawned>,
    gate: Option<std::os::fd::OwnedFd>,
    /// What it was started as: its spec but the script, which is written at release.
    started_as: Spec,
}

impl Gated {
    /// Kill every process of it, its sandbox's too (bwrap's own child is in a session of its
    /// own, out of the process group), then close the gate: a gate closed first opens (bwrap
    /// reads its end and goes on), and a process SIGKILLed runs nothing of its own after.
    fn kill(&mut self) {
        if let Some(spawned) = self.spawned.take() {
            if let Some(pid) = spawned.child.id() {
                let mut stack = vec![pid];
                while let Some(pid) = stack.pop() {
                    stack.extend(super::limits::children(pid).unwrap_or_default());
                    let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                }
            }
            drop(spawned);
        }
        self.gate = None;
    }

    /// [`Gated::kill`], of what [`release`] had taken out of it: every process of it killed
    /// before the gate's end closes, which would open it.
    fn kill_taken(&mut self, spawned: Spawned, gate: std::os::fd::OwnedFd) {
        self.spawned = Some(spawned);
        self.gate = Some(gate);
        self.kill();
    }
}

impl Drop for Gated {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Start `spec`'s command now, held at a gate: `gate` turns its command line into one that
/// waits to read a byte from a descriptor (`None`: the sandbox has no such gate, and nothing
/// is started; nor where its groups cannot be joined). The script is not written yet (the
/// command line names its file).
///
/// It starts at once, outside any control group, while `ahead`'s thread joins its groups;
/// then the held processes are moved in, before anything of their own runs. The kernel makes
/// the first join wait for an RCU grace period (see [`Launcher`]), and lets moves that follow
/// at once through without another: done here, both waits fall in the time the checkout is
/// written, not after it.
pub async fn prestart(
    spec: &Spec,
    ahead: Launcher,
    gate: impl FnOnce(std::os::fd::RawFd) -> Option<Vec<std::ffi::OsString>>,
) -> std::io::Result<Option<Gated>> {
    use std::os::fd::AsRawFd;
    // Held processes are found through `/proc/PID/task/TID/children`, to be moved and to be
    // killed before the gate closes: without it (a kernel built without), nothing starts ahead.
    if Some(ahead.limits()) != spec.limits || super::limits::children(std::process::id()).is_err() {
        return Ok(None);
    }
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let Some(argv) = gate(read.as_raw_fd()) else {
        return Ok(None);
    };
    let spawned = spawn(spec, &argv, Confinement::Later, Some(read.as_raw_fd())).await?;
    // The child holds its copy; the parent's read end would keep the pipe open past it.
    drop(read);
    let mut gated = Gated {
        spawned: Some(spawned),
        gate: Some(write),
        started_as: spec.clone(),
    };
    let pid = gated.spawned.as_ref().and_then(|s| s.child.id());
    let (Some(launcher), Some(pid)) = (ahead.ready().await, pid) else {
        return Ok(None);
    };
    // Moving a process waits in the kernel (a grace period, if the join's has passed): off
    // the async threads. A process that is being moved cannot fork, and the parent goes
    // first: what it forks after is born inside, what it forked before is listed.
    let moved = tokio::task::spawn_blocking(move || {
        let moved = launcher.adopt(pid).is_ok();
        moved.then_some(launcher)
    })
    .await;
    let Ok(Some(launcher)) = moved else {
        // Dropped: killed whole, before its gate closes.
        return Ok(None);
    };
    if let Some(spawned) = gated.spawned.as_mut() {
        spawned.ahead = Some(launcher);
    }
    Ok(Some(gated))
}

/// Run `spec` through a command [`prestart`]ed for it: its script written, its gate opened,
/// its timeout counted from now. A gated command started for another spec (its command line,
/// environment or logs differ) is killed, and `spec` is run as [`run`] does.
pub async fn release(gated: Gated, spec: &Spec) -> std::io::Result<Finished> {
    let same = {
        let (a, b) = (&gated.started_as, spec);
        (&a.argv, &a.cwd, &a.env, &a.env_remove, &a.pass_env)
            == (&b.argv, &b.cwd, &b.env, &b.env_remove, &b.pass_env)
            && (&a.stdout, &a.stderr, &a.script_file, a.hold_open, a.limits)
                == (&b.stdout, &b.stderr, &b.script_file, b.hold_open, b.limits)
    };
    let mut gated = gated;
    let (Some(mut spawned), Some(gate)) = (gated.spawned.take(), gated.gate.take()) else {
        return run_from(spec, None).await;
    };
    if !same {
        gated.kill_taken(spawned, gate);
        return run_from(spec, None).await;
    }
    if let Err(e) = std::fs::write(&spec.script_file, &spec.script) {
        gated.kill_taken(spawned, gate);
        return Err(e);
    }
    log::debug!("{}", spec.script.trim_end());
    // A sandbox that failed while it was being built has exited already: no one reads, and
    // its own words are in its log.
    let _ = nix::unistd::write(&gate, b"g");
    drop(gate);
    spawned.started = Instant::now();
    spawned.finish(spec.timeout).await
}

/// Where a command's control groups come from.
enum Confinement {
    /// A launcher's, its thread in them already: the child is born inside.
    Launcher(Launcher),
    /// Its own, joined between fork and exec (or, where none can be made, rlimits).
    Own,
    /// None yet: it is moved into a launcher's before it runs anything of its own.
    Later,
}

/// A started command: its child, its process group, its logs being written, its groups.
struct Spawned {
    child: tokio::process::Child,
    group: GroupGuard,
    logs: [Option<tokio::task::JoinHandle<std::io::Result<()>>>; 2],
    ahead: Option<Launcher>,
    cgroup: Option<Cgroup>,
    started: Instant,
}

/// Start `argv` as `spec` says (its script already written, or written before its gate
/// opens); `gate`: a descriptor it inherits.
async fn spawn(
    spec: &Spec,
    argv: &[std::ffi::OsString],
    confinement: Confinement,
    gate: Option<std::os::fd::RawFd>,
) -> std::io::Result<Spawned> {
    log::info!(
        "running {} in {}",
        spec.script_file.display(),
        spec.cwd.display()
    );
    // A gated command's script is written, and shown, at its release.
    if !spec.script.is_empty() {
        log::debug!("{}", spec.script.trim_end());
    }
    let stdout = tokio::fs::File::from_std(File::create(&spec.stdout)?);
    let stderr = tokio::fs::File::from_std(File::create(&spec.stderr)?);
    let Some((program, args)) = argv.split_first() else {
        return Err(std::io::Error::other("no program to run"));
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let (ahead, cgroup, born_inside) = match confinement {
        Confinement::Launcher(launcher) => (Some(launcher), None, true),
        Confinement::Own => (None, spec.limits.and_then(Cgroup::create), false),
        // Neither groups nor rlimits: the groups come before anything of its own runs.
        Confinement::Later => (None, None, true),
    };
    confine(&mut command, spec, cgroup.as_ref(), born_inside, gate);
    if let Some(names) = &spec.pass_env {
        command.env_clear();
        command.envs(
            std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(|k| passes(names, k))),
        );
    }
    for key in &spec.env_remove {
        command.env_remove(key);
    }
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    let started = Instant::now();
    let mut child = match &ahead {
        Some(launcher) => launcher.spawn(command).await?,
        None => command.spawn()?,
    };
    let Some(pid) = child.id() else {
        return Err(std::io::Error::other(
            "child exited before its pid was read",
        ));
    };
    let group = GroupGuard(Pid::from_raw(pid as i32));
    let logs = [
        child
            .stdout
            .take()
            .map(|pipe| tokio::spawn(capture(pipe, stdout))),
        child
            .stderr
            .take()
            .map(|pipe| tokio::spawn(capture(pipe, stderr))),
    ];
    Ok(Spawned {
        child,
        group,
        logs,
        ahead,
        cgroup,
        started,
    })
}

impl Spawned {
    /// Wait for it to end, or for its timeout; then nothing of it is left.
    async fn finish(mut self, timeout: Duration) -> std::io::Result<Finished> {
        let termination = wait(&mut self.child, &self.group, timeout).await?;
        // Background processes the command left running die with it, and so does anything
        // in its control groups that left the process group.
        self.group.reap().await;
        // A launcher's thread leaves its groups before they are emptied.
        let cgroup = match self.ahead.take() {
            Some(launcher) => launcher.finish(),
            None => self.cgroup.take(),
        };
        let limit_hit = match cgroup {
            Some(cgroup) => {
                cgroup.empty().await;
                let hit = cgroup.hit();
                cgroup.remove().await;
                hit
            }
            None => None,
        };
        for log in std::mem::take(&mut self.logs).into_iter().flatten() {
            let abort = log.abort_handle();
            if tokio::time::timeout(DRAIN, log).await.is_err() {
                abort.abort();
            }
        }
        Ok(Finished {
            termination,
            duration: self.started.elapsed(),
            limit_hit,
        })
    }
}

/// What the child does between fork and exec: join its control groups (or, without them,
/// take its rlimits; or nothing, `born_inside` them: forked by a launcher), die with
/// patchgrade, and keep the slot's lock open.
fn confine(
    command: &mut tokio::process::Command,
    spec: &Spec,
    cgroup: Option<&Cgroup>,
    born_inside: bool,
    gate: Option<std::os::fd::RawFd>,
) {
    let hold_open = spec.hold_open;
    let parent = std::process::id() as nix::libc::pid_t;
    let join: Vec<std::os::fd::RawFd> = cgroup.map(Cgroup::join_fds).unwrap_or_default();
    // Without a group of its own, the command is bounded by setrlimit (see `limits`).
    let rlimits = match (cgroup, spec.limits) {
        (None, Some(l)) if !born_inside => Some((l.memory, l.pids)),
        _ => None,
    };
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl(2),
    // getppid(2), write(2), setrlimit(2) and fcntl(2), which are async-signal-safe; `fd` and
    // the groups' descriptors are open in the parent for the whole run, the gate's until the
    // spawn has returned.
    unsafe {
        command.pre_exec(move || {
            // Into its control groups before anything of it runs: `0` is the writer itself,
            // and every process it starts is born there.
            for fd in &join {
                if nix::libc::write(*fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some((memory, pids)) = rlimits {
                // The data segment, not the address space: runtimes that reserve address space
                // they never touch (a JVM, Go) would fail under RLIMIT_AS.
                let data = nix::libc::rlimit {
                    rlim_cur: memory,
                    rlim_max: memory,
                };
                let procs = nix::libc::rlimit {
                    rlim_cur: pids,
                    rlim_max: pids,
                };
                if nix::libc::setrlimit(nix::libc::RLIMIT_DATA, &data) == -1
                    || nix::libc::setrlimit(nix::libc::RLIMIT_NPROC, &procs) == -1
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // The child dies with patchgrade, even when patchgrade is SIGKILLed. bwrap's own
            // --die-with-parent is armed only once bwrap runs, so a kill between the fork and
            // then would leave a sandbox running to its end. Checking the parent after arming
            // the signal closes that window. The signal follows the spawning thread:
            // tokio's workers (and a thread blocked on the run) outlive the child.
            if nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGKILL, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if nix::libc::getppid() != parent {
                nix::libc::_exit(137);
            }
            for fd in [hold_open, gate].into_iter().flatten() {
                if nix::libc::fcntl(fd, nix::libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// How the command ended: by itself, or at its timeout, its group sent SIGTERM, then
/// SIGKILL after [`GRACE`].
async fn wait(
    child: &mut tokio::process::Child,
    group: &GroupGuard,
    timeout: Duration,
) -> std::io::Result<Termination> {
    Ok(match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => {
            let status = status?;
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => Termination::Exited(code),
                (None, Some(sig)) => Termination::Signaled(sig),
                (None, None) => Termination::Exited(-1),
            }
        }
        Err(_) => {
            group.signal(Signal::SIGTERM);
            if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
                group.signal(Signal::SIGKILL);
                child.wait().await?;
            }
            Termination::TimedOut
        }
    })
}

/// Whether the variable `key` is one of `names` (`LC_*` names a prefix).
pub fn passes(names: &[String], key: &str) -> bool {
    names.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => n == key,
    })
}

/// The last `max` bytes of a file (empty when it cannot be read): logs are read from the end,
/// never whole.
pub fn tail(path: &std::path::Path, max: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(len.saturating_sub(max))).is_ok() {
        let _ = file.take(max).read_to_end(&mut buf);
    }
    buf
}

/// Copy a stream to its log: the first [`LOG_HEAD`] bytes, then (if there was more) a line
/// saying how much was left out, then the last [`LOG_END`] bytes.
async fn capture(
    mut pipe: impl tokio::io::AsyncRead + Unpin,
    mut log: tokio::fs::File,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    let mut written = 0usize;
    let mut tail = std::collections::VecDeque::new();
    let mut omitted = 0u64;
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let head = n.min(LOG_HEAD - written);
        log.write_all(&buf[..head]).await?;
        written += head;
        tail.extend(&buf[head..n]);
        if tail.len() > LOG_END {
            let excess = tail.len() - LOG_END;
            tail.drain(..excess);
            omitted += excess as u64;
        }
    }
    if omitted > 0 {
        let note = format!("\n[patchgrade: {omitted} bytes of output left out here]\n");
        log.write_all(note.as_bytes()).await?;
    }
    let (a, b) = tail.as_slices();
    log.write_all(a).await?;
    log.write_all(b).await?;
    log.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Limits;

    /// A gate as bwrap's `--block-fd` is one: the command runs after a byte, or after the end
    /// of the pipe (so what holds it must be killed before its end closes).
    fn shell_gate(
        script: &Path,
    ) -> impl FnOnce(std::os::fd::RawFd) -> Option<Vec<std::ffi::OsString>> {
        let script = script.to_path_buf();
        move |fd| {
            Some(vec![
                "sh".into(),
                "-c".into(),
                format!("read -r _ < /dev/fd/{fd}; exec sh \"$0\"").into(),
                script.into(),
            ])
        }
    }

    fn limits() -> Limits {
        Limits {
            memory: 1 << 30,
            pids: 64,
        }
    }

    /// `script` on the host, limited, its files named `name` in `dir`, started at a gate from
    /// a launcher's groups; `None` where no cgroup v1 groups can be made (nothing is started
    /// ahead there).
    async fn started(script: &str, dir: &Path, name: &str) -> Option<(Spec, Gated)> {
        let Some(launcher) = Launcher::ahead(limits()) else {
            eprintln!("no cgroup v1 groups can be made here: nothing is started ahead");
            return None;
        };
        let mut spec = Spec::on_host(script.into(), dir, dir, name, Duration::from_secs(30));
        spec.limits = Some(limits());
        let gate = shell_gate(&spec.script_file);
        let gated = prestart(&spec, launcher, gate).await.unwrap().unwrap();
        Some((spec, gated))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gated_command_runs_its_script_in_its_groups_only_once_released() {
        let tmp = tempfile::tempdir().unwrap();
        let Some((spec, gated)) = started("cat /proc/self/cgroup", tmp.path(), "gated").await
        else {
            return;
        };
        // Held: its script is not even written yet.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!spec.script_file.exists());
        let finished = release(gated, &spec).await.unwrap();
        assert_eq!(finished.termination, Termination::Exited(0));
        // Moved into the launcher's groups before it ran anything of its own.
        let inside = std::fs::read_to_string(&spec.stdout).unwrap();
        for controller in ["memory", "pids"] {
            let line = inside
                .lines()
                .find(|l| {
                    l.split(':')
                        .nth(1)
                        .is_some_and(|c| c.split(',').any(|c| c == controller))
                })
                .unwrap_or_default();
            assert!(line.contains("/patchgrade-"), "{controller}: {inside}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gated_command_dropped_unreleased_never_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let mark = tmp.path().join("ran");
        let script = format!("touch {}", mark.display());
        // The script exists this time: an open gate would run it.
        std::fs::write(tmp.path().join("gated.sh"), &script).unwrap();
        let Some((_, gated)) = started(&script, tmp.path(), "gated").await else {
            return;
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(gated);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!mark.exists(), "the command ran after its gate was dropped");
    }

    /// Released for another command than the one started, the started one is killed and
    /// the other runs as `run` would run it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gated_command_released_for_another_spec_gives_way_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let Some((spec, gated)) = started("echo one", tmp.path(), "a").await else {
            return;
        };
        let mut other = Spec::on_host(
            "echo two".into(),
            tmp.path(),
            tmp.path(),
            "b",
            Duration::from_secs(30),
        );
        other.limits = Some(limits());
        let finished = release(gated, &other).await.unwrap();
        assert_eq!(finished.termination, Termination::Exited(0));
        assert_eq!(std::fs::read_to_string(&other.stdout).unwrap(), "two\n");
        assert_eq!(std::fs::read_to_string(&spec.stdout).unwrap(), "");
    }
}
