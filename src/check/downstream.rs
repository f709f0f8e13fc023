//! Downstream tests of a check (`--downstream`): found before the runs, from coverage at base
//! (built once per task and kept beside the baselines), from the imports of the changed
//! modules, or from the user's list; run with the requested tests on both sides; graded
//! beside them after.

use super::cache::BaselineCache;
use super::execute::Job;
use super::plan::{DownstreamMode, Plan, Selection};
use super::prepare::{RunRoot, Site, blocking, create_checkout, prepare_baseline};
use crate::judge::downstream::{Downstream, Method};
use crate::observe::coverage::CoverageMap;
use crate::observe::{IdSyntax, Requested};
use crate::run::TestCommand;
use crate::run::preset::Reach;
use crate::workspace::Patch;
use crate::workspace::imports::{Dependent, importers, is_test_path, rust_dependents};
use std::collections::HashSet;
use std::sync::Arc;

/// The suite at base under coverage.py, each test's lines recorded as its context, written
/// as JSON beside the JUnit report. Its configuration goes in the run's report directory,
/// written by the command itself before anything of the project runs.
const COVERAGE: &str = "PATCHGRADE_COVERAGE={junit}; export PATCHGRADE_COVERAGE
cat > \"$PATCHGRADE_COVERAGE.rc\" <<'PATCHGRADE_RC'
[run]
dynamic_context = test_function
data_file = ${PATCHGRADE_COVERAGE}.data
relative_files = True
source = .
[json]
show_contexts = True
PATCHGRADE_RC
python -m coverage run --rcfile=\"$PATCHGRADE_COVERAGE.rc\" -m pytest -p no:cacheprovider --rootdir={workdir} --junitxml={junit} {tests}
status=$?
python -m coverage json --rcfile=\"$PATCHGRADE_COVERAGE.rc\" -q -o \"$PATCHGRADE_COVERAGE.json\" || exit 97
exit $status";

impl Plan {
    /// The downstream tests of this check, `None` when off.
    pub(super) async fn select_downstream(
        &self,
        candidate: &Patch,
        root: &Arc<RunRoot>,
    ) -> Option<Selection> {
        let requested: HashSet<&str> = self.requested().iter().map(|(id, _)| id).collect();
        let max = self.settings.downstream_max;
        let cap = |found: Vec<String>| {
            let found: Vec<String> = found
                .into_iter()
                .filter(|id| !requested.contains(id.as_str()))
                .collect();
            capped(found, max)
        };
        let syntax = self.command.ids();
        let reach = self.command.downstream();
        let python = reach == Reach::Python;
        let mut note = None;
        match &self.settings.downstream {
            DownstreamMode::Off => return None,
            DownstreamMode::List(ids) => {
                let (ids, found, skipped) = cap(ids.clone());
                return Some(Selection {
                    ids,
                    files: Vec::new(),
                    report: Downstream::found(Method::List, found, skipped, None),
                });
            }
            DownstreamMode::Coverage if !python => {
                return Some(Selection::unavailable(format!(
                    "coverage at base needs a Python runner (pytest, unittest), not `{syntax}`"
                )));
            }
            DownstreamMode::Auto | DownstreamMode::Coverage if python => {
                match self.coverage_map(root).await {
                    Ok((map, cached)) => {
                        let (ids, found, skipped) =
                            cap(map.covering(&candidate.touched_base_lines()));
                        let mut report = Downstream::found(Method::Coverage, found, skipped, None);
                        report.map_cached = cached;
                        return Some(Selection {
                            ids,
                            files: Vec::new(),
                            report,
                        });
                    }
                    Err(why) if self.settings.downstream == DownstreamMode::Coverage => {
                        return Some(Selection::unavailable(format!(
                            "coverage at base could not be built: {why}"
                        )));
                    }
                    Err(why) => {
                        note = Some(format!(
                            "coverage at base could not be built ({why}); found by imports"
                        ));
                    }
                }
            }
            _ => {}
        }
        if reach == Reach::Rust {
            return Some(self.rust_selection(candidate, root, &requested, note).await);
        }
        let by_imports = match reach {
            Reach::Python | Reach::JavaScript => true,
            Reach::Rust | Reach::Unknown => false,
        };
        if !by_imports {
            return Some(Selection::unavailable(format!(
                "no way to find downstream tests for `{syntax}` here (coverage reads Python; \
                 imports read Python, JavaScript and Rust); give a list"
            )));
        }
        let found = self.importing_tests(candidate, root).await;
        let (files, found, skipped) = cap(found);
        Some(Selection {
            ids: Vec::new(),
            files,
            report: Downstream::found(Method::Imports, found, skipped, note),
        })
    }

