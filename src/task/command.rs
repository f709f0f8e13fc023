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
    /// `--runner swebench` for a repository SWE-bench's harness does not run.
    #[error(
        "runner swebench: `{0}` is not one of SWE-bench's Python repositories (known: {known}); \
         give its runner",
        known = SWEBENCH_PYTEST.join(", ")
    )]
    NotSwebench(String),
}

/// The runner name that picks each task's command as SWE-bench's harness does.
pub const SWEBENCH: &str = "swebench";

/// SWE-bench's Python repositories whose tests its harness runs with pytest (every one but
/// Django's and sympy's): the keys of its `MAP_REPO_TO_PARSER_PY`.
const SWEBENCH_PYTEST: [&str; 16] = [
    "astropy/astropy",
    "marshmallow-code/marshmallow",
    "matplotlib/matplotlib",
    "mwaskom/seaborn",
    "pallets/flask",
    "psf/requests",
    "pvlib/pvlib-python",
    "pydata/xarray",
    "pydicom/pydicom",
    "pylint-dev/astroid",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "pyvista/pyvista",
    "scikit-learn/scikit-learn",
    "sphinx-doc/sphinx",
    "sqlfluff/sqlfluff",
];

/// The preset SWE-bench's harness runs a repository's tests with (its `test_cmd`s: Django's
/// `runtests.py`, sympy's `bin/test`, pytest for the rest).
pub fn swebench_preset(repo: &str) -> Result<Preset, CommandError> {
    match repo {
        "django/django" => Ok(Preset::Django),
        "sympy/sympy" => Ok(Preset::Sympy),
        r if SWEBENCH_PYTEST.contains(&r) => Ok(Preset::Pytest),
        other => Err(CommandError::NotSwebench(other.to_string())),
    }
}

/// Where SWE-bench's images keep the environment its harness activates.
pub const SWEBENCH_PYTHON: &str = "/opt/miniconda3/envs/testbed/bin/python";

/// SWE-bench's image for an instance, as its harness names the images it publishes
/// (`TestSpec.instance_image_key` with the `swebench` namespace).
pub fn swebench_image(instance_id: &str) -> String {
    format!(
        "swebench/sweb.eval.x86_64.{}:latest",
        instance_id.to_lowercase().replace("__", "_1776_")
    )
}

impl TaskFile {
    /// With `runner = "swebench"` and a container sandbox: the instance's SWE-bench image when
    /// the task names none, and that image's interpreter when it names none either.
    pub fn with_swebench_defaults(mut self) -> TaskFile {
        let container = matches!(self.sandbox.as_deref(), Some("docker" | "podman"));
        if self.runner.as_deref() != Some(SWEBENCH) || !container || self.image.is_some() {
            return self;
        }
        if let Some(id) = &self.instance_id {
            self.image = Some(swebench_image(id));
            self.python.get_or_insert_with(|| SWEBENCH_PYTHON.into());
        }
        self
    }

    /// The test command this task names: a template keeps the preset's id syntax and
    /// environment handling unless `ids` names another; `None` when it names neither a
    /// template nor a runner.
    ///
    /// `runner = "swebench"` picks the preset from the task's `repo` as SWE-bench's harness
    /// does, and runs the test patch's test files whole besides the ids.
    pub fn test_command(&self) -> Result<Option<TestCommand>, CommandError> {
        let swebench = self.runner.as_deref() == Some(SWEBENCH);
        let preset = if swebench {
            Some(swebench_preset(
                self.repo.as_deref().unwrap_or("no owner/name"),
            )?)
        } else {
            self.runner
                .as_deref()
                .map(str::parse::<Preset>)
                .transpose()?
        };
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
        Ok(Some(if swebench {
            command.as_swebench()
        } else {
            command
        }))
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

    #[test]
    fn swebench_images_are_named_as_swebench_publishes_them() {
        assert_eq!(
            swebench_image("django__django-11099"),
            "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
        );
        let t = TaskFile {
            instance_id: Some("sympy__sympy-20590".into()),
            sandbox: Some("docker".into()),
            ..task(Some("swebench"), None, None)
        }
        .with_swebench_defaults();
        assert_eq!(
            t.image.as_deref(),
            Some("swebench/sweb.eval.x86_64.sympy_1776_sympy-20590:latest")
        );
        assert_eq!(
            t.python.as_deref(),
            Some(std::path::Path::new(SWEBENCH_PYTHON))
        );
        // A given image is the user's: nothing is assumed about it.
        let own = TaskFile {
            image: Some("mine".into()),
            ..t.clone()
        }
        .with_swebench_defaults();
        assert_eq!(own.image.as_deref(), Some("mine"));
        // No container: the interpreter is the user's to give.
        let local = TaskFile {
            instance_id: Some("x__y-1".into()),
            ..task(Some("swebench"), None, None)
        }
        .with_swebench_defaults();
        assert!(local.image.is_none() && local.python.is_none());
    }

    #[test]
    fn swebench_picks_each_repositorys_runner_and_runs_the_test_files() {
        let of = |repo: &str| {
            TaskFile {
                repo: Some(repo.into()),
                ..task(Some("swebench"), None, None)
            }
            .test_command()
        };
        let django = of("django/django").unwrap().unwrap();
        assert_eq!(
            (django.preset_of(), django.ids()),
            (Some(Preset::Django), IdSyntax::Django)
        );
        assert!(django.runs_test_files());
        let sympy = of("sympy/sympy").unwrap().unwrap();
        assert_eq!(sympy.ids(), IdSyntax::Sympy);
        let flask = of("pallets/flask").unwrap().unwrap();
        assert_eq!(flask.preset_of(), Some(Preset::Pytest));
        assert!(flask.runs_test_files());
        // The preset alone does not run whole files.
        let pytest = task(Some("pytest"), None, None)
            .test_command()
            .unwrap()
            .unwrap();
        assert!(!pytest.runs_test_files());
        let e = of("golang/go").unwrap_err().to_string();
        assert!(
            e.starts_with("runner swebench: `golang/go` is not one of"),
            "{e}"
        );
    }
}
