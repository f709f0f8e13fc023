//! A task's test command, from the names it was written with (`runner`, `test_cmd`, `ids`)
//! to a [`TestCommand`].

use super::file::TaskFile;
use crate::observe::IdSyntax;
use crate::observe::ids::UnknownSyntax;
use crate::run::{MissingJunit, Preset, TestCommand, UnknownPreset};

/// A test command that cannot be built from what the task names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The runner is not a preset.
    #[error(transparent)]
    Runner(#[from] UnknownPreset),
    /// The id syntax has no such name.
    #[error(transparent)]
    Ids(#[from] UnknownSyntax),
    /// The template could never write a report.
    #[error(transparent)]
    Template(#[from] MissingJunit),
}

impl TaskFile {
    /// The test command this task names: a template keeps the preset's id syntax and
    /// environment handling unless `ids` names another; `None` when it names neither a
    /// template nor a runner.
    pub fn test_command(&self) -> Result<Option<TestCommand>, CommandError> {
        let preset = self
            .runner
            .as_deref()
            .map(str::parse::<Preset>)
            .transpose()?;
        let syntax = self
            .ids
            .as_deref()
            .map(str::parse::<IdSyntax>)
            .transpose()?;
        let command = match (self.test_cmd.as_deref(), preset) {
            (Some(t), Some(p)) if syntax.is_none() => TestCommand::custom_for(t, p)?,
            (Some(t), _) => TestCommand::custom(t, syntax.unwrap_or(IdSyntax::Pytest))?,
            (None, Some(p)) => TestCommand::preset(p),
            (None, None) => return Ok(None),
        };
        Ok(Some(command))
    }
}
