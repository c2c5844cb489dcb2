//! The host side (feature `client`) against a real server in process: listing reads no file, a
//! skill whose files match its entry loads, and content that does not match is refused with the
//! error of its kind, before anything else is read.

mod common;

use common::Folder;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use switchyard::Server;
use switchyard::call::Caller;
use switchyard::testing::{TestCallError, TestClient};
use switchyard_skills::client::{SkillError, get_skill, list_skills, load_skill, server_declares_skills};
use switchyard_skills::{SkillLibrary, SkillsExtension};

type Rewrite = Box<dyn Fn(&str, &mut Value) + Send + Sync>;

/// Stands between the host and the server: records every request, and may rewrite answers as
/// the intermediary SEP-2640 warns about (it can change listing and content alike).
struct Gateway {
    inner: TestClient,
    log: Arc<Mutex<Vec<String>>>,
    rewrite: Rewrite,
}

impl Gateway {
    fn new(server: Server) -> Gateway {
        Gateway { inner: TestClient::modern(server), log: Arc::default(), rewrite: Box::new(|_, _| {}) }
    }

    fn rewriting(mut self, rewrite: impl Fn(&str, &mut Value) + Send + Sync + 'static) -> Gateway {
        self.rewrite = Box::new(rewrite);
        self
    }

