//! Reading JUnit XML reports into flat test cases.
//!
//! A streaming reader on quick-xml rather than a DOM: it keeps what matching needs (every
//! `<testcase>` in document order with its ancestor suites, including testcases placed directly
//! under `<testsuites>` as node's runner writes them) and skips output text, so memory follows
//! the number of test cases, not the size of their logs. Writing lives in `report::junit_out`.

use super::status::{Observation, TestStatus};
use crate::util::text::truncate;
use quick_xml::events::{BytesStart, Event};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Lines of failure text kept per test.
const DETAIL_LINES: usize = 30;
/// Bytes of failure text kept per test.
const DETAIL_BYTES: usize = 4000;
/// Bytes of a one-line message kept per test.
const MESSAGE_BYTES: usize = 500;

/// One `<testcase>` of a report.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Case {
    /// The `classname` attribute (empty when absent).
    pub classname: String,
    /// The `name` attribute.
    pub name: String,
    /// The `file` attribute, when the runner writes one.
    pub file: Option<String>,
    /// The `class` attribute (PHPUnit's fully qualified class name).
    pub class: Option<String>,
    /// Index into [`Report::suites`]: the chain of `<testsuite>`s around this testcase.
    pub suite: usize,
    /// Which file of [`Report::sources`] it came from.
    pub source: usize,
    /// 0-based position among the testcases of its file, in document order.
    pub index: usize,
    /// Status and message.
    pub observation: Observation,
    /// pytest's xfail (`<skipped type="pytest.xfail">`): skipped here, passing in
    /// SWE-bench's count ([`SwebenchView`](super::status::SwebenchView)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub xfail: bool,
    /// The test's description (`<property name="description">`): the first line of a Python
    /// test's docstring, which Django's runner prints, and SWE-bench's ids use, in place of
    /// its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The `<testsuite>` elements around a testcase, outermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SuitePath {
    /// The `name` of each enclosing `<testsuite>`.
    pub names: Vec<String>,
    /// The nearest `file` attribute among them (mocha writes the spec file there).
    pub file: Option<String>,
}

