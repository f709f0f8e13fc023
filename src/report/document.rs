//! The documents patchgrade writes and the formats each renders in: one [`render`] for the
//! command line, the MCP server and library users alike.

use super::bars::{self, Bar};
use super::error::{RenderError, UnknownFormat};
use super::{compare, derive, feedback, html, human, junit_out, summary};
use crate::check::Derived;
use crate::harness::compare::Comparison;
use crate::harness::summary::Summary;
use crate::harness::swebench;
use crate::judge::verdict::Verdict;
use crate::observe::ids::Listed;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// A document, and the formats it renders in.
pub trait Document {
    /// The formats this document renders in.
    type Format;

    /// The document in `format`.
    fn render(&self, format: Self::Format) -> Result<String, RenderError>;
}

/// `doc` in `format`: the one way every front end renders what it writes.
pub fn render<D: Document + ?Sized>(doc: &D, format: D::Format) -> Result<String, RenderError> {
    doc.render(format)
}

/// How one verdict is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictFormat {
    /// A summary with the grid, for people.
    Human,
    /// The whole verdict, for programs.
    Json,
    /// What to fix, at most `max_bytes` long, for a language model.
    Feedback {
        /// The bound on the text's size.
        max_bytes: usize,
    },
    /// A JUnit report for CI dashboards: the outcome and each graded test as testcases.
    Junit,
}

impl VerdictFormat {
    /// The names [`FromStr`] takes, in the order they are listed to users.
    pub const NAMES: &'static [&'static str] = &["human", "json", "feedback", "junit"];

    /// This format, with feedback bounded by `max_bytes` (other formats are unbounded).
    pub fn bounded(self, max_bytes: usize) -> VerdictFormat {
        match self {
            VerdictFormat::Feedback { .. } => VerdictFormat::Feedback { max_bytes },
            other => other,
        }
    }
}

impl FromStr for VerdictFormat {
    type Err = UnknownFormat;

    /// `feedback` is bounded by [`DEFAULT_MAX_BYTES`](super::DEFAULT_MAX_BYTES).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "human" => VerdictFormat::Human,
            "json" => VerdictFormat::Json,
            "feedback" => VerdictFormat::Feedback {
                max_bytes: feedback::DEFAULT_MAX_BYTES,
            },
            "junit" => VerdictFormat::Junit,
            _ => return Err(UnknownFormat(s.to_string())),
        })
    }
}

impl Document for Verdict {
    type Format = VerdictFormat;

    fn render(&self, format: VerdictFormat) -> Result<String, RenderError> {
        Ok(match format {
            VerdictFormat::Human => human::human(self),
            VerdictFormat::Json => format!("{}\n", self.json()),
            VerdictFormat::Feedback { max_bytes } => feedback::feedback(self, max_bytes),
            VerdictFormat::Junit => junit_out::junit(self)?,
        })
    }
}

/// A run: its results and their summary (`report`).
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The outcome distribution of `verdicts`.
    pub summary: &'a Summary,
    /// Every result of the run.
    pub verdicts: &'a [Verdict],
    /// The run's name, the title of its page.
    pub title: &'a str,
    /// The dataset's instance ids, when known: SWE-bench's report counts the rest as
    /// incomplete.
    pub tasks: Option<&'a [String]>,
}

/// How a run is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RunFormat {
    /// For people.
    Human,
    /// For programs.
    Json,
    /// For a GitHub step summary.
    Markdown,
    /// SWE-bench's run report (make_run_report's fields, schema version 2).
    Swebench,
    /// One self-contained page for a browser: the grid as a heat map, the tasks.
    Html,
    /// A JUnit report for CI dashboards: one testsuite per task.
    Junit,
    /// The outcome distribution as a picture: one stacked bar (SVG).
    Svg,
}

impl Document for Run<'_> {
    type Format = RunFormat;

    fn render(&self, format: RunFormat) -> Result<String, RenderError> {
        Ok(match format {
            RunFormat::Human => summary::human(self.summary),
            RunFormat::Json => format!("{}\n", serde_json::to_string_pretty(self.summary)?),
            RunFormat::Markdown => summary::markdown(self.summary),
            RunFormat::Swebench => {
                let report = swebench::run_report(self.verdicts, self.tasks);
                format!("{}\n", serde_json::to_string_pretty(&report)?)
            }
            RunFormat::Html => html::report(self.summary, self.verdicts, self.title),
            RunFormat::Junit => junit_out::junit_batch(self.verdicts)?,
            RunFormat::Svg => {
                let counts = self.summary.counts.iter();
                let bar = Bar {
                    label: self.title.to_string(),
                    counts: counts.map(|c| (c.outcome, c.count)).collect(),
                };
                bars::svg(self.title, &[bar])
            }
        })
    }
}

