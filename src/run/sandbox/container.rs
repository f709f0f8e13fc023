//! docker and podman: one container of the image per side of a check, started once, its
//! commands run with `exec`, and removed when the side is done, times out or is cancelled.

use super::SandboxError;
use super::backend::{Backend, Confined, Env, Pending};
use super::paths::Paths;
use crate::run::Limits;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the report directory is mounted in the container.
const OUT: &str = "/patchgrade/out";
/// Where the scripts are mounted, read-only.
const SCRIPTS: &str = "/patchgrade/scripts";
/// The label naming the process that owns a container, so that a later run can remove the
/// containers of a patchgrade that was SIGKILLed.
const OWNER: &str = "patchgrade.owner";
/// Kills every process of the container but its first (which sleeps) and the caller.
const KILL_REST: &str = "kill -9 -1 2>/dev/null";

/// A container image to run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// docker or podman.
    pub engine: Engine,
    /// As the user named it.
    pub name: String,
    /// The engine's id of it (`sha256:…`): what a cached baseline is keyed by, as the name can
    /// be moved to another image.
    pub id: String,
    /// Where the checkout is mounted.
    pub workdir: PathBuf,
}

impl Backend for Image {
    fn name(&self) -> &'static str {
        self.engine.name()
    }

    fn image(&self) -> Option<&str> {
        Some(&self.name)
    }

    /// The engine and the image's id: the name can be moved to another image.
    fn cache_key(&self) -> String {
        format!("{}:{}", self.engine.name(), self.id)
    }

    /// The image's tools made it.
    fn seed_place(&self) -> String {
        self.cache_key()
    }

    /// The candidate's code could not reach what a run here keeps.
    fn may_keep(&self) -> bool {
        true
    }

    /// The image's id keys its own toolchain.
    fn tools_on_host(&self) -> bool {
        false
    }

    /// Starts the side's container, with the network if any of its commands gets it (the
    /// setup command's is taken away at its end).
    fn open<'a>(
        &'a self,
        paths: &'a mut Paths,
        network: bool,
        limits: Limits,
    ) -> Pending<'a, Result<Box<dyn Confined>, String>> {
        Box::pin(async move {
            let container = Container::start(self, paths, network, limits).await?;
            Ok(Box::new(container) as Box<dyn Confined>)
        })
    }
}

/// A container engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `docker`.
    Docker,
    /// `podman`.
    Podman,
}

impl Engine {
    /// Its name, which is also its program.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    /// The network a container joins when it may use the network.
    fn bridge(self) -> &'static str {
        match self {
            Engine::Docker => "bridge",
            Engine::Podman => "podman",
        }
    }

    fn command(self) -> Command {
        let mut c = Command::new(self.name());
        c.stdin(Stdio::null());
        c
    }

    /// Whether its server answers, asked once per process.
    pub(super) fn available(self) -> Result<(), String> {
        static DOCKER: OnceLock<Result<(), String>> = OnceLock::new();
        static PODMAN: OnceLock<Result<(), String>> = OnceLock::new();
        let cell = match self {
            Engine::Docker => &DOCKER,
            Engine::Podman => &PODMAN,
        };
        cell.get_or_init(|| {
            run(self
                .command()
                .args(["version", "--format", "{{.Server.Version}}"]))
            .map(|_| ())
        })
        .clone()
    }

    /// The id of a local image; it is never pulled here.
    pub(super) fn image_id(self, image: &str) -> Result<String, SandboxError> {
        self.available()
            .map_err(|reason| SandboxError::Unavailable {
                sandbox: self.name(),
                reason,
            })?;
        run(self
            .command()
            .args(["image", "inspect", "--format", "{{.Id}}", image]))
        .map_err(|reason| SandboxError::NoImage {
            image: image.to_string(),
            engine: self.name(),
            reason,
        })
    }
}