/// The test cases of one or more report files.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Test cases in file order, then document order.
    pub cases: Vec<Case>,
    /// Suite chains referenced by `Case::suite`.
    pub suites: Vec<SuitePath>,
    /// The files read.
    pub sources: Vec<PathBuf>,
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JunitError {
    /// The test command did not write the report.
    #[error("no JUnit report at {0}")]
    Missing(PathBuf),
    /// A directory without any `.xml` file.
    #[error("{0}: directory holds no .xml report")]
    EmptyDir(PathBuf),
    /// The file exists but could not be opened.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The report.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// What the test command left at the report path is not a regular file (a FIFO would
    /// block the reader, a link could point anywhere, a device never ends), or is a directory
    /// where a file was expected.
    #[error("{path}: the report is {what}, not a regular file written by the run")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there.
        what: &'static str,
    },
    /// The file is not a JUnit report.
    #[error("{path}: not a JUnit report: {reason}")]
    Malformed {
        /// The report.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl Report {
    /// Whether the runner itself failed, and which: pytest writes its `INTERNALERROR` as the
    /// test case `internal` of class `pytest`, with an error, beside the cases it wrote before
    /// (its traceback is in the command's output, which ends with the exception).
    pub fn runner_failure(&self) -> Option<&'static str> {
        self.cases
            .iter()
            .any(|c| {
                c.classname == "pytest"
                    && c.name == "internal"
                    && c.observation.status == TestStatus::Error
            })
            .then_some("pytest's INTERNALERROR")
    }

    /// The report less the runner's own failure ([`Report::runner_failure`]): the cases it
    /// wrote before it failed, which a run cut short leaves (whose passes do not count).
    pub fn without_runner_failure(&self) -> Report {
        let mut report = self.clone_without_cases();
        report.cases = (self.cases.iter())
            .filter(|c| !(c.classname == "pytest" && c.name == "internal"))
            .cloned()
            .collect();
        report
    }

    /// Read a report file, or every `*.xml` file of a directory (Surefire and Gradle write one
    /// file per class).
    pub fn read(path: &Path) -> Result<Report, JunitError> {
        Report::read_all(std::slice::from_ref(&path.to_path_buf()))
    }

    /// Read the report a test command wrote at `path`, trusting nothing about what is there:
    /// a regular file (or, when `dir` is set because the runner writes one file per class, a
    /// directory of them), opened without following a link and without blocking, so that
    /// code under test cannot make patchgrade read something else or hang.
    pub fn read_output(path: &Path, dir: bool) -> Result<Report, JunitError> {
        let meta = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(JunitError::Missing(path.to_path_buf()));
            }
            Err(source) => {
                return Err(JunitError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
            Ok(meta) => meta,
        };
        let files = match kind_of(&meta) {
            None => vec![path.to_path_buf()],
            Some("a directory") if dir => {
                let mut files = Vec::new();
                output_files(path, &mut files)?;
                files.sort();
                if files.is_empty() {
                    return Err(JunitError::EmptyDir(path.to_path_buf()));
                }
                files
            }
            Some(what) => {
                return Err(JunitError::NotAFile {
                    path: path.to_path_buf(),
                    what,
                });
            }
        };
        let mut report = Report::default();
        for file in files {
            let reader = open_output(&file)?;
            report
                .add(reader, file.clone())
                .map_err(|reason| JunitError::Malformed { path: file, reason })?;
        }
        Ok(report)
    }

    /// Read several reports (files or directories) as one. Test cases keep their source, so
    /// equal names in two files stay two tests.
    pub fn read_all(paths: &[PathBuf]) -> Result<Report, JunitError> {
        let mut report = Report::default();
        for path in paths {
            for file in expand(path)? {
                let reader = open(&file)?;
                report
                    .add(reader, file.clone())
                    .map_err(|reason| JunitError::Malformed { path: file, reason })?;
            }
        }
        Ok(report)
    }

    /// The same report with no test cases (its suites and sources kept, so that cases taken
    /// from it still point at the right ones).
    pub fn clone_without_cases(&self) -> Report {
        Report {
            cases: Vec::new(),
            suites: self.suites.clone(),
            sources: self.sources.clone(),
        }
    }

    /// Parse one report from any reader (`origin` names it in errors).
    pub fn parse(reader: impl BufRead, origin: &Path) -> Result<Report, JunitError> {
        let mut report = Report::default();
        report
            .add(reader, origin.to_path_buf())
            .map_err(|reason| JunitError::Malformed {
                path: origin.to_path_buf(),
                reason,
            })?;
        Ok(report)
    }

    fn add(&mut self, reader: impl BufRead, origin: PathBuf) -> Result<(), String> {
        let source = self.sources.len();
        self.sources.push(origin);
        Parser {
            report: self,
            source,
            stack: Vec::new(),
            current_suite: None,
            index: 0,
        }
        .run(reader)
    }
}

fn expand(path: &Path) -> Result<Vec<PathBuf>, JunitError> {
    let io = |source| JunitError::Io {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(JunitError::Missing(path.to_path_buf()))
        }
        Err(e) => Err(io(e)),
        Ok(m) if m.is_dir() => {
            let mut files = Vec::new();
            xml_files(path, &mut files).map_err(io)?;
            files.sort();
            if files.is_empty() {
                return Err(JunitError::EmptyDir(path.to_path_buf()));
            }
            Ok(files)
        }
        Ok(_) => Ok(vec![path.to_path_buf()]),
    }
}

/// Every `*.xml` under `dir`, subdirectories included: a multi-module build keeps one report
/// directory per module. Symlinked directories are not followed, so a cycle cannot loop.
fn xml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            xml_files(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "xml") && path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// What a path holds, when it is not a regular file.
fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_symlink() {
        Some("a symbolic link")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("a device")
    }
}

