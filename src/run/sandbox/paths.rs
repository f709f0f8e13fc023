//! A side's directories on the host, which every backend confines a command to.

use std::path::PathBuf;

/// A side's directories on the host.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The checkout: writable.
    pub workdir: PathBuf,
    /// The report directory (`{junit}` is in it): writable.
    pub out: PathBuf,
    /// Where the scripts are written: read-only to the commands, so code under test cannot
    /// rewrite the next command.
    pub scripts: PathBuf,
    /// Directories a command may read even where they are under a hidden one: the
    /// repository's object store, which the checkout borrows (`git` in a test needs it); in
    /// bwrap, the tools on `PATH` are added.
    pub readonly: Vec<PathBuf>,
    /// Directories the scripts put before `PATH` (the `--python` interpreter's); in bwrap,
    /// brought back read-only as the tools on `PATH` are.
    pub tools: Vec<PathBuf>,
    /// Directories a command must not see (the cache, the pool, other runs, the temporary
    /// directory): each is covered by an empty one, the side's own directories brought back.
    pub hidden: Vec<PathBuf>,
    /// Host paths the user named (in the commands, `--python`, `--env`, the base tree's
    /// links): in bwrap, those its private temporary directories would cover come back
    /// read-only, as the tools on `PATH` do.
    pub named: Vec<PathBuf>,
    /// Host paths the user asked to show (`--sandbox-ro`, `--sandbox-rw`), each writable or
    /// not: in bwrap and in a container, at the same path. patchgrade's own hidden
    /// directories stay hidden under them.
    pub shown: Vec<(PathBuf, bool)>,
}
