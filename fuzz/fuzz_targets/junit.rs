//! The JUnit reader on arbitrary bytes: an error or a report, never a panic, and every case
//! pointing at a suite that exists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgrade::internals::Report;

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = Report::parse(data, std::path::Path::new("fuzz.xml")) {
        for case in &report.cases {
            assert!(case.suite < report.suites.len());
        }
    }
});
