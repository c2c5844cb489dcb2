//! The two forms of a skills folder, embedded and read from disk, make one catalog.

use switchyard_skills::{SkillsExtension, include_skills};

#[test]
fn embedded_and_folder_forms_build_the_same_catalog() {
    let embedded =
        SkillsExtension::embedded(include_skills!("tests/skills")).expect("valid skills").library().catalog();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/skills");
    let read = SkillsExtension::from_dir(dir).expect("valid skills").library().catalog();
    let entries = |c: &switchyard_skills::Catalog| c.skills().map(|s| s.entry()).collect::<Vec<_>>();
    assert_eq!(entries(&embedded), entries(&read));
    let skill = embedded.skill("skill://git-workflow/SKILL.md").expect("served");
    let files: Vec<&str> = skill.files().map(|f| f.path()).collect();
    assert_eq!(files, ["git-workflow/SKILL.md", "git-workflow/references/BRANCHES.md"], "hidden files are left out");
    assert_eq!(skill.name(), "git-workflow");
}

#[test]
fn a_missing_folder_is_an_io_error_naming_it() {
    let err = SkillsExtension::from_dir("/nonexistent/skills").expect_err("no folder");
    assert!(matches!(err, switchyard_skills::LoadError::Io { .. }), "{err}");
    assert!(err.to_string().starts_with("/nonexistent/skills: "), "{err}");
}
