//! Running one shell command in its own process group, with a timeout, logs to files, and
//! nothing left behind.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a timed-out group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// A shell command to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Passed to `sh -c`.
    pub script: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to (or replacing) the inherited environment.
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Where stdout goes.
    pub stdout: PathBuf,
    /// Where stderr goes.
    pub stderr: PathBuf,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// Run a command to completion or timeout. `Err` only when it could not be started.
pub async fn run(spec: &Spec) -> std::io::Result<Finished> {
    let stdout = File::create(&spec.stdout)?;
    let stderr = File::create(&spec.stderr)?;
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&spec.script)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true);
    for key in &spec.env_remove {
        command.env_remove(key);
    }
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    let started = Instant::now();
    let mut child = command.spawn()?;
    let Some(pid) = child.id() else {
        return Err(std::io::Error::other(
            "child exited before its pid was read",
        ));
    };
    let group = GroupGuard(Pid::from_raw(pid as i32));

    let termination = match tokio::time::timeout(spec.timeout, child.wait()).await {
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
    };
    // Background processes the command left running die with it.
    group.reap().await;
    Ok(Finished {
        termination,
        duration: started.elapsed(),
    })
}