/// The `*.xml` files of a report directory a run wrote: regular files only; a link or a FIFO
/// among them is refused like one at the report path.
fn output_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), JunitError> {
    let io = |source| JunitError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let meta = std::fs::symlink_metadata(&path).map_err(io)?;
        match kind_of(&meta) {
            Some("a directory") => output_files(&path, out)?,
            None if path.extension().is_some_and(|x| x == "xml") => out.push(path),
            None => {}
            Some(what) => return Err(JunitError::NotAFile { path, what }),
        }
    }
    Ok(())
}

/// Open a file a run wrote: not through a link, not blocking on a FIFO, and only if it is
/// still a regular file once open (it may have been swapped since it was looked at).
fn open_output(path: &Path) -> Result<impl BufRead, JunitError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| JunitError::Io {
        path: path.to_path_buf(),
        source,
    };
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|e| {
            // ELOOP: the last component is a link.
            if e.raw_os_error() == Some(nix::libc::ELOOP) {
                JunitError::NotAFile {
                    path: path.to_path_buf(),
                    what: "a symbolic link",
                }
            } else {
                io(e)
            }
        })?;
    let meta = file.metadata().map_err(io)?;
    if let Some(what) = kind_of(&meta) {
        return Err(JunitError::NotAFile {
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(std::io::BufReader::new(file))
}

fn open(path: &Path) -> Result<impl BufRead, JunitError> {
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|source| JunitError::Io {
            path: path.to_path_buf(),
            source,
        })
}

struct Parser<'r> {
    report: &'r mut Report,
    source: usize,
    /// Enclosing suites: name and file.
    stack: Vec<(String, Option<String>)>,
    /// The `Report::suites` entry for the current stack, made on first use.
    current_suite: Option<usize>,
    index: usize,
}

/// What a `<testcase>` holds, before it becomes an [`Observation`].
#[derive(Default)]
struct Body {
    failure: Option<Element>,
    error: Option<Element>,
    skipped: Option<Element>,
    flaky: usize,
    reruns: usize,
    /// `<system-out>` and `<system-err>`, bounded: the only account of a failure whose
    /// element is empty (CTest writes `<failure message=""/>` and the test's output).
    output: String,
    /// The `description` property, when the testcase has one.
    description: Option<String>,
}

/// A `<failure>`, `<error>` or `<skipped>` child: its attributes and bounded text.
#[derive(Default)]
struct Element {
    message: String,
    kind: String,
    text: String,
}