/// Two runs over the same tasks (`compare`).
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    /// The comparison, its runs named.
    pub comparison: &'a Comparison,
    /// Run A's results.
    pub a: &'a [Verdict],
    /// Run B's results.
    pub b: &'a [Verdict],
}

/// How a comparison is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum CompareFormat {
    /// For people.
    Human,
    /// For programs.
    Json,
    /// For a GitHub step summary.
    Markdown,
    /// One self-contained page for a browser.
    Html,
}

impl Document for Compared<'_> {
    type Format = CompareFormat;

    fn render(&self, format: CompareFormat) -> Result<String, RenderError> {
        let c = self.comparison;
        Ok(match format {
            CompareFormat::Human => compare::human(c),
            CompareFormat::Json => format!("{}\n", serde_json::to_string_pretty(c)?),
            CompareFormat::Markdown => compare::markdown(c),
            CompareFormat::Html => html::compare(c, self.a, self.b),
        })
    }
}

/// A task's lists derived from its gold patch (`derive`).
#[derive(Debug, Clone, Copy)]
pub struct DerivedTask<'a> {
    /// What was observed.
    pub derived: &'a Derived,
    /// The gold patch's text (a SWE-bench row holds it).
    pub gold: &'a str,
}

/// How a derived task is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum DeriveFormat {
    /// A task file (TOML) that `check --task` reads.
    Task,
    /// A SWE-bench dataset row (JSON).
    Swebench,
    /// All that was observed (JSON), with the tests left out and why.
    Json,
    /// One line for people: the counts, and what was left out.
    #[cfg_attr(feature = "cli", value(skip))]
    Line,
}

impl Document for DerivedTask<'_> {
    type Format = DeriveFormat;

    fn render(&self, format: DeriveFormat) -> Result<String, RenderError> {
        let d = self.derived;
        Ok(match format {
            DeriveFormat::Task => derive::task(d)?,
            DeriveFormat::Swebench => derive::swebench_row(d, self.gold)?,
            DeriveFormat::Json => format!("{}\n", serde_json::to_string_pretty(d)?),
            DeriveFormat::Line => derive::line(d),
        })
    }
}

/// Outcome counts of several groups of results (runs, repositories), side by side.
#[derive(Debug, Clone, Copy)]
pub struct Distribution<'a> {
    /// The picture's title.
    pub title: &'a str,
    /// What a bar is (the table's first column): `run`, `repository`.
    pub kind: &'a str,
    /// One per group, in the order shown.
    pub bars: &'a [Bar],
}

/// How a distribution is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistributionFormat {
    /// Stacked bars (SVG), a legend below.
    Svg,
    /// A table: a row per bar, counts and shares per outcome.
    Markdown,
}

impl Document for Distribution<'_> {
    type Format = DistributionFormat;

    fn render(&self, format: DistributionFormat) -> Result<String, RenderError> {
        Ok(match format {
            DistributionFormat::Svg => bars::svg(self.title, self.bars),
            DistributionFormat::Markdown => bars::markdown(self.kind, self.bars),
        })
    }
}

/// How the ids of JUnit reports are written (`list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ListFormat {
    /// One id per line, only ids that name one test (safe for `--f2p-file`).
    Text,
    /// Every id with its status and whether it names one test alone.
    Json,
}

impl Document for [Listed] {
    type Format = ListFormat;

    fn render(&self, format: ListFormat) -> Result<String, RenderError> {
        Ok(match format {
            ListFormat::Json => format!("{}\n", serde_json::to_string_pretty(self)?),
            ListFormat::Text => self
                .iter()
                .filter(|l| l.exact)
                .map(|l| format!("{}\n", l.id))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_formats_parse_from_their_names_and_feedback_takes_a_bound() {
        for name in VerdictFormat::NAMES {
            assert!(name.parse::<VerdictFormat>().is_ok(), "{name}");
        }
        assert_eq!(
            "feedback".parse::<VerdictFormat>().map(|f| f.bounded(100)),
            Ok(VerdictFormat::Feedback { max_bytes: 100 })
        );
        assert_eq!(VerdictFormat::Json.bounded(100), VerdictFormat::Json);
        assert_eq!(
            "xml".parse::<VerdictFormat>(),
            Err(UnknownFormat("xml".into()))
        );
    }
}
