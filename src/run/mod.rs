//! Run: a shell command in a prepared checkout, watched until it ends.
//!
//! Takes a [`TestCommand`] (a preset's or the user's template, and the id syntax it takes),
//! the ids and a checkout; hands on the command's [`Termination`] and its capped logs, with
//! the JUnit report left where `{junit}` said. Nothing here reads the report.
//!
//! - [`command`]: [`TestCommand`] and its [`Template`](command::Template).
//! - [`preset`]: [`Preset`], the known runners.
//! - [`process`]: [`process::run`], a command in its own process group, with a timeout and
//!   logs, leaving nothing behind.
//! - [`sandbox`]: [`Sandbox`], where the commands run, and [`Jail`], one side's confinement.
//! - [`limits`]: [`Limits`], each command's memory and processes, in control groups of its
//!   own.
//! - [`launcher`]: [`Launcher`], a command's groups made and joined while its checkout is
//!   written.

pub mod command;
pub mod launcher;
pub mod limits;
pub mod preset;
pub mod process;
pub mod sandbox;

pub use command::{MissingJunit, TestCommand};
pub use launcher::Launcher;
pub use limits::Limits;
pub use preset::{Preset, UnknownPreset};
pub use process::Termination;
pub use sandbox::{Jail, Sandbox};