impl Parser<'_> {
    fn run(mut self, reader: impl BufRead) -> Result<(), String> {
        // Long text is cut before the XML reader, which would hold a whole text in memory.
        let reader = std::io::BufReader::new(super::capped::Capped::new(reader));
        let mut xml = quick_xml::Reader::from_reader(reader);
        let mut buf = Vec::new();
        // Open report-level elements (<testsuites>, <testsuite>, <testrun>); a file that ends
        // with some still open was cut short.
        let mut depth = 0usize;
        let mut root_seen = false;
        loop {
            let event = xml
                .read_event_into(&mut buf)
                .map_err(|e| position(&xml, e))?;
            match event {
                Event::Start(e) if !root_seen => {
                    root_seen = true;
                    depth += 1;
                    if check_root(&e)? {
                        self.enter(&xml, &e)?;
                    }
                }
                Event::Empty(e) if !root_seen => {
                    root_seen = true;
                    check_root(&e)?;
                }
                Event::Start(e) => match local(&e) {
                    "testsuite" => {
                        depth += 1;
                        self.enter(&xml, &e)?;
                    }
                    "testcase" => {
                        let attrs = case_attributes(&xml, &e)?;
                        let body = read_body(&mut xml)?;
                        self.push_case(attrs, body);
                    }
                    _ => {
                        let e = e.into_owned();
                        xml.read_to_end_into(e.name(), &mut Vec::new())
                            .map_err(|err| position(&xml, err))?;
                    }
                },
                Event::Empty(e) if local(&e) == "testcase" => {
                    let attrs = case_attributes(&xml, &e)?;
                    self.push_case(attrs, Body::default());
                }
                Event::End(e) => {
                    let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                    if matches!(name.as_str(), "testsuites" | "testsuite" | "testrun") {
                        depth = depth.saturating_sub(1);
                        if name == "testsuite" {
                            self.stack.pop();
                            self.current_suite = None;
                        }
                    }
                }
                Event::Eof if !root_seen => {
                    return Err("no root element (empty or truncated file)".into());
                }
                Event::Eof if depth > 0 => {
                    return Err("truncated: the file ends inside a test suite".into());
                }
                Event::Eof => return Ok(()),
                _ => {}
            }
            buf.clear();
        }
    }

    fn enter<R>(&mut self, xml: &quick_xml::Reader<R>, e: &BytesStart<'_>) -> Result<(), String> {
        let [name, file] = attributes(xml, e, ["name", "file"])?;
        self.stack.push((name.unwrap_or_default(), file));
        self.current_suite = None;
        Ok(())
    }

    fn suite(&mut self) -> usize {
        if let Some(i) = self.current_suite {
            return i;
        }
        let path = SuitePath {
            names: self.stack.iter().map(|(n, _)| n.clone()).collect(),
            file: self.stack.iter().rev().find_map(|(_, f)| f.clone()),
        };
        // Consecutive suites are usually distinct; reuse only the last entry when equal.
        let i = match self.report.suites.last() {
            Some(last) if *last == path => self.report.suites.len() - 1,
            _ => {
                self.report.suites.push(path);
                self.report.suites.len() - 1
            }
        };
        self.current_suite = Some(i);
        i
    }

    fn push_case(&mut self, attrs: CaseAttributes, body: Body) {
        let [name, classname, file, class, status] = attrs;
        let index = self.index;
        self.index += 1;
        // pytest writes a nameless testcase for the test interrupted by SIGINT: it names
        // nothing, so it matches nothing, but it keeps its place in the count.
        if name.as_deref().unwrap_or("").is_empty() && classname.is_none() {
            return;
        }
        let suite = self.suite();
        // pytest's xfail, unittest's expected failure (Django's runner), sympy's XFAIL.
        let xfail = body.failure.is_none()
            && body.error.is_none()
            && body.skipped.as_ref().is_some_and(|s| {
                matches!(
                    s.kind.as_str(),
                    "pytest.xfail" | "expectedFailure" | "XFail"
                )
            });
        let description = body.description.clone();
        self.report.cases.push(Case {
            classname: classname.unwrap_or_default(),
            name: name.unwrap_or_default(),
            file,
            class,
            suite,
            source: self.source,
            index,
            observation: observe(body, status.as_deref()),
            xfail,
            description,
        });
    }
}

/// Check the root element; `true` when it is itself a `<testsuite>`.
fn check_root(e: &BytesStart<'_>) -> Result<bool, String> {
    match local(e) {
        "testsuite" => Ok(true),
        "testsuites" | "testrun" => Ok(false),
        other => Err(format!(
            "root element is <{other}>, not <testsuites> or <testsuite>"
        )),
    }
}

/// A testcase's `name`, `classname`, `file`, `class` and `status` attributes.
type CaseAttributes = [Option<String>; 5];

fn case_attributes<R>(
    xml: &quick_xml::Reader<R>,
    e: &BytesStart<'_>,
) -> Result<CaseAttributes, String> {
    attributes(xml, e, ["name", "classname", "file", "class", "status"])
}

