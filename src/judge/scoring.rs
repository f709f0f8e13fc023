//! Scorings: patchgrade's own rules for what a test's statuses mean, and SWE-bench's, side by
//! side (`differences` explains each test the two count differently).
//!
//! SWE-bench's rules are those of `swebench.harness.grading` (`test_passed`, `test_failed`,
//! `get_eval_tests_report`, `get_resolution_status`): a test passes when its log says
//! `PASSED` or `XFAIL` and fails when it says `FAILED` or `ERROR` or is absent; anything else
//! counts neither way; there is no baseline; an axis with nothing counted is full; resolved is
//! both axes full.

use crate::observe::{Group, SwebenchView};
use crate::util::names::Named;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What one test contributes to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// F2P test that passes after the patch.
    Fixed,
    /// F2P test that does not pass after the patch.
    NotFixed,
    /// P2P test that still passes (or stays skipped, if it was skipped at base).
    Kept,
    /// P2P test the patch broke.
    Broken,
    /// P2P test that already failed, errored or was missing at base: left out of the P2P axis.
    BrokenAtBase,
    /// Counted neither way (SWE-bench's scoring: a skipped test): left out of its axis.
    Uncounted,
}

/// Which rules turn what was observed into effects, axes and an outcome.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scoring {
    /// patchgrade's: only a pass passes, a skip after a pass at base is breakage, and P2P tests
    /// already failing at base are left out.
    #[default]
    Patchgrade,
    /// SWE-bench's harness's, reproduced exactly from the same observations.
    Swebench,
}

impl Named for Scoring {
    const NAMES: &'static [(&'static str, Scoring)] = &[
        ("patchgrade", Scoring::Patchgrade),
        ("swebench", Scoring::Swebench),
    ];
}

impl Scoring {
    /// The name `--scoring` takes.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }

    /// The other scoring.
    pub fn other(self) -> Scoring {
        match self {
            Scoring::Patchgrade => Scoring::Swebench,
            Scoring::Swebench => Scoring::Patchgrade,
        }
    }
}

impl fmt::Display for Scoring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a scoring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scoring `{0}` (known: {known})", known = Scoring::known())]
pub struct UnknownScoring(pub String);

impl FromStr for Scoring {
    type Err = UnknownScoring;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scoring::from_name(s).ok_or_else(|| UnknownScoring(s.to_string()))
    }
}

/// A test's effect under SWE-bench's rules, from how its log would count it.
pub fn swebench_effect(group: Group, view: SwebenchView) -> Effect {
    match (group, view) {
        (_, SwebenchView::Uncounted) => Effect::Uncounted,
        (Group::F2p, SwebenchView::Pass) => Effect::Fixed,
        (Group::F2p, SwebenchView::Fail) => Effect::NotFixed,
        (Group::P2p, SwebenchView::Pass) => Effect::Kept,
        (Group::P2p, SwebenchView::Fail) => Effect::Broken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scorings_parse_by_name() {
        assert_eq!("swebench".parse::<Scoring>(), Ok(Scoring::Swebench));
        assert_eq!("patchgrade".parse::<Scoring>(), Ok(Scoring::Patchgrade));
        let e = "swe".parse::<Scoring>().unwrap_err().to_string();
        assert_eq!(e, "unknown scoring `swe` (known: patchgrade, swebench)");
    }
}
