//! node's test runner with its junit reporter.

use super::common::{JS_ENV, JS_PROTECTED, js_select};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::ids::{IdSyntax, JsFlavor};

const TEMPLATE: &str = "node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination={junit} {tests}";

pub(super) const SPEC: Spec = Spec {
    name: "node",
    template: TEMPLATE,
    version_probe: "node --version",
    id_syntax: IdSyntax::Js(JsFlavor::Node),
    select: js_select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: JS_PROTECTED,
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
