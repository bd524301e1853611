//! `ARCHITECTURE.md` names every crate of the workspace and no other: the crates of its
//! "Crates" table (the first column, a path in backticks) are the `members` of the workspace's
//! `Cargo.toml`.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("beacon_node sits in the workspace root")
}

/// The `members` array of the workspace manifest (its quoted paths, comments skipped).
fn workspace_members(manifest: &str) -> BTreeSet<String> {
    let list = manifest
        .split_once("members = [")
        .expect("the manifest has workspace members")
        .1
        .split_once(']')
        .expect("the members array is closed")
        .0;
    list.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter_map(|entry| entry.strip_prefix('"'))
        .map(|entry| {
            entry
                .split_once('"')
                .expect("a member's path is a quoted string")
                .0
                .to_owned()
        })
        .collect()
}

/// The first column of the rows of the "Crates" section's table.
fn documented_crates(document: &str) -> BTreeSet<String> {
    let section = document
        .split("\n## ")
        .find(|s| s.starts_with("Crates\n"))
        .expect("ARCHITECTURE.md has a \"## Crates\" section");
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|rest| {
            rest.split_once('`')
                .expect("a crate's path is closed by a backtick")
                .0
                .to_owned()
        })
        .collect()
}

#[test]
fn the_architecture_document_names_exactly_the_workspace_crates() {
    let document = std::fs::read_to_string(root().join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md at the root");
    let documented = documented_crates(&document);
    let manifest =
        std::fs::read_to_string(root().join("Cargo.toml")).expect("the workspace manifest");
    let members = workspace_members(&manifest);
    let undocumented: Vec<_> = members.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&members).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "crates not in ARCHITECTURE.md: {undocumented:?}; named there but not in the workspace: {unknown:?}"
    );
}

#[test]
fn the_members_are_read_from_the_manifest() {
    let manifest = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"a/b\",\n    # \"old\",\n\n    \"c\",\n]\n\n[workspace.dependencies]\nx = { path = \"d\" }\n";
    assert_eq!(
        workspace_members(manifest),
        ["a/b", "c"].map(String::from).into_iter().collect()
    );
}

#[test]
fn the_crates_table_is_read_row_by_row() {
    let document = "# x\n\n## Crates\n\n| crate | what |\n|---|---|\n| `a/b` | one |\n| `c` | two |\n\n## Next\n\n| `d` | not a crate row |\n";
    assert_eq!(
        documented_crates(document),
        ["a/b", "c"].map(String::from).into_iter().collect()
    );
}
