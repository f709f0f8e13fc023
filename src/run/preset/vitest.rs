//! vitest's junit reporter.

use super::common::{JS_ENV, js_select};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::ids::{IdSyntax, JsFlavor};

const TEMPLATE: &str =
    "npx vitest run --reporter=default --reporter=junit --outputFile.junit={junit} {tests}";

/// JavaScript's test files and vitest's configuration.
const PROTECTED: &[&str] = &["**/__tests__/**", "**/*.test.*", "**/*.spec.*", "**/vitest.config.*"];

pub(super) const SPEC: Spec = Spec {
    name: "vitest",
    template: TEMPLATE,
    version_probe: "node --version",
    id_syntax: IdSyntax::Js(JsFlavor::Vitest),
    select: js_select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: PROTECTED,
    sections: &[],
    build_dirs: &[],
    lock_files: &[],
    fetch: no_fetch,
    pass_env: JS_ENV,
    env_remove: &[],
    downstream: Reach::JavaScript,
    support_files: &[],
    runs_test_files: false,
};
