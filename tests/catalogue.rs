//! `docs/reliability.md` and the test suite agree: every test the catalogue names exists,
//! and every row of its tables names at least one test.

use std::path::Path;

#[test]
fn every_catalogue_case_names_an_existing_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/reliability.md")).unwrap();
    let mut checked = 0;
    let mut missing = Vec::new();
    for line in doc
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
    {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() < 3 || cells[0] == "| Case" {
            continue;
        }
        let refs: Vec<&str> = cells[1]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|r| r.contains(".rs::"))
            .collect();
        assert!(!refs.is_empty(), "catalogue row names no test: {line}");
        for r in refs {
            let (file, name) = r.split_once("::").unwrap();
            let src = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            if !src.contains(&format!("fn {name}(")) {
                missing.push(r.to_owned());
            }
            checked += 1;
        }
    }
    assert!(
        missing.is_empty(),
        "the catalogue names tests that do not exist: {missing:#?}"
    );
    assert!(
        checked > 80,
        "only {checked} references found: is the table format intact?"
    );
}