/// The values of these attributes, decoded; the others are checked for well-formedness only.
fn attributes<R, const N: usize>(
    xml: &quick_xml::Reader<R>,
    e: &BytesStart<'_>,
    keys: [&str; N],
) -> Result<[Option<String>; N], String> {
    let mut out = [const { None }; N];
    for a in e.attributes() {
        let a = a.map_err(|err| format!("bad attribute: {err}"))?;
        let key = a.key.local_name();
        let Some(i) = keys.iter().position(|k| k.as_bytes() == key.as_ref()) else {
            continue;
        };
        let value = a
            .decoded_and_normalized_value(quick_xml::XmlVersion::Implicit1_0, xml.decoder())
            .map_err(|err| position(xml, err))?;
        out[i] = Some(value.into_owned());
    }
    Ok(out)
}

/// A testcase's `<properties>`, read to its end tag: the `description` property's value.
fn read_description<R: BufRead>(
    xml: &mut quick_xml::Reader<R>,
    start: &BytesStart<'_>,
) -> Result<Option<String>, String> {
    let mut found = None;
    let mut buf = Vec::new();
    loop {
        let event = xml
            .read_event_into(&mut buf)
            .map_err(|e| position(xml, e))?;
        match event {
            Event::Empty(e) | Event::Start(e) if local(&e) == "property" => {
                let [name, value] = attributes(xml, &e, ["name", "value"])?;
                if name.as_deref() == Some("description") {
                    found = value;
                }
            }
            Event::End(e) if e.name() == start.name() => return Ok(found),
            Event::Eof => return Err("truncated: the file ends inside properties".into()),
            _ => {}
        }
        buf.clear();
    }
}

/// Read a `<testcase>`'s children up to its end tag.
fn read_body<R: BufRead>(xml: &mut quick_xml::Reader<R>) -> Result<Body, String> {
    let mut body = Body::default();
    let mut buf = Vec::new();
    loop {
        let event = xml
            .read_event_into(&mut buf)
            .map_err(|e| position(xml, e))?;
        match event {
            Event::Start(e) => {
                let e = e.into_owned();
                let name = local(&e).to_string();
                match name.as_str() {
                    "failure" | "error" | "skipped" => {
                        let mut outcome = outcome_of(xml, &e)?;
                        outcome.text = read_text(xml, &e)?;
                        body.set(&name, outcome);
                    }
                    "system-out" | "system-err" if body.output.len() < DETAIL_BYTES => {
                        let text = read_text(xml, &e)?;
                        body.output.push_str(&text);
                    }
                    "properties" => body.description = read_description(xml, &e)?,
                    _ => {
                        body.count(&name);
                        xml.read_to_end_into(e.name(), &mut Vec::new())
                            .map_err(|err| position(xml, err))?;
                    }
                }
            }
            Event::Empty(e) => {
                let name = local(&e);
                if matches!(name, "failure" | "error" | "skipped") {
                    let outcome = outcome_of(xml, &e)?;
                    body.set(name, outcome);
                } else {
                    body.count(name);
                }
            }
            Event::End(_) => return Ok(body),
            Event::Eof => return Err("truncated: the file ends inside a test case".into()),
            _ => {}
        }
        buf.clear();
    }
}

impl Body {
    fn set(&mut self, element: &str, found: Element) {
        let slot = match element {
            "failure" => &mut self.failure,
            "error" => &mut self.error,
            _ => &mut self.skipped,
        };
        // The first element of a kind is the one that names the problem.
        if slot.is_none() {
            *slot = Some(found);
        }
    }

    /// The text that explains a failure: the element's own, else the test's output.
    fn text_of<'a>(&'a self, element: &'a Element) -> &'a str {
        if element.message.trim().is_empty() && element.text.trim().is_empty() {
            &self.output
        } else {
            &element.text
        }
    }

    fn count(&mut self, element: &str) {
        match element {
            "flakyFailure" | "flakyError" => self.flaky += 1,
            "rerunFailure" | "rerunError" => self.reruns += 1,
            _ => {}
        }
    }
}

