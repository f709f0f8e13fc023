//! The test command: a `{tests}`/`{junit}`/`{workdir}` template and the syntax of the ids it
//! takes, from a preset or written by the user.

use super::preset::{Preset, Reach};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use crate::workspace::BuildDir;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How the tests are run: a template and the syntax of the ids it takes.
#[derive(Debug, Clone)]
pub struct TestCommand {
    template: Template,
    ids: IdSyntax,
    preset: Option<Preset>,
    /// Runs the test patch's test files whole, as SWE-bench does (`--runner swebench`).
    swebench: bool,
}

impl TestCommand {
    /// A preset's command.
    pub fn preset(preset: Preset) -> TestCommand {
        TestCommand {
            template: Template(preset.template().to_string()),
            ids: preset.id_syntax(),
            preset: Some(preset),
            swebench: false,
        }
    }

    /// A preset's command run as SWE-bench runs it: the test patch's test files whole, and
    /// the ids.
    pub fn swebench(preset: Preset) -> TestCommand {
        TestCommand {
            swebench: true,
            ..TestCommand::preset(preset)
        }
    }

    /// This command, run as SWE-bench runs it (see [`TestCommand::swebench`]).
    pub fn as_swebench(self) -> TestCommand {
        TestCommand {
            swebench: true,
            ..self
        }
    }

    /// Whether the test patch's test files run whole, besides the ids: as SWE-bench runs
    /// them, or because the preset's ids alone may not say where a test is.
    pub fn runs_test_files(&self) -> bool {
        self.swebench || self.preset.is_some_and(Preset::runs_test_files)
    }

    /// A custom template with the given id syntax.
    pub fn custom(template: &str, ids: IdSyntax) -> Result<TestCommand, MissingJunit> {
        Ok(TestCommand {
            template: Template::new(template)?,
            ids,
            preset: None,
            swebench: false,
        })
    }

    /// A custom template that keeps a preset's id syntax and environment handling.
    pub fn custom_for(template: &str, preset: Preset) -> Result<TestCommand, MissingJunit> {
        Ok(TestCommand {
            template: Template::new(template)?,
            ids: preset.id_syntax(),
            preset: Some(preset),
            swebench: false,
        })
    }

    /// The template.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The syntax of the ids it takes.
    pub fn ids(&self) -> IdSyntax {
        self.ids
    }

    /// The preset it is, or whose ids and environment handling it keeps.
    pub fn preset_of(&self) -> Option<Preset> {
        self.preset
    }

    /// The preset's build directories and lock files ([`Preset::build_dirs`]), when the
    /// command is the preset's own: a custom command may build elsewhere.
    pub fn build_dirs(&self) -> (&'static [BuildDir], &'static [&'static str]) {
        self.preset
            .filter(|p| p.template() == self.template.as_str())
            .map_or((&[], &[]), |p| p.build_dirs())
    }

    /// The preset's version probe, when the command is the preset's own: a custom command may
    /// run other tools, whose versions nothing here knows.
    pub fn version_probe(&self) -> Option<&'static str> {
        self.preset
            .filter(|p| p.template() == self.template.as_str())
            .map(Preset::version_probe)
    }

    /// Whether its exit status says whether tests failed: only a preset's own command is
    /// known to (a custom command may exit as it likes).
    pub fn exit_reflects_failures(&self) -> bool {
        self.version_probe().is_some() && self.preset.is_some_and(Preset::exit_reflects_failures)
    }

    /// Whether `{junit}` names a directory of reports rather than a file.
    pub fn junit_is_dir(&self) -> bool {
        self.preset.is_some_and(|p| p.junit_is_dir())
    }

