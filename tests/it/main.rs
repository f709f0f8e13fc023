//! patchgrade's integration tests, one binary: real git repositories in temp dirs, the real
//! binary and the real runners, each run checked against the user's repository byte for byte.
//! `setup` holds the fixtures and the `check` command-line builder every module uses.

mod setup;

mod agent_e2e;
mod attribution_e2e;
mod batch_e2e;
mod bytecode_e2e;
mod check_e2e;
mod check_env;
mod check_input;
mod cli_e2e;
mod corpus;
mod derive_e2e;
mod docs;
mod downstream_e2e;
mod examples_e2e;
mod faults_e2e;
mod fetch_e2e;
mod host_paths_e2e;
mod hostile_e2e;
mod inputs_e2e;
mod layout;
mod limits_e2e;
mod patches_e2e;
mod pool_e2e;
mod presets_e2e;
mod projects_e2e;
mod runners_e2e;
mod sandbox_e2e;
mod secrets_e2e;
mod snapshots_e2e;
mod swebench_e2e;
mod swebench_runners_e2e;
mod tamper_e2e;
mod taxonomy;