fn outcome_of<R>(xml: &quick_xml::Reader<R>, e: &BytesStart<'_>) -> Result<Element, String> {
    let [message, kind] = attributes(xml, e, ["message", "type"])?;
    Ok(Element {
        message: message.unwrap_or_default(),
        kind: kind.unwrap_or_default(),
        text: String::new(),
    })
}

/// The text of an element, bounded: enough for the kept details, never a whole log.
fn read_text<R: BufRead>(
    xml: &mut quick_xml::Reader<R>,
    start: &BytesStart<'_>,
) -> Result<String, String> {
    const KEEP: usize = DETAIL_BYTES * 2;
    let mut text = String::new();
    let mut buf = Vec::new();
    let mut depth = 0usize;
    loop {
        let event = xml
            .read_event_into(&mut buf)
            .map_err(|e| position(xml, e))?;
        match event {
            Event::Text(t) if depth == 0 && text.len() < KEEP => {
                text.push_str(&t.decode().map_err(|e| e.to_string())?);
            }
            Event::CData(t) if depth == 0 && text.len() < KEEP => {
                text.push_str(&t.decode().map_err(|e| e.to_string())?);
            }
            Event::GeneralRef(r) if depth == 0 && text.len() < KEEP => {
                match r.resolve_char_ref().map_err(|e| position(xml, e))? {
                    Some(c) => text.push(c),
                    None => text.push_str(match &*r {
                        b"lt" => "<",
                        b"gt" => ">",
                        b"amp" => "&",
                        b"quot" => "\"",
                        b"apos" => "'",
                        _ => "",
                    }),
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(e) if depth == 0 && e.name() == start.name() => return Ok(text),
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => return Err("truncated: the file ends inside a failure".into()),
            _ => {}
        }
        buf.clear();
    }
}

/// The status a testcase's children and attributes say, with the runners' documented quirks
/// (see the status table in the guide, docs/guide/src/runners.md).
fn observe(body: Body, status_attr: Option<&str>) -> Observation {
    let reran = |o: Observation| match body.reruns {
        0 => o,
        n => Observation {
            message: Some(format!(
                "failed all {} attempts: {}",
                n + 1,
                o.message.as_deref().unwrap_or("")
            )),
            ..o
        },
    };
    if let Some(e) = &body.error {
        // PHPUnit writes a test without assertions as an error, but counts it as passed.
        if e.kind.ends_with("RiskyTestError") {
            return with_text(TestStatus::Passed, &e.message, "");
        }
        // xmlrunner writes an unexpected success as an error; unittest counts it a failure.
        let status = if e.kind == "UnexpectedSuccess" {
            TestStatus::Failed
        } else {
            TestStatus::Error
        };
        return reran(with_text(status, &e.message, body.text_of(e)));
    }
    if let Some(f) = &body.failure {
        // node:test: a failing `todo` test is not a failure; a test cancelled by its parent
        // (failed hook, never-settling promise) or by a timeout did not fail on its own.
        if body.skipped.as_ref().is_some_and(|s| s.kind == "todo") {
            return with_text(TestStatus::Skipped, "todo", &f.text);
        }
        let status = match f.kind.as_str() {
            "cancelledByParent" | "testTimeoutFailure" => TestStatus::Error,
            _ => TestStatus::Failed,
        };
        return reran(with_text(status, &f.message, body.text_of(f)));
    }
    if let Some(s) = &body.skipped {
        // CTest writes a test whose executable is missing as skipped (`status="notrun"`),
        // though it counts it as failed.
        if status_attr == Some("notrun") && s.message.contains("Unable to find executable") {
            return with_text(TestStatus::Error, &s.message, &s.text);
        }
        let mut o = with_text(TestStatus::Skipped, &s.message, &s.text);
        if s.kind == "pytest.xfail" {
            o.message = Some(match o.message {
                Some(m) => format!("xfail: {m}"),
                None => "xfail".to_string(),
            });
        }
        return o;
    }
    // CTest: a DISABLED test has no <skipped/> but never ran.
    if status_attr == Some("disabled") {
        return with_text(TestStatus::Skipped, "disabled", "");
    }
    if body.flaky > 0 {
        return Observation {
            status: TestStatus::Flaky,
            message: Some(format!("passed after {} failed attempt(s)", body.flaky)),
            details: None,
        };
    }
    Observation::bare(TestStatus::Passed)
}

fn with_text(status: TestStatus, message: &str, text: &str) -> Observation {
    if let Some(panic) = super::panic::rust_panic(message, text) {
        return Observation {
            status,
            message: Some(truncate(&panic.message, MESSAGE_BYTES)),
            details: Some(truncate(&panic.details, DETAIL_BYTES)),
        };
    }
    let first_line = |s: &str| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| truncate(l, MESSAGE_BYTES))
    };
    let details = {
        let kept: Vec<&str> = text.trim_matches('\n').lines().take(DETAIL_LINES).collect();
        let joined = truncate(&kept.join("\n"), DETAIL_BYTES);
        (!joined.trim().is_empty()).then_some(joined)
    };
    let said = first_line(message).or_else(|| first_line(text));
    let better = said
        .as_deref()
        .and_then(|said| super::message::better(said, text))
        .map(|m| truncate(&m, MESSAGE_BYTES));
    Observation {
        status,
        message: better.or(said),
        details,
    }
}