/// Run an engine command to completion: its trimmed stdout, or what went wrong.
fn run(command: &mut Command) -> Result<String, String> {
    let program = command.get_program().to_owned();
    answer(command.output(), &program)
}

/// What a finished engine command said.
fn answer(
    out: std::io::Result<std::process::Output>,
    program: &std::ffi::OsStr,
) -> Result<String, String> {
    let out = out.map_err(|e| format!("cannot run {program:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim().lines().last().unwrap_or_default().to_string();
        Err(format!("{last} ({})", out.status))
    }
}

/// [`run`], without holding up the async threads.
async fn run_async(command: Command) -> Result<String, String> {
    let program = command.get_program().to_owned();
    let out = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .output()
        .await;
    answer(out, &program)
}

/// This boot and PID namespace, as the owner label starts: a run in another namespace never
/// takes a live run's container for a dead one.
fn owner_prefix() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let ns = std::fs::read_link("/proc/self/ns/pid").unwrap_or_default();
    format!("{}/{}/", boot.trim(), ns.display())
}

/// Remove the containers left by patchgrade processes of this boot and namespace that are
/// gone (SIGKILLed before they could remove them). Best effort.
async fn sweep(engine: Engine) {
    let prefix = owner_prefix();
    let mut list = engine.command();
    list.args([
        "ps",
        "-a",
        "--filter",
        &format!("label={OWNER}"),
        "--format",
        &format!("{{{{.ID}}}} {{{{.Label \"{OWNER}\"}}}}"),
    ]);
    let Ok(list) = run_async(list).await else {
        return;
    };
    for line in list.lines() {
        let Some((id, label)) = line.split_once(' ') else {
            continue;
        };
        let Some(pid) = label
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        if gone {
            let mut rm = engine.command();
            rm.args(["rm", "-f", id]);
            let _ = run_async(rm).await;
        }
    }
}

/// A running container; removed on drop.
#[derive(Debug)]
pub(super) struct Container {
    engine: Engine,
    name: String,
    /// The image's workdir, where the checkout is mounted.
    workdir: PathBuf,
}

impl Container {
    /// Start one: the checkout at the image's workdir, the report directory and the scripts at
    /// fixed paths, as the user's uid, the network only if asked. Its first process sleeps;
    /// the commands come with `exec`.
    async fn start(
        image: &Image,
        paths: &Paths,
        network: bool,
        limits: crate::run::Limits,
    ) -> Result<Container, String> {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        sweep(image.engine).await;
        let pid = std::process::id();
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let name = format!("patchgrade-{pid}-{n}-{:08x}", rand_suffix());
        let mount = |src: &Path, dst: &Path, ro: bool| -> Result<String, String> {
            let src = src.to_str().filter(|s| !s.contains(',')).ok_or_else(|| {
                format!("{}: a path with a comma cannot be mounted", src.display())
            })?;
            let ro = if ro { ",readonly" } else { "" };
            Ok(format!("type=bind,src={src},dst={}{ro}", dst.display()))
        };
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        let mut c = image.engine.command();
        c.args(["run", "-d", "--name", &name])
            .args(["--label", &format!("{OWNER}={}{pid}", owner_prefix())])
            .args([
                "--network",
                if network {
                    image.engine.bridge()
                } else {
                    "none"
                },
            ])
            .args(["--user", &format!("{uid}:{gid}")])
            // The engine's own limits, no swap beyond the memory.
            .args(["--memory", &limits.memory.to_string()])
            .args(["--memory-swap", &limits.memory.to_string()])
            .args(["--pids-limit", &limits.pids.to_string()])
            .args(["--mount", &mount(&paths.workdir, &image.workdir, false)?])
            .args(["--mount", &mount(&paths.out, Path::new(OUT), false)?])
            .args(["--mount", &mount(&paths.scripts, Path::new(SCRIPTS), true)?]);
        for (path, writable) in &paths.shown {
            c.args(["--mount", &mount(path, path, !writable)?]);
        }
        c.arg("--workdir")
            .arg(&image.workdir)
            // Not `--init`: between commands every process but the first is killed, and an
            // init's only child is what keeps it alive.
            .args(["--entrypoint", "sleep", &image.id, "2147483647"]);
        let container = Container {
            engine: image.engine,
            name,
            workdir: image.workdir.clone(),
        };
        // Removed on drop also when `run` failed half-way (created, not started).
        run_async(c).await.map(|_| container)
    }

