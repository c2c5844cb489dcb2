//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) against
//! `examples/everything` over stdio: the checks of the conformance suite's `sep-2640-*`
//! scenarios (which speak HTTP only), and watch mode (`--skills-dir`).

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;
use switchyard_client::{Client, ClientBuilder, Subscription, SubscriptionFilter};

const SKILLS: &str = "io.modelcontextprotocol/skills";

/// The skills folder the example embeds.
fn skills_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/everything/skills")
}

fn sha256(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!("sha256:{}", hash.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// `everything --stdio ARGS` through the client, on 2026-07-28; the client declares no
/// extension (the Skills extension needs no client declaration).
async fn everything(args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(example("everything"));
    command.arg("--stdio").args(args).stderr(std::process::Stdio::null());
    ClientBuilder::new("switchyard-tests", "1.0.0")
        .protocol_versions([MODERN])
        .request_timeout(Duration::from_secs(10))
        .connect_stdio(command)
        .await
        .expect("everything connects over stdio")
}

/// The `result` of `method`, which must succeed.
async fn result(client: &Client, method: &str, params: Value) -> Value {
    client.request(method, params).await.unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// The JSON-RPC error code `method` fails with; a result fails the test.
async fn error_code(client: &Client, method: &str, params: Value) -> Option<i64> {
    match client.request(method, params.clone()).await {
        Ok(r) => panic!("{method} {params}: an error expected, got {r}"),
        Err(e) => e.as_rpc().map(|e| i64::from(e.code().0)),
    }
}

/// Every entry of `skills/list`, page by page; also returns the number of pages.
async fn list_all(client: &Client) -> (Vec<Value>, usize) {
    let (mut entries, mut pages, mut cursor) = (Vec::new(), 0, None::<Value>);
    loop {
        let params = cursor.map(|c| json!({ "cursor": c })).unwrap_or_else(|| json!({}));
        let page = result(client, "skills/list", params).await;
        pages += 1;
        assert!(page["ttlMs"].is_u64() && page["cacheScope"] == "public", "cache attributes: {page}");
        assert_eq!(page["resultType"], "complete");
        entries.extend(page["skills"].as_array().expect("skills[]").iter().cloned());
        match page.get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => return (entries, pages),
        }
        assert!(pages < 50, "the listing ends");
    }
}

/// Waits (at most 10 s: the watcher settles 200 ms, and file events can lag under load) for a
/// notification of the subscription with this `method` and, when given, this `uri`.
async fn wait_for(events: &mut Subscription, method: &str, uri: Option<&str>) {
    let wanted = async {
        while let Some(note) = events.next().await {
            let note = note.expect("the subscription stays open");
            let about = note.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str);
            if note.method == method && uri.is_none_or(|u| about == Some(u)) {
                return;
            }
        }
        panic!("the subscription ended before {method}");
    };
    tokio::time::timeout(Duration::from_secs(10), wanted).await.unwrap_or_else(|_| panic!("no {method} within 10 s"));
}

/// The final `<skill-path>` segment of a `SKILL.md` URI.
fn name_of(uri: &str) -> &str {
    let path = uri.strip_prefix("skill://").and_then(|p| p.strip_suffix("/SKILL.md")).expect("a SKILL.md URI");
    path.rsplit('/').next().unwrap_or(path)
}

#[tokio::test]
async fn discover_declares_the_extension_inline_with_resources() {
    let s = everything(&[]).await;
    let caps = result(&s, "server/discover", json!({})).await["capabilities"].clone();
    assert_eq!(caps["extensions"][SKILLS], json!({ "directoryRead": true }));
    assert!(caps["resources"].is_object(), "skill files are resources: {caps}");
}

#[tokio::test]
async fn skills_list_pages_complete_entries_with_true_digests() {
    let s = everything(&[]).await;
    let (entries, pages) = list_all(&s).await;
    assert!(pages >= 2, "the example's listing has several pages");
    let uris: Vec<&str> = entries.iter().map(|e| e["uri"].as_str().expect("uri")).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://code-review/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/form-filling/SKILL.md",
        ],
        "every skill once, none split across pages"
    );
    for entry in &entries {
        let uri = entry["uri"].as_str().expect("uri");
        assert_eq!(entry["frontmatter"]["name"], name_of(uri), "{entry}");
        assert!(entry["frontmatter"]["description"].as_str().is_some_and(|d| !d.is_empty()));
        let resources = entry["resources"].as_array().expect("resources[]");
        assert_eq!(resources[0]["uri"], uri, "the SKILL.md entry comes first");
        let root = uri.trim_end_matches("SKILL.md");
        for r in resources {
            let file_uri = r["uri"].as_str().expect("uri");
            assert!(file_uri.starts_with(root), "{file_uri} is inside {root}");
            let bytes = std::fs::read(skills_dir().join(file_uri.trim_start_matches("skill://"))).expect("on disk");
            assert_eq!(r["digest"], sha256(&bytes), "{file_uri}");
            assert_eq!(r["size"], bytes.len(), "{file_uri}");
        }
    }
    // The nested skill's files belong to the enclosing skill's set too.
    let pdf = &entries[2]["resources"];
    assert!(pdf.as_array().expect("array").iter().any(|r| r["uri"] == "skill://pdf-processing/form-filling/SKILL.md"));
    assert_eq!(entries[2]["frontmatter"]["metadata"], json!({ "version": "2.1.0", "author": "switchyard" }));
    let bad = error_code(&s, "skills/list", json!({ "cursor": "not-a-cursor" })).await;
    assert_eq!(bad, Some(-32602));
}