    /// Rust's downstream tests: those of the crates and modules that depend on a changed file,
    /// each test by id and each module whole.
    async fn rust_selection(
        &self,
        candidate: &Patch,
        root: &Arc<RunRoot>,
        requested: &HashSet<&str>,
        note: Option<String>,
    ) -> Selection {
        let (source, changed) = (self.source.clone(), candidate.files().to_vec());
        let found = blocking(root.clone(), move || {
            let rust = |p: &str| p.ends_with(".rs") || p.ends_with("Cargo.toml");
            let files = source.text_files(rust);
            Ok(rust_dependents(
                files.iter().map(|(p, s)| (p.as_str(), s.as_str())),
                &changed,
            ))
        })
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !matches!(d, Dependent::Test(id) if requested.contains(id.as_str())))
        .collect();
        let (found, n, skipped) = capped(found, self.settings.downstream_max);
        let (mut ids, mut modules) = (Vec::new(), Vec::new());
        for d in found {
            match d {
                Dependent::Test(id) => ids.push(id),
                Dependent::Module(prefix) => modules.push(prefix),
            }
        }
        Selection {
            ids,
            files: modules,
            report: Downstream::found(Method::Imports, n, skipped, note),
        }
    }

    /// The test files importing a changed module (Python, JavaScript), but the hidden tests'.
    async fn importing_tests(&self, candidate: &Patch, root: &Arc<RunRoot>) -> Vec<String> {
        let hidden: HashSet<&str> = self
            .test_patch
            .as_ref()
            .map(|p| p.files().iter().map(String::as_str).collect())
            .unwrap_or_default();
        let (source, changed) = (self.source.clone(), candidate.files().to_vec());
        blocking(root.clone(), move || {
            let tests = source.text_files(is_test_path);
            Ok(importers(
                tests.iter().map(|(p, s)| (p.as_str(), s.as_str())),
                &changed,
            ))
        })
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !hidden.contains(f.as_str()))
        .collect()
    }

    /// Which tests run which lines at base: from the cache, or built by running the suite at
    /// base under coverage (and stored, when the run was sandboxed). `true` when cached.
    async fn coverage_map(&self, root: &Arc<RunRoot>) -> Result<(CoverageMap, bool), String> {
        let command = TestCommand::custom(COVERAGE, IdSyntax::Pytest).map_err(|e| e.to_string())?;
        let mut stored = None;
        if let Some(cache) = &self.settings.cache {
            let name = self.map_name(cache, root).await;
            let guard = cache.lock(&name).await;
            if let Some(map) = cache.load::<CoverageMap>(&name) {
                log::info!("coverage map from the cache ({} tests)", map.tests.len());
                return Ok((map, true));
            }
            stored = Some((cache.clone(), name, guard));
        }
        log::info!("building the coverage map: the suite at base under coverage.py");
        let dir = root.path().join("coverage");
        let (source, tp, at) = (self.source.clone(), self.test_patch.clone(), dir.clone());
        let trees = self.trees(root);
        let prepared = blocking(root.clone(), move || {
            let site = Site {
                dir: &at,
                pool: None,
                seeding: None,
                trees: trees.as_ref(),
            };
            create_checkout(&source, site).and_then(|made| prepare_baseline(made, tp.as_ref()))
        })
        .await
        .map_err(|e| e.describe().1)?;
        let job = Job {
            command: &command,
            ids: Vec::new(),
            files: Vec::new(),
            requested: Requested { f2p: &[], p2p: &[] },
        };
        let hidden = self.hidden(root);
        let keep = self.settings.keep.is_some();
        let run = self.execute(&job, &dir, &prepared, &hidden, keep).await;
        let json_file = dir.join("out/junit.xml.json");
        let json = std::fs::read(&json_file);
        let evidence = run.evidence.map_err(|failure| {
            let why = failure.message;
            if why.contains("No module named coverage") {
                "coverage.py is not installed where the tests run (`python -m coverage`)".into()
            } else {
                why
            }
        })?;
        let report = evidence.attempts.first().ok_or("no report")?;
        let json = json.map_err(|e| format!("coverage.py wrote no data ({e})"))?;
        let map = CoverageMap::build(&json, report).map_err(|e| e.to_string())?;
        // As a baseline: run on the host, the candidate's code could have disturbed it.
        if let Some((cache, name, _guard)) = stored
            && self.sandbox.may_keep()
        {
            let _ = cache.store(&name, &map);
        }
        Ok((map, false))
    }

    /// The coverage map's cache entry: the baseline's key, with the coverage command and no
    /// ids (the map is the task's, whatever the candidate).
    async fn map_name(&self, cache: &BaselineCache, root: &RunRoot) -> String {
        let version = self.runner_version(cache, root.path()).await;
        let none: &[String] = &[];
        self.key_name(
            (COVERAGE, IdSyntax::Pytest),
            [none, none, none],
            0,
            version.as_deref(),
        )
    }
}

/// The first `max` of what was found, how many were found, and how many are left out.
fn capped<T>(found: Vec<T>, max: usize) -> (Vec<T>, usize, usize) {
    let n = found.len();
    let kept: Vec<T> = found.into_iter().take(max).collect();
    let skipped = n - kept.len();
    (kept, n, skipped)
}