/// An element's local name; one that is not UTF-8 is no element the reader knows.
fn local<'a>(e: &'a BytesStart<'_>) -> &'a str {
    std::str::from_utf8(e.local_name().into_inner()).unwrap_or("")
}

fn position<R>(xml: &quick_xml::Reader<R>, e: quick_xml::Error) -> String {
    format!("{e} at byte {}", xml.buffer_position())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_falls_back_to_first_text_line_and_details_are_bounded() {
        let o = with_text(TestStatus::Failed, "", "\n\n  first\nsecond");
        assert_eq!(o.message.as_deref(), Some("first"));
        assert_eq!(o.details.as_deref(), Some("  first\nsecond"));
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let o = with_text(TestStatus::Failed, "m", &text);
        assert_eq!(o.details.unwrap().lines().count(), DETAIL_LINES);
    }

    #[test]
    fn an_empty_failure_is_explained_by_the_test_output() {
        // CTest writes `<failure message=""/>` and puts what the test printed in system-out.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/junit/ctest/junit.xml");
        let report = Report::read(&path).unwrap();
        let case = |name: &str| {
            let c = report.cases.iter().find(|c| c.name == name).unwrap();
            (c.observation.status, c.observation.message.as_deref())
        };
        assert_eq!(
            case("fails"),
            (TestStatus::Failed, Some("assertion failed: 1 + 1 == 3"))
        );
        // A passing test's output is not a message, and a failure's own message wins.
        assert_eq!(case("passes"), (TestStatus::Passed, None));
        let own = report
            .cases
            .iter()
            .find(|c| {
                c.observation
                    .message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("Error regular expression found"))
            })
            .map(|c| c.observation.status);
        assert_eq!(own, Some(TestStatus::Failed));
    }

    #[test]
    fn malformed_reports_say_what_is_wrong() {
        let err = |xml: &str| {
            Report::parse(xml.as_bytes(), Path::new("r.xml"))
                .unwrap_err()
                .to_string()
        };
        assert!(err("<html/>").starts_with("r.xml: not a JUnit report: root element is <html>"));
        assert!(err("").contains("no root element"));
        assert!(err("<testsuites><testsuite name=\"a\">").contains("truncated"));
        assert!(err("<testsuite><testcase name=\"x\"><failure>").contains("truncated"));
    }
}
