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

#[cfg(test)]
mod tests {
    use super::*;

    fn task(runner: Option<&str>, test_cmd: Option<&str>, ids: Option<&str>) -> TaskFile {
        TaskFile {
            runner: runner.map(String::from),
            test_cmd: test_cmd.map(String::from),
            ids: ids.map(String::from),
            ..TaskFile::default()
        }
    }

    #[test]
    fn a_template_with_a_runner_keeps_the_runners_ids_unless_ids_say_otherwise() {
        let both = task(Some("go"), Some("make {junit} {tests}"), None);
        let command = both.test_command().unwrap().unwrap();
        assert_eq!(command.ids(), IdSyntax::Go);
        assert_eq!(command.preset_of(), Some(Preset::Go));
        // Not the preset's own command: its exit status is not judged against its report.
        assert!(!command.exit_reflects_failures());
        let own = task(Some("go"), None, None)
            .test_command()
            .unwrap()
            .unwrap();
        assert!(own.exit_reflects_failures());
        let ids = task(Some("go"), Some("make {junit}"), Some("java"));
        assert_eq!(ids.test_command().unwrap().unwrap().ids(), IdSyntax::Java);
        let bare = task(None, Some("make {junit}"), None);
        assert_eq!(
            bare.test_command().unwrap().unwrap().ids(),
            IdSyntax::Pytest
        );
        assert!(task(None, None, None).test_command().unwrap().is_none());
        assert!(matches!(
            task(Some("nose"), None, None).test_command(),
            Err(CommandError::Runner(_))
        ));
        assert!(matches!(
            task(None, Some("make"), None).test_command(),
            Err(CommandError::Template(_))
        ));
    }
}
