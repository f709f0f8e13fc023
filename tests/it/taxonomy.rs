//! The taxonomy page (docs/taxonomy.md) and its figure are what its results file gives: the
//! example that draws them is included here and run on the file as committed.

#[path = "../../examples/taxonomy.rs"]
#[allow(dead_code)]
mod drawn;

use crate::setup::root;

#[test]
fn the_taxonomy_figure_and_tables_are_drawn_from_its_results_file() {
    let read = |p: &str| std::fs::read_to_string(root().join(p)).unwrap_or_default();
    let results = read("docs/taxonomy/results.jsonl");
    assert!(
        results.lines().count() > 1000,
        "the results file lists every prediction"
    );
    assert_eq!(
        read("docs/taxonomy/figure.svg"),
        drawn::figure(&results),
        "docs/taxonomy/figure.svg: run `cargo run --example taxonomy -- \
         docs/taxonomy/results.jsonl docs/taxonomy/figure.svg`"
    );
    let tables = drawn::tables(&results);
    assert!(
        read("docs/taxonomy.md").contains(&tables),
        "docs/taxonomy.md does not hold the tables the results give:\n{tables}"
    );
}
