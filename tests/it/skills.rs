//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) against
//! `examples/everything` over stdio: the checks of the conformance suite's `sep-2640-*`
//! scenarios (which speak HTTP only), and watch mode (`--skills-dir`).

use crate::common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SKILLS: &str = "io.modelcontextprotocol/skills";

/// The skills folder the example embeds.
fn skills_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/everything/skills")
}

fn sha256(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!("sha256:{}", hash.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// `everything --stdio ARGS`, spoken to with 2026-07-28 requests whose client declares no
/// extension (the Skills extension needs no client declaration).
struct Everything {
    peer: StdioPeer,
    next_id: i64,
    /// Notifications seen while waiting for responses.
    seen: Vec<Value>,
}

impl Everything {
    fn start(args: &[&str]) -> Everything {
        Everything { peer: StdioPeer::start("everything", args), next_id: 1, seen: Vec::new() }
    }

    /// Sends `method` and returns the whole response (`result` or `error`).
    async fn call(&mut self, method: &str, mut params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        params["_meta"] = meta(json!({}));
        self.peer.write(&[json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })]).await;
        loop {
            let msg = self.peer.next(Duration::from_secs(10)).await.expect("an answer within 10 s");
            if msg["id"] == id && msg.get("method").is_none() {
                return msg;
            }
            self.seen.push(msg);
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    /// Every entry of `skills/list`, page by page; also returns the number of pages.
    async fn list_all(&mut self) -> (Vec<Value>, usize) {
        let (mut entries, mut pages, mut cursor) = (Vec::new(), 0, None::<Value>);
        loop {
            let params = cursor.map(|c| json!({ "cursor": c })).unwrap_or_else(|| json!({}));
            let page = self.result("skills/list", params).await;
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

    /// Every resource of `resources/list`, page by page.
    async fn resources(&mut self) -> Vec<Value> {
        let (mut all, mut cursor) = (Vec::new(), None::<Value>);
        loop {
            let params = cursor.map(|c| json!({ "cursor": c })).unwrap_or_else(|| json!({}));
            let page = self.result("resources/list", params).await;
            all.extend(page["resources"].as_array().expect("resources[]").iter().cloned());
            match page.get("nextCursor") {
                Some(c) => cursor = Some(c.clone()),
                None => return all,
            }
        }
    }

    /// Waits (at most 10 s: the watcher settles 200 ms, and file events can lag under load)
    /// for a notification matching `wanted`, among those already seen and new ones.
    async fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) {
        if let Some(i) = self.seen.iter().position(&wanted) {
            self.seen.drain(..=i);
            return;
        }
        self.seen.clear();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(tokio::time::Instant::now()) {
            match self.peer.next(left).await {
                Some(msg) if wanted(&msg) => return,
                Some(_) => {}
                None => break,
            }
        }
        panic!("no {what} within 10 s");
    }
}

/// The final `<skill-path>` segment of a `SKILL.md` URI.
fn name_of(uri: &str) -> &str {
    let path = uri.strip_prefix("skill://").and_then(|p| p.strip_suffix("/SKILL.md")).expect("a SKILL.md URI");
    path.rsplit('/').next().unwrap_or(path)
}

#[tokio::test]
async fn discover_declares_the_extension_inline_with_resources() {
    let mut s = Everything::start(&[]);
    let caps = s.result("server/discover", json!({})).await["capabilities"].clone();
    assert_eq!(caps["extensions"][SKILLS], json!({ "directoryRead": true }));
    assert!(caps["resources"].is_object(), "skill files are resources: {caps}");
}

#[tokio::test]
async fn skills_list_pages_complete_entries_with_true_digests() {
    let mut s = Everything::start(&[]);
    let (entries, pages) = s.list_all().await;
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
    let bad = s.call("skills/list", json!({ "cursor": "not-a-cursor" })).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn skills_get_answers_one_entry_and_32602_for_unknown_uris() {
    let mut s = Everything::start(&[]);
    let (entries, _) = s.list_all().await;
    for entry in &entries {
        let got = s.result("skills/get", json!({ "uri": entry["uri"] })).await;
        assert_eq!(&got["skill"], entry);
        assert!(got.get("nextCursor").is_none());
        assert!(got["ttlMs"].is_u64() && got["cacheScope"] == "public", "{got}");
    }
    for unknown in
        ["skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md", "skill://pdf-processing/references/FORMS.md"]
    {
        let r = s.call("skills/get", json!({ "uri": unknown })).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}

#[tokio::test]
async fn every_skill_file_is_a_resource_and_skill_md_reads_as_markdown() {
    let mut s = Everything::start(&[]);
    let resources = s.resources().await;
    let (entries, _) = s.list_all().await;
    for entry in &entries {
        let uri = entry["uri"].as_str().expect("uri");
        let listed = resources.iter().find(|r| r["uri"] == uri).unwrap_or_else(|| panic!("{uri} in resources/list"));
        assert_eq!(listed["name"], entry["frontmatter"]["name"]);
        assert_eq!(listed["description"], entry["frontmatter"]["description"]);
        assert_eq!(listed["mimeType"], "text/markdown");
        for file in entry["resources"].as_array().expect("array") {
            let file_uri = file["uri"].as_str().expect("uri");
            assert!(resources.iter().any(|r| r["uri"] == file_uri), "{file_uri} in resources/list");
            let read = s.result("resources/read", json!({ "uri": file_uri })).await;
            let text = read["contents"][0]["text"].as_str().expect("text contents");
            assert_eq!(sha256(text.as_bytes()), file["digest"], "{file_uri} reads as listed");
            assert!(read["ttlMs"].is_u64(), "{read}");
        }
        let skill_md = s.result("resources/read", json!({ "uri": uri })).await;
        assert_eq!(skill_md["contents"][0]["mimeType"], "text/markdown");
        let text = skill_md["contents"][0]["text"].as_str().expect("text");
        assert!(text.starts_with("---\n"), "SKILL.md begins with its frontmatter");
        assert!(text.contains(&format!("name: {}", name_of(uri))));
    }
    let python = s.result("resources/read", json!({ "uri": "skill://pdf-processing/scripts/extract.py" })).await;
    assert_eq!(python["contents"][0]["mimeType"], "text/x-python");
    let missing = s.call("resources/read", json!({ "uri": "skill://pdf-processing/nope.md" })).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
}

#[tokio::test]
async fn directory_read_lists_direct_children_and_refuses_files() {
    let mut s = Everything::start(&[]);
    let children = |r: &Value| -> Vec<(String, String)> {
        r["resources"]
            .as_array()
            .expect("resources[]")
            .iter()
            .map(|c| (c["uri"].as_str().unwrap_or("").to_owned(), c["mimeType"].as_str().unwrap_or("").to_owned()))
            .collect()
    };
    let templates = s.result("resources/directory/read", json!({ "uri": "skill://pdf-processing/templates" })).await;
    assert_eq!(
        children(&templates),
        [
            ("skill://pdf-processing/templates/invoice.md".to_owned(), "text/markdown".to_owned()),
            ("skill://pdf-processing/templates/regional".to_owned(), "inode/directory".to_owned()),
        ]
    );
    let regional =
        s.result("resources/directory/read", json!({ "uri": "skill://pdf-processing/templates/regional" })).await;
    assert_eq!(children(&regional).len(), 1);
    // The skill root has more children than a page (2): follow nextCursor.
    let (mut all, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let mut params = json!({ "uri": "skill://pdf-processing" });
        if let Some(c) = cursor {
            params["cursor"] = c;
        }
        let page = s.result("resources/directory/read", params).await;
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
    let prefix = s.result("resources/directory/read", json!({ "uri": "skill://acme" })).await;
    assert_eq!(children(&prefix), [("skill://acme/billing".to_owned(), "inode/directory".to_owned())]);
    for not_a_directory in ["skill://pdf-processing/SKILL.md", "skill://nowhere", "skill://pdf-processing/templates/"] {
        let r = s.call("resources/directory/read", json!({ "uri": not_a_directory })).await;
        assert_eq!(r["error"]["code"], -32602, "{not_a_directory}: {r}");
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
    let mut s = Everything::start(&["--skills-dir", &dir]);
    let checklist = "skill://code-review/checklist.md";
    let before = s.result("skills/get", json!({ "uri": "skill://code-review/SKILL.md" })).await;
    // A listen subscription on the same connection: it is acknowledged, then stays open.
    s.peer
        .write(&[json!({ "jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": {
            "notifications": { "resourcesListChanged": true, "resourceSubscriptions": [checklist] },
            "_meta": meta(json!({})) } })])
        .await;
    let ack = s.peer.next(Duration::from_secs(10)).await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");

    // A changed file: resources/updated for it, and a new digest in the entry.
    std::fs::write(tmp.0.join("code-review/checklist.md"), "- Is it tested?\n").expect("write");
    s.wait_for("resources/updated", |n| {
        n["method"] == "notifications/resources/updated" && n["params"]["uri"] == checklist
    })
    .await;
    let after = s.result("skills/get", json!({ "uri": "skill://code-review/SKILL.md" })).await;
    assert_ne!(before["skill"]["resources"], after["skill"]["resources"]);
    let read = s.result("resources/read", json!({ "uri": checklist })).await;
    assert_eq!(read["contents"][0]["text"], "- Is it tested?\n");

    // A new skill: resources/list_changed, and it is listed.
    std::fs::create_dir_all(tmp.0.join("git-workflow")).expect("mkdir");
    std::fs::write(
        tmp.0.join("git-workflow/SKILL.md"),
        "---\nname: git-workflow\ndescription: Branch and commit\n---\n",
    )
    .expect("write");
    s.wait_for("resources/list_changed", |n| n["method"] == "notifications/resources/list_changed").await;
    let (entries, _) = s.list_all().await;
    assert!(entries.iter().any(|e| e["uri"] == "skill://git-workflow/SKILL.md"));

    // A skill that no longer validates: the previous skills stay served (the reload, 200 ms
    // after the change, is refused).
    std::fs::write(tmp.0.join("git-workflow/SKILL.md"), "no frontmatter\n").expect("write");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = s.result("skills/get", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(still["skill"]["frontmatter"]["name"], "git-workflow");

    // A removed skill: unlisted, and its files are no longer readable.
    std::fs::remove_dir_all(tmp.0.join("git-workflow")).expect("rm");
    s.wait_for("resources/list_changed", |n| n["method"] == "notifications/resources/list_changed").await;
    let gone = s.call("skills/get", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    let unreadable = s.call("resources/read", json!({ "uri": "skill://git-workflow/SKILL.md" })).await;
    assert_eq!(unreadable["error"]["code"], -32602, "{unreadable}");
}
