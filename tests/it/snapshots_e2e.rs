//! Snapshots of what people read: `check`'s human and feedback output for each of the bundled
//! example's eight patches, and a batch of them as `report` renders it for people, in Markdown
//! and in HTML. A change of wording shows in review as a changed `.snap` file beside this one
//! (accept it with `cargo insta review`, or `INSTA_UPDATE=always`).

use crate::batch_e2e::{batch, nine_task_files};
use crate::setup::*;

/// `text` with what differs between runs replaced: the fixture's directories (times, dates and
/// temporary names are [`assert_stable`]'s).
fn stable(f: &Fixture, text: &str) -> String {
    let dir = f.repo.parent().expect("the fixture's directory");
    text.replace(&dir.display().to_string(), "[fixture]")
}

/// Assert `text` equals the snapshot `name`, times replaced.
fn assert_stable(name: &str, text: &str) {
    insta::with_settings!({
        filters => vec![
            (r"\b\d+(\.\d+)?( ?)(ms|s|µs)\b", "[time]"),
            (r"patchgrade-[A-Za-z0-9]{6}\b", "patchgrade-[tmp]"),
            (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", "[date]"),
        ],
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn checks_of_the_eight_example_patches_read_as_before() {
    let f = Fixture::calc();
    let task = example("task.toml");
    for patch in CALC_PATCHES {
        let diff = example(&format!("patches/{patch}.diff"));
        for format in ["human", "feedback"] {
            let args = CheckArgs::new()
                .task(&task)
                .repo(&f.repo)
                .patch(&diff)
                .format(format)
                .flag("--color", "never");
            let run = f.run(&args);
            assert!(!run.stdout.is_empty(), "{patch} {format}: {}", run.stderr);
            assert_stable(&format!("check-{patch}-{format}"), &stable(&f, &run.stdout));
        }
    }
}

#[test]
fn a_batch_of_them_reports_as_before() {
    let f = Fixture::calc();
    let (tasks, preds) = nine_task_files(&f);
    let out = f.scratch.join("run");
    let run = batch(&f, &tasks, &preds, &out, &["--jobs", "2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for format in ["human", "markdown", "html"] {
        let report = f.run(&["report", out.to_str().unwrap(), "--format", format]);
        assert_eq!(report.code, 0, "{format}: {}", report.stderr);
        assert_stable(&format!("report-{format}"), &stable(&f, &report.stdout));
    }
}
