//! Test commands: presets for known runners and the `{tests}`/`{junit}`/`{workdir}` template.

use crate::ids::IdSyntax;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::str::FromStr;

/// A known test runner: its command template and its id syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// pytest, ids are node ids relative to the repository root.
    Pytest,
}

impl Preset {
    /// Every preset, for help texts.
    pub const ALL: [Preset; 1] = [Preset::Pytest];

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Pytest => "pytest",
        }
    }

    /// The command template.
    pub fn template(self) -> &'static str {
        match self {
            // `--rootdir` pins node ids (and so JUnit classnames) to the repository root,
            // whatever config files the project has and wherever the requested tests live.
            Preset::Pytest => {
                "python -m pytest -p no:cacheprovider --rootdir={workdir} --junitxml={junit} {tests}"
            }
        }
    }

    /// How the preset's ids map to testcases.
    pub fn id_syntax(self) -> IdSyntax {
        match self {
            Preset::Pytest => IdSyntax::Pytest,
        }
    }

    /// Variables removed from the environment of the test command.
    ///
    /// The pytest preset needs bytecode in the checkout to tell whether the patched code ran.
    pub fn env_remove(self) -> &'static [&'static str] {
        match self {
            Preset::Pytest => &["PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"],
        }
    }
}

/// A runner name that is not a preset.
#[derive(Debug, thiserror::Error)]
#[error("unknown runner `{0}` (known: pytest)")]
pub struct UnknownPreset(pub String);

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPreset(s.to_string()))
    }
}

/// A test command template that has been checked to contain `{junit}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Template(String);

/// A template without `{junit}`: the command could never produce a report.
#[derive(Debug, thiserror::Error)]
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

    /// The shell command for these ids, report path and checkout.
    pub fn render(&self, ids: &[&str], junit: &Path, workdir: &Path) -> String {
        let tests = shell_words::join(ids);
        with_workdir(&self.0, workdir)
            .replace("{junit}", &quote_path(junit))
            .replace("{tests}", &tests)
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

/// Whether any of the patched Python files was imported from the checkout during the run,
/// judged by its bytecode in the checkout's `__pycache__`. `None` when the patch touched no
/// Python file that still exists.
pub fn patched_python_imported(workdir: &Path, files: &[String]) -> Option<bool> {
    let mut any = false;
    for file in files.iter().filter(|f| f.ends_with(".py")) {
        let path = workdir.join(file);
        if !path.is_file() {
            continue;
        }
        any = true;
        let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
            continue;
        };
        let prefix = format!("{}.", stem.to_string_lossy());
        let imported = std::fs::read_dir(dir.join("__pycache__"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with(&prefix) && name.ends_with(".pyc")
            });
        if imported {
            return Some(true);
        }
    }
    any.then_some(false)
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
            &["t.py::a[x y]", "t.py::b[it's]"],
            Path::new("/tmp/r/junit.xml"),
            Path::new("/tmp/my dir"),
        );
        assert_eq!(
            s,
            "run --out=/tmp/r/junit.xml --in '/tmp/my dir' 't.py::a[x y]' 't.py::b[it'\\''s]' ${HOME}"
        );
    }

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            assert!(Template::new(p.template()).is_ok());
        }
        assert!("nosetests".parse::<Preset>().is_err());
    }

    #[test]
    fn pycache_detection() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(pkg.join("__pycache__")).unwrap();
        std::fs::write(pkg.join("a.py"), "").unwrap();
        std::fs::write(pkg.join("b.py"), "").unwrap();
        let files = vec![
            "pkg/a.py".to_string(),
            "pkg/b.py".to_string(),
            "README".to_string(),
        ];
        assert_eq!(patched_python_imported(dir.path(), &files), Some(false));
        std::fs::write(pkg.join("__pycache__/b.cpython-311.pyc"), "").unwrap();
        assert_eq!(patched_python_imported(dir.path(), &files), Some(true));
        assert_eq!(
            patched_python_imported(dir.path(), &["README".to_string()]),
            None
        );
        assert_eq!(
            patched_python_imported(dir.path(), &["gone.py".to_string()]),
            None
        );
    }
}
