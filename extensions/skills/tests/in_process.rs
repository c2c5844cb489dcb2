//! The extension in process (`switchyard::testing::TestClient`): settings, and reloading a
//! folder onto a running server.

mod common;

use common::Folder;
use serde_json::json;
use switchyard::Server;
use switchyard::testing::TestClient;
use switchyard_skills::{EXTENSION, SkillsExtension};

#[tokio::test]
async fn directory_read_can_be_turned_off() {
    let folder = Folder::new("nodir");
    let skills = SkillsExtension::from_dir(&folder.0).expect("valid").directory_read(false);
    let server = skills.install(Server::builder("t", "1")).build().expect("builds");
    let client = TestClient::modern(server);
    let discover = client.request("server/discover", json!({})).await;
    assert_eq!(discover.result()["capabilities"]["extensions"][EXTENSION], json!({}));
    let r = client.request("resources/directory/read", json!({ "uri": "skill://alpha" })).await;
    assert_eq!(r.error_code(), Some(-32601));
    let r = client.request("skills/list", json!({})).await;
    assert_eq!(r.result()["skills"][0]["uri"], "skill://alpha/SKILL.md");
}

#[tokio::test]
async fn reload_serves_the_new_folder_and_keeps_the_old_one_when_invalid() {
    let folder = Folder::new("reload");
    let skills = SkillsExtension::from_dir(&folder.0).expect("valid");
    let library = skills.library();
    let server = skills.install(Server::builder("t", "1")).build().expect("builds");
    let client = TestClient::modern(server.clone());

    folder.write("alpha/notes.md", "more\n");
    folder.write("beta/SKILL.md", "---\nname: beta\ndescription: The second\n---\n");
    let summary = library.reload(&server).expect("valid");
    assert_eq!(summary.added, ["skill://alpha/notes.md", "skill://beta/SKILL.md"]);
    assert!(summary.removed.is_empty() && summary.changed.is_empty());
    let r = client.request("resources/read", json!({ "uri": "skill://alpha/notes.md" })).await;
    assert_eq!(r.result()["contents"][0]["text"], "more\n");
    let r = client.request("skills/get", json!({ "uri": "skill://beta/SKILL.md" })).await;
    assert_eq!(r.result()["skill"]["frontmatter"]["description"], "The second");

    folder.write("beta/SKILL.md", "---\nname: gamma\ndescription: Misnamed\n---\n");
    let err = library.reload(&server).expect_err("the name differs from the folder");
    assert!(err.to_string().contains("beta/SKILL.md: `name: gamma` differs"), "{err}");
    let r = client.request("skills/get", json!({ "uri": "skill://beta/SKILL.md" })).await;
    assert_eq!(r.result()["skill"]["frontmatter"]["name"], "beta", "the previous skills stay served");

    std::fs::remove_dir_all(folder.0.join("beta")).expect("rm");
    folder.write("alpha/notes.md", "changed\n");
    let summary = library.reload(&server).expect("valid");
    assert_eq!(summary.removed, ["skill://beta/SKILL.md"]);
    assert_eq!(summary.changed, ["skill://alpha/notes.md"]);
    let r = client.request("resources/read", json!({ "uri": "skill://beta/SKILL.md" })).await;
    assert_eq!(r.error_code(), Some(-32602));
    let r = client.request("resources/list", json!({})).await;
    let uris: Vec<&str> =
        r.result()["resources"].as_array().expect("resources").iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris, ["skill://alpha/SKILL.md", "skill://alpha/notes.md"]);
}