    /// Variables removed from the inherited environment (unless the user sets them).
    pub fn env_remove(&self) -> &'static [&'static str] {
        self.preset.map(Preset::env_remove).unwrap_or_default()
    }

    /// The `{tests}` arguments for these ids: each in its run form, once, selected the
    /// preset's way (with the test files to run whole, see [`Preset::select`]) or
    /// shell-quoted for a custom command. A custom command taking pytest's ids (SWE-bench's
    /// `pytest -rA`, say) is given the files to run whole as pytest's preset is: they are
    /// pytest arguments too, and a downstream test file found is run, not dropped.
    pub fn select(&self, ids: &[String], workdir: &Path, files: &[String]) -> String {
        let forms = dedup(ids.iter().map(|id| self.ids.run_form(id)));
        match (self.preset, self.ids) {
            (Some(preset), _) => preset.select(&forms, workdir, files),
            (None, IdSyntax::Pytest) => Preset::Pytest.select(&forms, workdir, files),
            (None, _) => shell_words::join(&forms),
        }
    }

    /// The files the command's runner needs beside the checkout (see
    /// [`Preset::support_files`]).
    pub fn support_files(&self) -> &'static [(&'static str, &'static str)] {
        self.preset.map(Preset::support_files).unwrap_or_default()
    }

    /// The variables the command inherits from the user's environment: `BASE_ENV` and
    /// what its preset needs ([`Preset::pass_env`]).
    pub fn pass_env(&self) -> Vec<String> {
        let preset = self.preset.map(Preset::pass_env).unwrap_or_default();
        super::preset::BASE_ENV
            .iter()
            .chain(preset)
            .map(|s| s.to_string())
            .collect()
    }

    /// How the tests that reach a changed file are found: the preset's way, or for a custom
    /// command that of the first preset taking its ids.
    pub fn downstream(&self) -> Reach {
        self.preset
            .or(Preset::of_syntax(self.ids))
            .map_or(Reach::Unknown, Preset::downstream)
    }

    /// The preset's download step ([`Preset::fetch`]), whatever the command: a custom one
    /// runs the same runner.
    pub fn fetch(&self) -> Option<super::preset::Fetch> {
        self.preset.and_then(Preset::fetch)
    }
}

/// A test command template that has been checked to contain `{junit}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Template(String);

/// A template without `{junit}`: the command could never produce a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "test command `{0}` has no {{junit}} placeholder: patchgrade reads results only from the JUnit report the command writes there"
)]
pub struct MissingJunit(pub String);

impl Template {
    /// Check and wrap a template.
    pub fn new(template: &str) -> Result<Template, MissingJunit> {
        if template.contains("{junit}") {
            Ok(Template(template.to_string()))
        } else {
            Err(MissingJunit(template.to_string()))
        }
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The shell command for these test arguments (see [`Preset::select`]; a custom command
    /// gets the ids shell-quoted), report path and checkout.
    pub fn render(&self, tests: &str, junit: &Path, workdir: &Path) -> String {
        with_workdir(&self.0, workdir)
            .replace("{junit}", &quote_path(junit))
            .replace("{tests}", tests)
    }
}

/// Replace `{workdir}` in a shell command, quoted.
pub fn with_workdir(command: &str, workdir: &Path) -> String {
    command.replace("{workdir}", &quote_path(workdir))
}

/// Replace `{workdir}` in an environment value, verbatim.
pub fn with_workdir_raw(value: &str, workdir: &Path) -> String {
    value.replace("{workdir}", &workdir.to_string_lossy())
}

fn quote_path(path: &Path) -> String {
    shell_words::quote(&path.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_needs_junit() {
        assert!(Template::new("pytest {tests}").is_err());
        assert!(Template::new("pytest --junitxml={junit}").is_ok());
    }

    #[test]
    fn render_quotes_every_id_and_path() {
        let t = Template::new("run --out={junit} --in {workdir} {tests} ${HOME}").unwrap();
        let s = t.render(
            &shell_words::join(["t.py::a[x y]", "t.py::b[it's]"]),
            Path::new("/tmp/r/junit.xml"),
            Path::new("/tmp/my dir"),
        );
        assert_eq!(
            s,
            "run --out=/tmp/r/junit.xml --in '/tmp/my dir' 't.py::a[x y]' 't.py::b[it'\\''s]' ${HOME}"
        );
    }
}