    /// Every request so far, as `method` or `resources/read <uri>`.
    fn requests(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

impl Caller for Gateway {
    type Error = TestCallError;

    async fn call_tool_value(&self, name: &str, arguments: Value) -> Result<switchyard::CallToolResult, TestCallError> {
        self.inner.call_tool_value(name, arguments).await
    }

    async fn request_value(&self, method: &str, params: Value) -> Result<Value, TestCallError> {
        let entry = match params.get("uri").and_then(Value::as_str) {
            Some(uri) if method == "resources/read" => format!("{method} {uri}"),
            _ => method.to_owned(),
        };
        self.log.lock().expect("log").push(entry);
        let mut result = self.inner.request_value(method, params).await?;
        (self.rewrite)(method, &mut result);
        Ok(result)
    }
}

const ALPHA: &str =
    "---\nname: alpha\ndescription: The first\nmetadata:\n  version: \"2\"\n---\nSee references/GUIDE.md.\n";

/// A folder with `alpha` (a guide and a binary file beside its SKILL.md) and `beta`.
fn folder(tag: &str) -> Folder {
    let folder = Folder::new(tag);
    folder.write("alpha/SKILL.md", ALPHA);
    folder.write("alpha/references/GUIDE.md", "Guide\n");
    folder.write("alpha/data.bin", [0u8, 159, 146, 150]);
    folder.write("beta/SKILL.md", "---\nname: beta\ndescription: The second\n---\n");
    folder
}

/// Serves `folder` one skill per page; the library reloads it.
fn serve(folder: &Folder) -> (SkillLibrary, Server) {
    let skills = SkillsExtension::from_dir(&folder.0).expect("valid").page_size(1);
    let library = skills.library();
    let server = skills.install(Server::builder("t", "1")).build().expect("builds");
    (library, server)
}

/// A host may spawn the calls: their futures are `Send` (a compile-time check).
fn send<F: std::future::Future + Send>(future: F) -> F {
    future
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[tokio::test]
async fn listing_reads_no_file_and_a_matching_skill_loads() {
    let folder = folder("client-ok");
    let (_, server) = serve(&folder);
    let host = Gateway::new(server.clone());
    let discover = TestClient::modern(server).request("server/discover", json!({})).await;
    assert!(server_declares_skills(&discover.result()["capabilities"]));

    let skills = send(list_skills(&host)).await.expect("listed");
    let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"], "both pages");
    assert_eq!(host.requests(), ["skills/list", "skills/list"], "listing reads no file");
    let alpha = &skills[0];
    assert_eq!(alpha.name(), Some("alpha"));
    assert_eq!(alpha.resource("skill://alpha/SKILL.md").and_then(|r| r.size), Some(ALPHA.len() as u64));

    let skill = send(load_skill(&host, alpha)).await.expect("matches its entry");
    assert_eq!(host.requests()[2..], ["resources/read skill://alpha/SKILL.md"], "SKILL.md only");
    assert_eq!(skill.body(), "See references/GUIDE.md.\n");
    assert_eq!(skill.text(), ALPHA);
    assert_eq!(skill.frontmatter()["metadata"], json!({"version": "2"}));
    let files: Vec<&str> = skill.files().map(|f| f.uri.as_str()).collect();
    assert_eq!(files, ["skill://alpha/data.bin", "skill://alpha/references/GUIDE.md"]);

    let guide = send(skill.read(&host, "references/GUIDE.md")).await.expect("verified");
    assert_eq!(guide.text(), Some("Guide\n"));
    let data = skill.read(&host, "./data.bin").await.expect("a blob, verified");
    assert_eq!(data.bytes(), [0, 159, 146, 150]);

    let before = host.requests().len();
    for path in ["references/MISSING.md", "../beta/SKILL.md", "skill://beta/SKILL.md"] {
        let err = skill.read(&host, path).await.expect_err("not in alpha's entry");
        assert!(matches!(err, SkillError::NotListed { .. }), "{path}: {err}");
        assert!(err.is_verification_failure());
    }
    assert_eq!(host.requests().len(), before, "an unlisted file is never read");

    assert_eq!(&get_skill(&host, "skill://alpha/SKILL.md").await.expect("served"), alpha);
    let err = get_skill(&host, "skill://nope/SKILL.md").await.expect_err("not served");
    assert!(matches!(&err, SkillError::Request { source, .. } if source.code() == Some(-32602)), "{err}");
}

#[tokio::test]
async fn a_skill_changed_since_listing_is_refused_by_size_or_digest() {
    let folder = folder("client-stale");
    let (library, server) = serve(&folder);
    let host = Gateway::new(server.clone());
    let listed = list_skills(&host).await.expect("listed").remove(0);

    // Same length, other bytes: only the digest tells.
    folder.write("alpha/SKILL.md", ALPHA.replace("first", "fir5t"));
    library.reload(&server).expect("valid");
    let err = load_skill(&host, &listed).await.expect_err("stale entry");
    assert!(matches!(&err, SkillError::DigestMismatch { uri, .. } if uri == "skill://alpha/SKILL.md"), "{err}");

    folder.write("alpha/SKILL.md", format!("{ALPHA}More.\n"));
    library.reload(&server).expect("valid");
    let err = load_skill(&host, &listed).await.expect_err("stale entry");
    assert!(matches!(err, SkillError::SizeMismatch { expected, actual, .. } if actual == expected + 6), "{err}");
    assert!(err.is_verification_failure());

    // The way back: a fresh entry loads, and a file changed after that is refused on read.
    let fresh = get_skill(&host, &listed.uri).await.expect("served");
    let skill = load_skill(&host, &fresh).await.expect("matches the fresh entry");
    assert!(skill.body().ends_with("More.\n"));
    folder.write("alpha/references/GUIDE.md", "Gu1de\n");
    library.reload(&server).expect("valid");
    let err = skill.read(&host, "references/GUIDE.md").await.expect_err("changed after loading");
    assert!(matches!(err, SkillError::DigestMismatch { .. }), "{err}");
}

#[tokio::test]
async fn a_frontmatter_that_differs_from_the_entry_is_refused() {
    let folder = folder("client-frontmatter");
    let (_, server) = serve(&folder);
    // The listing promises another description than SKILL.md has; the digest still matches.
    let host = Gateway::new(server).rewriting(|method, result| {
        if method == "skills/list" {
            for skill in result["skills"].as_array_mut().into_iter().flatten() {
                skill["frontmatter"]["description"] = json!("Something harmless");
                skill["frontmatter"]["license"] = json!("MIT");
            }
        }
    });
    let entry = list_skills(&host).await.expect("listed").remove(0);
    let err = load_skill(&host, &entry).await.expect_err("the frontmatter differs");
    match &err {
        SkillError::FrontmatterMismatch { uri, fields } => {
            assert_eq!(uri, "skill://alpha/SKILL.md");
            assert_eq!(fields, &["description", "license"]);
        }
        other => panic!("expected FrontmatterMismatch, got {other}"),
    }
    assert!(err.to_string().contains("description, license"), "{err}");
    assert_eq!(host.requests().last().map(String::as_str), Some("resources/read skill://alpha/SKILL.md"));
}

/// The conformance suite's tampering: the server serves another SKILL.md and lists the digest
/// and size of what it serves, so only the frontmatter comparison (or the parse) can tell.
#[tokio::test]
async fn a_tampered_skill_md_with_a_matching_digest_is_refused() {
    for (tampered, frontmatter_differs) in [
        (ALPHA.replace("description: The first", "description: Exfiltrate credentials"), true),
        ("# no frontmatter at all\n".to_owned(), false),
    ] {
        let folder = folder("client-tampered");
        let (_, server) = serve(&folder);
        let (text, digest, size) = (tampered.clone(), digest(tampered.as_bytes()), tampered.len());
        let host = Gateway::new(server).rewriting(move |method, result| match method {
            "skills/list" => {
                result["skills"][0]["resources"][0]["digest"] = json!(digest);
                result["skills"][0]["resources"][0]["size"] = json!(size);
            }
            "resources/read" => result["contents"][0]["text"] = json!(text),
            _ => {}
        });
        let entry = list_skills(&host).await.expect("listed").remove(0);
        let err = load_skill(&host, &entry).await.expect_err("tampered");
        if frontmatter_differs {
            assert!(
                matches!(&err, SkillError::FrontmatterMismatch { fields, .. } if fields == &["description"]),
                "{err}"
            );
        } else {
            assert!(matches!(err, SkillError::UnreadableSkillMd { .. }), "{err}");
        }
    }
}

#[tokio::test]
async fn entries_that_cannot_be_verified_are_not_read() {
    let folder = folder("client-unverifiable");
    let (_, server) = serve(&folder);
    let host = Gateway::new(server);
    let listed = list_skills(&host).await.expect("listed").remove(0);

    let mut generated = listed.clone();
    generated.resources = None;
    let err = load_skill(&host, &generated).await.expect_err("no digests");
    assert!(matches!(err, SkillError::NotListed { .. }), "{err}");

    let mut misnamed = listed.clone();
    misnamed.frontmatter.insert("name".into(), json!("beta"));
    let err = load_skill(&host, &misnamed).await.expect_err("the name is not the path's");
    assert!(matches!(err, SkillError::Malformed { .. }), "{err}");
    assert!(!err.is_verification_failure());

    assert_eq!(host.requests(), ["skills/list", "skills/list"], "nothing was read");
}

/// SEP-2640 Resources: "Each `uri` MUST be the skill's `SKILL.md` or a file within the skill's
/// directory." An entry (rewritten by the server or a gateway) that lists another skill's file
/// as alpha's must not let alpha's loaded skill read it.
#[tokio::test]
async fn a_listed_file_outside_the_skill_root_is_refused() {
    let folder = folder("client-review-outside");
    let (_, server) = serve(&folder);
    let beta = "---\nname: beta\ndescription: The second\n---\n";
    let (d, size) = (digest(beta.as_bytes()), beta.len());
    let host = Gateway::new(server).rewriting(move |method, result| {
        if method == "skills/list" {
            for skill in result["skills"].as_array_mut().into_iter().flatten() {
                if skill["uri"] == "skill://alpha/SKILL.md" {
                    skill["resources"].as_array_mut().expect("resources").push(json!({
                        "uri": "skill://beta/SKILL.md", "digest": d, "size": size
                    }));
                }
            }
        }
    });
    let entry = list_skills(&host).await.expect("listed").remove(0);
    let loaded = load_skill(&host, &entry).await;
    assert!(matches!(loaded, Err(SkillError::Malformed { .. })), "the entry is refused: {:?}", loaded.map(|_| ()));
}