#[tokio::test]
async fn skills_get_answers_one_entry_and_32602_for_unknown_uris() {
    let s = everything(&[]).await;
    let (entries, _) = list_all(&s).await;
    for entry in &entries {
        let got = result(&s, "skills/get", json!({ "uri": entry["uri"] })).await;
        assert_eq!(&got["skill"], entry);
        assert!(got.get("nextCursor").is_none());
        assert!(got["ttlMs"].is_u64() && got["cacheScope"] == "public", "{got}");
    }
    for unknown in
        ["skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md", "skill://pdf-processing/references/FORMS.md"]
    {
        let r = error_code(&s, "skills/get", json!({ "uri": unknown })).await;
        assert_eq!(r, Some(-32602), "{unknown}");
    }
}

#[tokio::test]
async fn every_skill_file_is_a_resource_and_skill_md_reads_as_markdown() {
    let s = everything(&[]).await;
    let resources = s.list_resources().await.expect("resources/list, every page");
    let resources = serde_json::to_value(resources).expect("resources as JSON");
    let resources = resources.as_array().expect("resources[]");
    let (entries, _) = list_all(&s).await;
    for entry in &entries {
        let uri = entry["uri"].as_str().expect("uri");
        let listed = resources.iter().find(|r| r["uri"] == uri).unwrap_or_else(|| panic!("{uri} in resources/list"));
        assert_eq!(listed["name"], entry["frontmatter"]["name"]);
        assert_eq!(listed["description"], entry["frontmatter"]["description"]);
        assert_eq!(listed["mimeType"], "text/markdown");
        for file in entry["resources"].as_array().expect("array") {
            let file_uri = file["uri"].as_str().expect("uri");
            assert!(resources.iter().any(|r| r["uri"] == file_uri), "{file_uri} in resources/list");
            let read = result(&s, "resources/read", json!({ "uri": file_uri })).await;
            let text = read["contents"][0]["text"].as_str().expect("text contents");
            assert_eq!(sha256(text.as_bytes()), file["digest"], "{file_uri} reads as listed");
            assert!(read["ttlMs"].is_u64(), "{read}");
        }
        let skill_md = result(&s, "resources/read", json!({ "uri": uri })).await;
        assert_eq!(skill_md["contents"][0]["mimeType"], "text/markdown");
        let text = skill_md["contents"][0]["text"].as_str().expect("text");
        assert!(text.starts_with("---\n"), "SKILL.md begins with its frontmatter");
        assert!(text.contains(&format!("name: {}", name_of(uri))));
    }
    let python = result(&s, "resources/read", json!({ "uri": "skill://pdf-processing/scripts/extract.py" })).await;
    assert_eq!(python["contents"][0]["mimeType"], "text/x-python");
    let missing = error_code(&s, "resources/read", json!({ "uri": "skill://pdf-processing/nope.md" })).await;
    assert_eq!(missing, Some(-32602));
}

