//! bats-core: shell tests, one `@test "description"` each; ids are `file.bats.description`
//! (the JUnit classname is the file's name, the testcase the description, spaces and all).

use super::common::{in_checkout, quote, regex_escape};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::{Path, PathBuf};

/// The JUnit formatter, to `{junit}`: bats 1.8's report formatter (`--report-formatter`)
/// writes from a process nothing waits for, so its file was seen cut short after bats had
/// exited. bats exits 1 when a test failed.
const TEMPLATE: &str = "bats --recursive --formatter junit {tests} > {junit}";

pub(super) const SPEC: Spec = Spec {
    name: "bats",
    template: TEMPLATE,
    version_probe: "bats --version",
    id_syntax: IdSyntax::ClassnameName,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: &["**/*.bats"],
    sections: &[],
    build_dirs: &[],
    lock_files: &[],
    fetch: no_fetch,
    pass_env: &["BATS_LIB_PATH"],
    env_remove: &[],
    downstream: Reach::Unknown,
    support_files: &[],
    runs_test_files: false,
};

/// The files the ids name (found in the checkout by name: the classname is the file's name
/// alone) and an anchored `--filter` of their descriptions. Files to run whole are run
/// unfiltered, since the filter is one for the whole run; an id whose file is not found runs
/// the default directory's tests, filtered.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    let whole = in_checkout(workdir, files);
    let mut paths: Vec<String> = whole.iter().map(|f| f.to_string()).collect();
    let mut names = Vec::new();
    let mut lost = false;
    // One walk of the checkout for every id: the classname is the file's name alone.
    let mut suites: Option<Vec<String>> = None;
    for id in ids {
        let Some((file, name)) = id.split_once(".bats.") else {
            lost = true;
            names.push(id.clone());
            continue;
        };
        let file = format!("{file}.bats");
        let suites = suites.get_or_insert_with(|| bats_files(workdir));
        let found: Vec<&String> = suites
            .iter()
            .filter(|p| p.rsplit('/').next() == Some(file.as_str()))
            .collect();
        lost |= found.is_empty();
        paths.extend(found.into_iter().cloned());
        names.push(name.to_string());
    }
    if lost || paths.is_empty() {
        paths.push(default_dir(workdir).to_string());
    }
    let mut args = String::new();
    if whole.is_empty() && !names.is_empty() {
        let names: Vec<String> = dedup(names).iter().map(|n| regex_escape(n)).collect();
        args = format!("--filter {} ", quote(&format!("^({})$", names.join("|"))));
    }
    args + &shell_words::join(dedup(paths))
}

/// Where bats projects keep their tests: `test/`, else `tests/`, else the whole tree.
fn default_dir(workdir: &Path) -> &'static str {
    ["test", "tests"]
        .into_iter()
        .find(|d| workdir.join(d).is_dir())
        .unwrap_or(".")
}

/// The checkout's `.bats` files, relative to it (not under `.git` or `node_modules`, where
/// bats itself may be installed with its own tests); links are not followed.
fn bats_files(workdir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(workdir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let path = rel.join(&file_name);
            match entry.file_type() {
                Ok(t) if t.is_dir() && file_name != ".git" && file_name != "node_modules" => {
                    dirs.push(path)
                }
                Ok(t) if t.is_file() && file_name.to_string_lossy().ends_with(".bats") => {
                    found.push(path.to_string_lossy().into_owned())
                }
                _ => {}
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_select_their_files_by_name_and_their_descriptions_anchored() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["test/calc.bats", "test/deep/io.bats", "node_modules/x/calc.bats"] {
            std::fs::create_dir_all(dir.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            select(&ids(&["calc.bats.adds: two", "io.bats.reads (a+b)"]), dir.path(), &[]),
            "--filter '^(adds: two|reads \\(a\\+b\\))$' test/calc.bats test/deep/io.bats"
        );
        // A file that is not there: its description is looked for in the default directory.
        assert_eq!(
            select(&ids(&["gone.bats.x"]), dir.path(), &[]),
            "--filter '^(x)$' test"
        );
        // Files to run whole are run unfiltered.
        assert_eq!(
            select(&ids(&["calc.bats.adds"]), dir.path(), &ids(&["test/deep/io.bats"])),
            "test/deep/io.bats test/calc.bats"
        );
        assert_eq!(select(&[], dir.path(), &[]), "test");
    }
}
