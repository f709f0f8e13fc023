//! The outcome taxonomy: the nine names a graded patch can end in.

use crate::util::names::Named;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much of one axis (F2P or P2P) holds after the patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Every test of the axis passes (vacuously true for an empty axis).
    All,
    /// At least one passes and at least one does not.
    Some,
    /// The axis has tests and none of them passes.
    None,
}

impl Level {
    /// The level of an axis with `passing` of `total` tests passing.
    ///
    /// An empty axis is `All`, as SWE-bench counts it; callers warn about it.
    pub fn of(passing: usize, total: usize) -> Level {
        debug_assert!(passing <= total);
        if passing >= total {
            Level::All
        } else if passing == 0 {
            Level::None
        } else {
            Level::Some
        }
    }

    /// Row/column index in the 3×3 grid (All first).
    pub fn index(self) -> usize {
        match self {
            Level::All => 0,
            Level::Some => 1,
            Level::None => 2,
        }
    }

    /// All three levels in grid order.
    pub const ALL: [Level; 3] = [Level::All, Level::Some, Level::None];
}

/// The outcome of grading one candidate patch.
///
/// Six outcomes are cells of the F2P × P2P grid; three lie outside it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every F2P test passes and every P2P test still passes.
    Resolved,
    /// Every F2P test passes, but some P2P tests broke.
    BreakingResolved,
    /// Some F2P tests pass and no P2P test broke.
    PartiallyResolved,
    /// Some F2P tests pass and some P2P tests broke.
    WorkInProgress,
    /// No F2P test passes and nothing broke: the patch changed nothing observable.
    NoOp,
    /// No F2P test passes and some P2P tests broke.
    Regression,
    /// The patch is empty or whitespace only.
    EmptyPatch,
    /// The patch does not apply to the base.
    PatchFailed,
    /// The run could not be judged (no report, timeout, command failed to start, broken task).
    Error,
    /// No F2P tests were given (they are hidden) and no P2P test broke: a verdict about
    /// breakage alone, never "resolved".
    NoBreakage,
    /// No F2P tests were given and some P2P tests broke.
    Breaking,
}

impl Outcome {
    /// The nine outcomes of a graded task, grid cells first, in a stable order for reports.
    pub const ALL: [Outcome; 9] = [
        Outcome::Resolved,
        Outcome::BreakingResolved,
        Outcome::PartiallyResolved,
        Outcome::WorkInProgress,
        Outcome::NoOp,
        Outcome::Regression,
        Outcome::EmptyPatch,
        Outcome::PatchFailed,
        Outcome::Error,
    ];

    /// The two outcomes of a P2P-only check (the F2P tests are hidden).
    pub const P2P_ONLY: [Outcome; 2] = [Outcome::NoBreakage, Outcome::Breaking];

    /// The outcome of a P2P-only check.
    pub fn p2p_only(p2p: Level) -> Outcome {
        match p2p {
            Level::All => Outcome::NoBreakage,
            _ => Outcome::Breaking,
        }
    }

    /// The grid cell for the F2P level (rows) and the P2P level (columns).
    pub fn from_grid(f2p: Level, p2p: Level) -> Outcome {
        match (f2p, p2p) {
            (Level::All, Level::All) => Outcome::Resolved,
            (Level::All, _) => Outcome::BreakingResolved,
            (Level::Some, Level::All) => Outcome::PartiallyResolved,
            (Level::Some, _) => Outcome::WorkInProgress,
            (Level::None, Level::All) => Outcome::NoOp,
            (Level::None, _) => Outcome::Regression,
        }
    }

    /// The kebab-case name used in JSON, flags and docs.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }

