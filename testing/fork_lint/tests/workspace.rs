//! Every match on a fork enum in the workspace, outside `consensus/types`, names each fork.

use std::path::Path;

use fork_lint::{check_source, workspace_files};

#[test]
fn no_match_on_a_fork_enum_has_a_catch_all_arm() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    let files = workspace_files(&root);
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut violations = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a readable source file");
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        match check_source(&name, &source) {
            Ok(found) => violations.extend(found),
            Err(e) => panic!("{name}: does not parse: {e}"),
        }
    }
    for violation in &violations {
        eprintln!("{violation}");
    }
    assert!(
        violations.is_empty(),
        "{} match(es) on a fork enum with a catch-all arm (listed above)",
        violations.len()
    );
}

#[test]
fn a_planted_catch_all_arm_is_found() {
    let planted = r#"
fn f(fork: ForkName, block: &SignedBeaconBlock<E>) -> usize {
    let a = match fork {
        ForkName::Electra => 1,
        _ => 2,
    };
    let b = match block {
        types::SignedBeaconBlock::Fulu(b) => b.message.body.blob_kzg_commitments.len(),
        other => 0,
    };
    let c = match (fork, true) {
        (ForkName::Fulu, true) => 1,
        (_, _) => 0,
    };
    let d = match &fork {
        &ForkName::Deneb | &ForkName::Electra => 1,
        ForkName::Fulu if true => 2,
        _other => 3,
    };
    // Every fork named: fine.
    let e = match fork {
        ForkName::Phase0 | ForkName::Altair => 0,
        ForkName::Bellatrix | ForkName::Capella | ForkName::Deneb => 1,
        ForkName::Electra | ForkName::Fulu | ForkName::Gloas => 2,
    };
    // Not a fork enum: fine.
    let g = match x { Some(1) => 1, _ => 0 };
    a + b + c + d + e + g
}
"#;
    let found = check_source("planted.rs", planted).expect("parses");
    let lines: Vec<usize> = found.iter().map(|v| v.line).collect();
    assert_eq!(lines, [5, 9, 13, 18], "{found:#?}");
    assert!(found[0].to_string().starts_with("planted.rs:5: `_ =>`"));
}