    /// The command line running a script (a path inside the container) there. When the
    /// script ends, every other process in the container but the first is killed, in the same
    /// `exec`: background processes must not outlive their command.
    fn exec_argv(&self, script: &Path, env: &[(String, String)]) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![self.engine.name().into(), "exec".into()];
        argv.extend(["--workdir".into(), (&self.workdir).into()]);
        for (k, v) in env {
            argv.extend(["--env".into(), format!("{k}={v}").into()]);
        }
        argv.extend([self.name.clone().into(), "sh".into(), "-c".into()]);
        argv.push(format!("sh \"$1\"; status=$?; {KILL_REST}; exit $status").into());
        argv.extend(["patchgrade".into(), script.into()]);
        argv
    }

    /// Take the network away (after the setup command had it).
    async fn disconnect(&self) -> Result<(), String> {
        let mut c = self.engine.command();
        c.args(["network", "disconnect", self.engine.bridge(), &self.name]);
        run_async(c).await.map(|_| ())
    }

    /// Kill every process of the last command (all but the first, sleeping one): killing the
    /// `exec` client leaves them running, and background processes must not outlive their
    /// command.
    async fn kill_rest(&self) {
        let mut c = self.engine.command();
        c.args([
            "exec",
            &self.name,
            "sh",
            "-c",
            "kill -9 -1 2>/dev/null; true",
        ]);
        let _ = run_async(c).await;
    }
}

impl Confined for Container {
    fn workdir(&self, _: &Paths) -> PathBuf {
        self.workdir.clone()
    }

    fn out_dir(&self, _: &Paths) -> PathBuf {
        PathBuf::from(OUT)
    }

    fn scripts_dir(&self, _: &Paths) -> PathBuf {
        PathBuf::from(SCRIPTS)
    }

    /// `exec` in the container; the engine's client keeps the user's environment, and the
    /// task's goes inside. Its network is the container's, set at its start and its setup's
    /// end.
    fn argv(
        &self,
        _: &Paths,
        script: &Path,
        env: Env,
        _: bool,
        _: &[PathBuf],
    ) -> (Vec<OsString>, Env) {
        let name = script.file_name().unwrap_or_default();
        let seen = Path::new(SCRIPTS).join(name);
        (self.exec_argv(&seen, &env.0), (Vec::new(), Vec::new()))
    }

    /// The engine's client runs on the host; the command runs in the container, under its
    /// limits.
    fn on_host(&self) -> bool {
        false
    }

    fn end_setup(&self, keep: bool) -> Pending<'_, Result<(), String>> {
        Box::pin(async move {
            if keep {
                Ok(())
            } else {
                self.disconnect().await
            }
        })
    }

    /// A command in the container names the image's paths, not the host's, so what the host
    /// has says nothing of what the container hides.
    fn hidden_hint(&self, _: &Paths, _: &str) -> String {
        String::new()
    }

    fn settle(&self) -> Pending<'_, ()> {
        Box::pin(self.kill_rest())
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // `-f` kills at once (podman's `-t 0`: no stop timeout for a process that ignores
        // SIGTERM).
        let mut c = self.engine.command();
        c.args(["rm", "-f"]);
        if self.engine == Engine::Podman {
            c.args(["-t", "0"]);
        }
        let _ = run(c.arg(&self.name));
    }
}

/// A few random bits, so that two processes with the same pid (in two namespaces) pick
/// different names.
fn rand_suffix() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    t ^ std::process::id().rotate_left(16)
}
