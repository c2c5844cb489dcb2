//! The README's dependency lines work today: every `switchyard-mcp*` dependency in its TOML
//! blocks names a path inside this repository (read as a sibling checkout, `../switchyard/`)
//! whose package is the one named, or the repository by git. A bare version would point at
//! crates.io, where the crates are not released yet.

use std::path::PathBuf;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The ```toml blocks of the README, in order.
fn toml_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start()) {
            (None, l) if l.starts_with("```toml") => current = Some(String::new()),
            (Some(_), l) if l.starts_with("```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn every_switchyard_dependency_in_the_readme_resolves_without_a_release() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let repository = {
        let manifest: toml::Table =
            std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml").parse().expect("valid TOML");
        manifest["workspace"]["package"]["repository"].as_str().expect("a repository URL").to_owned()
    };
    let mut checked = 0;
    for block in toml_blocks(&readme) {
        let table: toml::Table = block.parse().unwrap_or_else(|e| panic!("README TOML does not parse ({e}):\n{block}"));
        let deps = ["dependencies", "dev-dependencies"]
            .iter()
            .find_map(|section| table.get(*section).and_then(toml::Value::as_table))
            .unwrap_or(&table);
        for (name, spec) in deps.iter().filter(|(n, _)| n.starts_with("switchyard")) {
            checked += 1;
            let spec = spec.as_table().unwrap_or_else(|| panic!("{name} = {spec}: a version alone needs a release"));
            let package = spec.get("package").and_then(toml::Value::as_str).unwrap_or(name);
            if let Some(git) = spec.get("git").and_then(toml::Value::as_str) {
                assert_eq!(git, repository, "{name}: the git URL is the workspace's repository");
                continue;
            }
            let path = spec.get("path").and_then(toml::Value::as_str).unwrap_or_else(|| {
                panic!("{name}: neither `path` nor `git`; a version alone points at an unreleased crate")
            });
            let inside = path
                .strip_prefix("../switchyard/")
                .unwrap_or_else(|| panic!("{name}: {path} is not in ../switchyard/"));
            let manifest: toml::Table = std::fs::read_to_string(root.join(inside).join("Cargo.toml"))
                .unwrap_or_else(|e| panic!("{name}: {path}/Cargo.toml: {e}"))
                .parse()
                .expect("valid TOML");
            assert_eq!(manifest["package"]["name"].as_str(), Some(package), "{name}: {path} holds another package");
        }
    }
    assert!(checked >= 4, "the README's dependency lines were found ({checked})");
}