#[tokio::test]
async fn directory_read_lists_direct_children_and_refuses_files() {
    let s = everything(&[]).await;
    let children = |r: &Value| -> Vec<(String, String)> {
        r["resources"]
            .as_array()
            .expect("resources[]")
            .iter()
            .map(|c| (c["uri"].as_str().unwrap_or("").to_owned(), c["mimeType"].as_str().unwrap_or("").to_owned()))
            .collect()
    };
    let templates = result(&s, "resources/directory/read", json!({ "uri": "skill://pdf-processing/templates" })).await;
    assert_eq!(
        children(&templates),
        [
            ("skill://pdf-processing/templates/invoice.md".to_owned(), "text/markdown".to_owned()),
            ("skill://pdf-processing/templates/regional".to_owned(), "inode/directory".to_owned()),
        ]
    );
    let regional =
        result(&s, "resources/directory/read", json!({ "uri": "skill://pdf-processing/templates/regional" })).await;
    assert_eq!(children(&regional).len(), 1);
    // The skill root has more children than a page (2): follow nextCursor.
    let (mut all, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let mut params = json!({ "uri": "skill://pdf-processing" });
        if let Some(c) = cursor {
            params["cursor"] = c;
        }
        let page = result(&s, "resources/directory/read", params).await;
        all.extend(children(&page));
        match page.get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    let dirs: Vec<&str> = all.iter().filter(|c| c.1 == "inode/directory").map(|c| c.0.as_str()).collect();
    assert_eq!(
        dirs,
        [
            "skill://pdf-processing/form-filling",
            "skill://pdf-processing/references",
            "skill://pdf-processing/scripts",
            "skill://pdf-processing/templates"
        ]
    );
    assert!(all.iter().any(|c| c.0 == "skill://pdf-processing/SKILL.md"));
    let prefix = result(&s, "resources/directory/read", json!({ "uri": "skill://acme" })).await;
    assert_eq!(children(&prefix), [("skill://acme/billing".to_owned(), "inode/directory".to_owned())]);
    for not_a_directory in ["skill://pdf-processing/SKILL.md", "skill://nowhere", "skill://pdf-processing/templates/"] {
        let r = error_code(&s, "resources/directory/read", json!({ "uri": not_a_directory })).await;
        assert_eq!(r, Some(-32602), "{not_a_directory}");
    }
}

/// Copies `from` into `to` recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("readable") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// A fresh copy of the example's skills folder, removed on drop.
struct TempSkills(PathBuf);

impl TempSkills {
    fn new() -> TempSkills {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("switchyard-skills-{}-{nanos}", std::process::id()));
        copy_tree(&skills_dir(), &dir);
        TempSkills(dir)
    }
}

impl Drop for TempSkills {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn watch_mode_reloads_the_folder_and_publishes_changes() {
    let tmp = TempSkills::new();
    let dir = tmp.0.to_str().expect("UTF-8 path").to_owned();
    let s = everything(&["--skills-dir", &dir]).await;
    let checklist = "skill://code-review/checklist.md";
    let before = result(&s, "skills/get", json!({ "uri": "skill://code-review/SKILL.md" })).await;
    // A listen subscription on the same connection: it is acknowledged, then stays open.
    let filter = SubscriptionFilter::new().resources().resource(checklist);
    let mut events = s.listen(filter).await.expect("subscriptions/listen is acknowledged");

    // A changed file: resources/updated for it, and a new digest in the entry.
    std::fs::write(tmp.0.join("code-review/checklist.md"), "- Is it tested?\n").expect("write");
    wait_for(&mut events, "notifications/resources/updated", Some(checklist)).await;
    let after = result(&s, "skills/get", json!({ "uri": "skill://code-review/SKILL.md" })).await;
    assert_ne!(before["skill"]["resources"], after["skill"]["resources"]);
    let read = result(&s, "resources/read", json!({ "uri": checklist })).await;
    assert_eq!(read["contents"][0]["text"], "- Is it tested?\n");

    // A new skill: resources/list_changed, and it is listed.
    std::fs::create_dir_all(tmp.0.join("git-workflow")).expect("mkdir");
    std::fs::write(
        tmp.0.join("git-workflow/SKILL.md"),
        "---\nname: git-workflow\ndescription: Branch and commit\n---\n",
    )
    .expect("write");
    wait_for(&mut events, "notifications/resources/list_changed", None).await;
    let (entries, _) = list_all(&s).await;
    assert!(entries.iter().any(|e| e["uri"] == "skill://git-workflow/SKILL.md"));

    // A skill that no longer validates: the previous skills stay served (the reload, 200 ms
    // after the change, is refused).
    std::fs::write(tmp.0.join("git-workflow/SKILL.md"), "no frontmatter\n").expect("write");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = result(&s, "skills/get", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(still["skill"]["frontmatter"]["name"], "git-workflow");

    // A removed skill: unlisted, and its files are no longer readable.
    std::fs::remove_dir_all(tmp.0.join("git-workflow")).expect("rm");
    wait_for(&mut events, "notifications/resources/list_changed", None).await;
    let gone = error_code(&s, "skills/get", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(gone, Some(-32602));
    let unreadable = error_code(&s, "resources/read", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(unreadable, Some(-32602));
}