    /// The name in words, for people.
    pub fn title(self) -> &'static str {
        match self {
            Outcome::Resolved => "Resolved",
            Outcome::BreakingResolved => "Breaking Resolved",
            Outcome::PartiallyResolved => "Partially Resolved",
            Outcome::WorkInProgress => "Work in Progress",
            Outcome::NoOp => "No-Op",
            Outcome::Regression => "Regression",
            Outcome::EmptyPatch => "Empty Patch",
            Outcome::PatchFailed => "Patch Failed",
            Outcome::Error => "Error",
            Outcome::NoBreakage => "No Breakage",
            Outcome::Breaking => "Breaking",
        }
    }

    /// One sentence saying what the outcome means.
    pub fn meaning(self) -> &'static str {
        match self {
            Outcome::Resolved => "the patch makes every fail-to-pass test pass and breaks nothing",
            Outcome::BreakingResolved => {
                "the patch makes every fail-to-pass test pass but breaks pass-to-pass tests"
            }
            Outcome::PartiallyResolved => {
                "the patch makes some fail-to-pass tests pass and breaks nothing"
            }
            Outcome::WorkInProgress => {
                "the patch makes some fail-to-pass tests pass and breaks pass-to-pass tests"
            }
            Outcome::NoOp => "the patch makes no fail-to-pass test pass and breaks nothing",
            Outcome::Regression => {
                "the patch makes no fail-to-pass test pass and breaks pass-to-pass tests"
            }
            Outcome::EmptyPatch => "the patch is empty",
            Outcome::PatchFailed => "the patch does not apply to the base revision",
            Outcome::Error => "the run could not be judged",
            Outcome::NoBreakage => {
                "the patch breaks no pass-to-pass test; without fail-to-pass tests, whether it \
                 fixes the issue is not known"
            }
            Outcome::Breaking => {
                "the patch breaks pass-to-pass tests; without fail-to-pass tests, whether it \
                 fixes the issue is not known"
            }
        }
    }

    /// The grid position (F2P level, P2P level), or `None` outside the grid.
    pub fn cell(self) -> Option<(Level, Level)> {
        match self {
            Outcome::Resolved => Some((Level::All, Level::All)),
            Outcome::BreakingResolved => Some((Level::All, Level::Some)),
            Outcome::PartiallyResolved => Some((Level::Some, Level::All)),
            Outcome::WorkInProgress => Some((Level::Some, Level::Some)),
            Outcome::NoOp => Some((Level::None, Level::All)),
            Outcome::Regression => Some((Level::None, Level::Some)),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Named for Outcome {
    const NAMES: &'static [(&'static str, Outcome)] = &[
        ("resolved", Outcome::Resolved),
        ("breaking-resolved", Outcome::BreakingResolved),
        ("partially-resolved", Outcome::PartiallyResolved),
        ("work-in-progress", Outcome::WorkInProgress),
        ("no-op", Outcome::NoOp),
        ("regression", Outcome::Regression),
        ("empty-patch", Outcome::EmptyPatch),
        ("patch-failed", Outcome::PatchFailed),
        ("error", Outcome::Error),
        ("no-breakage", Outcome::NoBreakage),
        ("breaking", Outcome::Breaking),
    ];
}

/// An outcome name that is not one of the nine (or the two of a P2P-only check).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown outcome `{0}` (known: {known})", known = Outcome::known())]
pub struct UnknownOutcome(pub String);

impl FromStr for Outcome {
    type Err = UnknownOutcome;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::from_name(s.trim()).ok_or_else(|| UnknownOutcome(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grid_cell() {
        use Level::*;
        let expected = [
            [
                Outcome::Resolved,
                Outcome::BreakingResolved,
                Outcome::BreakingResolved,
            ],
            [
                Outcome::PartiallyResolved,
                Outcome::WorkInProgress,
                Outcome::WorkInProgress,
            ],
            [Outcome::NoOp, Outcome::Regression, Outcome::Regression],
        ];
        for f in [All, Some, None] {
            for p in [All, Some, None] {
                assert_eq!(
                    Outcome::from_grid(f, p),
                    expected[f.index()][p.index()],
                    "{f:?} {p:?}"
                );
            }
        }
    }

    #[test]
    fn levels_of_counts() {
        assert_eq!(Level::of(0, 0), Level::All);
        assert_eq!(Level::of(1, 1), Level::All);
        assert_eq!(Level::of(0, 1), Level::None);
        assert_eq!(Level::of(1, 2), Level::Some);
        assert_eq!(Level::of(0, 5), Level::None);
        assert_eq!(Level::of(4, 5), Level::Some);
    }

    #[test]
    fn names_round_trip_through_serde_and_from_str() {
        for o in Outcome::ALL.into_iter().chain(Outcome::P2P_ONLY) {
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.name()));
            assert_eq!(o.name().parse::<Outcome>().unwrap(), o);
            assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o);
        }
        assert!("resolve".parse::<Outcome>().is_err());
        // The serde names and the name table are one list.
        assert_eq!(
            Outcome::NAMES.len(),
            Outcome::ALL.len() + Outcome::P2P_ONLY.len()
        );
    }

    #[test]
    fn cells_agree_with_from_grid() {
        for o in Outcome::ALL {
            if let Some((f, p)) = o.cell() {
                assert_eq!(Outcome::from_grid(f, p), o);
            }
        }
        assert_eq!(
            Outcome::ALL.iter().filter(|o| o.cell().is_none()).count(),
            3
        );
        assert!(Outcome::P2P_ONLY.iter().all(|o| o.cell().is_none()));
    }

    #[test]
    fn p2p_only_is_never_resolved() {
        assert_eq!(Outcome::p2p_only(Level::All), Outcome::NoBreakage);
        assert_eq!(Outcome::p2p_only(Level::Some), Outcome::Breaking);
        assert_eq!(Outcome::p2p_only(Level::None), Outcome::Breaking);
    }
}
