//! A command's control groups made, and joined, before the command is known: while its
//! checkout is still being written.
//!
//! The first write of a process into a group waits for an RCU grace period in the kernel
//! (cgroup v1 here: 5–20 ms, most of what a check added to a sub-second suite besides the
//! checkout). A [`Launcher`] is a thread of patchgrade's own that joins fresh groups ahead of
//! time, alone (v1's `tasks`), and later forks the command: the child is born inside, and
//! writes nothing between fork and exec. Where that cannot be (cgroup v2, which moves whole
//! processes only; no groups at all) there is no launcher and the child joins as before.

use super::limits::{Cgroup, Limits, v1_here};
use std::sync::mpsc;

/// What the launcher's thread runs for the command: its spawn.
type Job = Box<dyn FnOnce() + Send>;

/// A thread in a command's fresh control groups, waiting to start it.
///
/// It stays there until the command has ended: a child's `PR_SET_PDEATHSIG` follows the
/// thread that forked it, and patchgrade's own process is listed in v1's `cgroup.procs` while
/// the thread is in, so the groups are emptied only once it has left ([`Launcher::finish`]).
/// Its being there costs patchgrade nothing of the limits: memory is charged to a process's
/// leader's group, and the kernel's out-of-memory killer picks among group leaders only; it
/// takes one of `pids`, for which the group has room.
pub struct Launcher {
    limits: Limits,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    joined: Option<tokio::sync::oneshot::Receiver<bool>>,
    group: Option<Cgroup>,
}

impl Launcher {
    /// Make the groups for a command limited to `limits` and start joining them, in the
    /// background; `None` where a thread cannot join them (no groups, cgroup v2) or outside a
    /// runtime.
    pub fn ahead(limits: Limits) -> Option<Launcher> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        if !v1_here() {
            return None;
        }
        // One task more than the limit: the thread itself counts in `pids`.
        let group = Cgroup::create_with(limits, 1)?;
        let tasks = group.tasks()?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let (joined_tx, joined) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("patchgrade-launcher".into())
            .spawn(move || {
                let ok = tasks.join_this_thread().is_ok();
                let _ = joined_tx.send(ok);
                if !ok {
                    return;
                }
                let _runtime = runtime.enter();
                // The spawn; then wait, in the groups, until the command is over.
                for job in queue.iter() {
                    job();
                }
            })
            .ok()?;
        Some(Launcher {
            limits,
            jobs: Some(jobs),
            thread: Some(thread),
            joined: Some(joined),
            group: Some(group),
        })
    }

    /// The limits its groups were made for.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Itself once its thread is in the groups; `None` (groups removed) if it could not join.
    pub async fn ready(mut self) -> Option<Launcher> {
        let joined = self.joined.take()?;
        joined.await.unwrap_or(false).then_some(self)
    }

    /// Start `command` from inside the groups.
    pub async fn spawn(
        &self,
        mut command: tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(command.spawn());
        });
        let gone = || std::io::Error::other("the launcher's thread is gone");
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Move `pid` and every process it has started into the groups: a command started
    /// outside them, that has run nothing of its own yet (held at a gate), joins them before
    /// it does. It may fork meanwhile: each process is moved before its children are listed,
    /// and the kernel lets a move and a fork not overlap, so a child is either listed or born
    /// inside. (A child whose parent exits meanwhile would be missed; a held sandbox's
    /// processes do not exit.)
    pub fn adopt(&self, pid: u32) -> std::io::Result<()> {
        let group = self
            .group
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the launcher has no groups"))?;
        let mut stack = vec![pid];
        while let Some(pid) = stack.pop() {
            group.adopt(pid)?;
            stack.extend(super::limits::children(pid)?);
        }
        Ok(())
    }

    /// The groups, once the thread has left them (the command has ended).
    pub fn finish(mut self) -> Option<Cgroup> {
        self.stop();
        self.group.take()
    }

    /// End the thread and wait for it: it only waits for jobs, so it ends at once (a child it
    /// started and that still runs dies with it, by its parent-death signal).
    fn stop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        // The thread first: the groups' own drop kills what is listed in them.
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::process::{Spec, run_from};
    use std::time::Duration;

    /// The groups a line of `/proc/self/cgroup` names for `controller`.
    fn group_of(cgroups: &str, controller: &str) -> Option<String> {
        cgroups.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            names
                .split(',')
                .any(|n| n == controller)
                .then(|| path.to_string())
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_launched_command_is_born_in_its_groups_which_go_with_it() {
        let limits = Limits {
            memory: 1 << 30,
            pids: 64,
        };
        // Where no v1 group can be made (not root, cgroup v2) there is no launcher, and the
        // command joins as before: nothing to see here.
        let v1 = Cgroup::create(limits).is_some_and(|g| g.tasks().is_some());
        let launcher = Launcher::ahead(limits);
        assert_eq!(launcher.is_some(), v1);
        let Some(launcher) = launcher else {
            eprintln!("no cgroup v1 groups can be made here: the launcher is not used");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let mut spec = Spec::on_host(
            // Its groups, and the process limit of its pids group.
            "cat /proc/self/cgroup; g=$(sed -n 's/^[0-9]*:pids:\\(.*\\)/\\1/p' /proc/self/cgroup); \
             cat /sys/fs/cgroup/pids$g/pids.max"
                .into(),
            tmp.path(),
            tmp.path(),
            "probe",
            Duration::from_secs(30),
        );
        spec.limits = Some(limits);
        let finished = run_from(&spec, Some(launcher)).await.unwrap();
        assert_eq!(finished.termination, crate::run::Termination::Exited(0));
        let inside = std::fs::read_to_string(&spec.stdout).unwrap();
        // The launcher's groups (room for its thread), not groups the child made and joined.
        assert_eq!(inside.lines().last(), Some("65"), "{inside}");
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        for controller in ["memory", "pids"] {
            let group = group_of(&inside, controller).unwrap();
            assert!(group.contains("/patchgrade-"), "{controller}: {inside}");
            assert_ne!(group_of(&own, controller), Some(group.clone()));
            // Emptied and removed once the command is over.
            let dir = std::path::Path::new("/sys/fs/cgroup")
                .join(controller)
                .join(group.trim_start_matches('/'));
            assert!(!dir.exists(), "{} is left", dir.display());
        }
    }
}
