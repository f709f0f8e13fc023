//! jest with jest-junit, configured to write files and titles apart.

use super::common::{JS_ENV, js_select};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::ids::{IdSyntax, JsFlavor};

/// jest-junit's defaults join describe titles and test name with spaces and write no file:
/// this configuration keeps them apart, so ids match exactly. The files come first because
/// `--reporters` takes every argument after it as another reporter. The cache goes with the
/// run: keyed by path, it could never serve another checkout and would grow in `TMPDIR`.
const TEMPLATE: &str = "JEST_JUNIT_OUTPUT_FILE={junit} JEST_JUNIT_SUITE_NAME='{filepath}' JEST_JUNIT_CLASSNAME='{classname}' JEST_JUNIT_TITLE='{title}' JEST_JUNIT_ANCESTOR_SEPARATOR=' › ' JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true npx jest {tests} --ci --cacheDirectory={junit}.cache --reporters=default --reporters=jest-junit";

/// JavaScript's test files and jest's configuration.
const PROTECTED: &[&str] = &["**/__tests__/**", "**/*.test.*", "**/*.spec.*", "**/jest.config.*"];

pub(super) const SPEC: Spec = Spec {
    name: "jest",
    template: TEMPLATE,
    version_probe: "node --version",
    id_syntax: IdSyntax::Js(JsFlavor::Jest),
    select: js_select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: PROTECTED,
    sections: &[("package.json", "jest")],
    build_dirs: &[],
    lock_files: &[],
    fetch: no_fetch,
    pass_env: JS_ENV,
    env_remove: &[],
    downstream: Reach::JavaScript,
    support_files: &[],
    runs_test_files: false,
};
