//! The skills a server serves: built from a flat list of files (a folder read from disk, or
//! one embedded in the binary), validated once, then immutable.

use crate::LoadError;
use crate::frontmatter;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The URI scheme of skill resources (SEP-2640 "Resource Mapping").
pub const SCHEME: &str = "skill://";
/// The most files (resource entries, `SKILL.md` included) a skill may have: SEP-2640 says
/// servers SHOULD NOT serve more, so a bigger skill is refused at load.
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes a skill's files may add up to (16 MiB): SEP-2640 says servers SHOULD NOT
/// serve more, so a bigger skill is refused at load.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The MIME type of directory resources (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// One file of a skill, served as the resource `skill://<skill-path>/<file-path>`.
#[derive(Debug)]
pub struct SkillFile {
    rel: String,
    uri: String,
    contents: Arc<[u8]>,
    digest: String,
    mime_type: &'static str,
}

impl SkillFile {
    /// Its path below the skills folder, `/`-separated (e.g. `pdf-processing/SKILL.md`).
    pub fn path(&self) -> &str {
        &self.rel
    }

    /// Its resource URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its raw bytes.
    pub fn contents(&self) -> &[u8] {
        &self.contents
    }

    /// `sha256:<64 lowercase hex digits>` of the raw bytes.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The MIME type it is served with (from the file extension; `text/markdown` for `.md`).
    pub fn mime_type(&self) -> &'static str {
        self.mime_type
    }

    /// The `Resource` object of the file in `resources/list` and `resources/directory/read`:
    /// `{uri, name, mimeType, size}`, and for a `SKILL.md` its skill's `name` and `description`.
    pub(crate) fn resource(&self, skill: Option<&Skill>) -> Value {
        let mut r = json!({
            "uri": self.uri,
            "name": self.rel.rsplit('/').next().unwrap_or(&self.rel),
            "mimeType": self.mime_type,
            "size": self.contents.len(),
        });
        if let Some(skill) = skill {
            r["name"] = json!(skill.name());
            r["description"] = json!(skill.description());
        }
        r
    }
}

/// One skill: a folder with a `SKILL.md` whose frontmatter passed validation.
#[derive(Debug)]
pub struct Skill {
    path: String,
    uri: String,
    frontmatter: Map<String, Value>,
    /// `SKILL.md` first, then the other files (nested skills' too) by path.
    files: Vec<Arc<SkillFile>>,
}

impl Skill {
    /// The skill path: its folder below the skills folder (e.g. `acme/billing/refunds`); the
    /// last segment is the skill's name.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of its `SKILL.md`, which identifies it (`skill://<skill-path>/SKILL.md`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The frontmatter `name`.
    pub fn name(&self) -> &str {
        self.frontmatter.get("name").and_then(Value::as_str).unwrap_or_default()
    }

    /// The frontmatter `description`.
    pub fn description(&self) -> &str {
        self.frontmatter.get("description").and_then(Value::as_str).unwrap_or_default()
    }

    /// The whole frontmatter, as JSON.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.frontmatter
    }

    /// Every file, `SKILL.md` first; the files of skills nested inside it are its files too.
    pub fn files(&self) -> impl Iterator<Item = &SkillFile> {
        self.files.iter().map(|f| &**f)
    }

    /// The skill entry of `skills/list` and `skills/get`: `{uri, frontmatter, resources}` with
    /// one `{uri, digest, size}` per file.
    pub fn entry(&self) -> Value {
        let resources: Vec<Value> =
            self.files.iter().map(|f| json!({ "uri": f.uri, "digest": f.digest, "size": f.contents.len() })).collect();
        json!({ "uri": self.uri, "frontmatter": self.frontmatter, "resources": resources })
    }
}

/// A child of a directory resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Child {
    uri: String,
    dir: bool,
}

/// Every skill of a folder, validated, with lookups by URI. Cheap to share (`Arc`); a reload
/// builds a new one.
#[derive(Debug, Default)]
pub struct Catalog {
    skills: Vec<Arc<Skill>>,
    by_uri: HashMap<String, usize>,
    files: BTreeMap<String, Arc<SkillFile>>,
    dirs: BTreeMap<String, BTreeSet<Child>>,
}

impl Catalog {
    /// Builds the catalog from `(path below the skills folder, contents)` pairs; `origin`
    /// names the folder in error messages (`skills/`, `<embedded>/`).
    ///
    /// Every folder holding a `SKILL.md` is a skill, and a skill may nest inside another.
    /// Files outside every skill are not served.
    ///
    /// Errors: every problem at once ([`LoadError::Several`] for more than one), each naming
    /// its file: a `SKILL.md` without valid frontmatter, a `name` that breaks the naming rules
    /// or differs from its folder, a missing or too long `description`, a reserved `metadata`
    /// key, a skill over [`MAX_FILES_PER_SKILL`] files or [`MAX_SKILL_BYTES`] bytes, a file or
    /// folder name that cannot be a URI segment, a `SKILL.md` that is not UTF-8.
    pub fn from_files(origin: &str, mut files: Vec<(String, Arc<[u8]>)>) -> Result<Catalog, LoadError> {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut errors = Vec::new();
        let shown = |rel: &str| format!("{origin}{rel}");
        let roots: Vec<String> = files
            .iter()
            .filter_map(|(rel, _)| {
                if rel == "SKILL.md" {
                    errors.push(LoadError::invalid(
                        shown(rel),
                        "a SKILL.md directly in the skills folder has no skill path; put each skill in a folder named after it",
                    ));
                    None
                } else {
                    rel.strip_suffix("/SKILL.md").map(str::to_owned)
                }
            })
            .collect();
        let mut catalog = Catalog::default();
        for (rel, contents) in &files {
            if !roots.iter().any(|root| rel.starts_with(&format!("{root}/"))) {
                continue;
            }
            if let Err(reason) = check_path(rel) {
                errors.push(LoadError::invalid(shown(rel), reason));
                continue;
            }
            let file = Arc::new(SkillFile {
                uri: format!("{SCHEME}{rel}"),
                digest: digest(contents),
                mime_type: mime_type(rel, contents),
                contents: contents.clone(),
                rel: rel.clone(),
            });
            catalog.files.insert(file.uri.clone(), file);
        }
        for root in &roots {
            match build_skill(root, &catalog.files, &shown) {
                Ok(skill) => catalog.skills.push(Arc::new(skill)),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if let Some(e) = LoadError::from_all(errors) {
            return Err(e);
        }
        catalog.skills.sort_by(|a, b| a.uri.cmp(&b.uri));
        catalog.by_uri = catalog.skills.iter().enumerate().map(|(i, s)| (s.uri.clone(), i)).collect();
        catalog.index_directories();
        warn_on_shared_names(&catalog.skills);
        Ok(catalog)
    }

    /// Every directory resource with its direct children: each ancestor folder of every
    /// served file, up to the first skill-path segment.
    fn index_directories(&mut self) {
        for file in self.files.values() {
            let segments: Vec<&str> = file.rel.split('/').collect();
            for depth in 1..segments.len() {
                let dir = format!("{SCHEME}{}", segments[..depth].join("/"));
                let child_is_dir = depth + 1 < segments.len();
                let child = format!("{SCHEME}{}", segments[..=depth].join("/"));
                self.dirs.entry(dir).or_default().insert(Child { uri: child, dir: child_is_dir });
            }
        }
    }

    /// Every skill, by URI.
    pub fn skills(&self) -> impl ExactSizeIterator<Item = &Skill> {
        self.skills.iter().map(|s| &**s)
    }

    /// The skill whose `SKILL.md` has the URI `uri`.
    pub fn skill(&self, uri: &str) -> Option<&Skill> {
        self.by_uri.get(uri).map(|&i| &*self.skills[i])
    }

    /// The file served at `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files.get(uri).map(|f| &**f)
    }

    /// Every served file, by URI.
    pub fn files(&self) -> impl Iterator<Item = &SkillFile> {
        self.files.values().map(|f| &**f)
    }

    /// The `Resource` object listing the file `uri` (for a `SKILL.md`, with its skill's name and
    /// description).
    pub(crate) fn file_resource(&self, file: &SkillFile) -> Value {
        file.resource(self.skill(&file.uri))
    }

    /// The `Resource` objects of the direct children of the directory resource `uri`, files
    /// and directories (`mimeType: "inode/directory"`) by URI; `None` when `uri` is no directory.
    pub(crate) fn directory(&self, uri: &str) -> Option<Vec<Value>> {
        let children = self.dirs.get(uri)?;
        Some(
            children
                .iter()
                .filter_map(|c| {
                    let name = c.uri.rsplit('/').next().unwrap_or(&c.uri);
                    if c.dir {
                        Some(json!({ "uri": c.uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE }))
                    } else {
                        self.file(&c.uri).map(|f| self.file_resource(f))
                    }
                })
                .collect(),
        )
    }
}

/// The skill rooted at `root`, or every problem with it.
fn build_skill(
    root: &str,
    files: &BTreeMap<String, Arc<SkillFile>>,
    shown: &dyn Fn(&str) -> String,
) -> Result<Skill, Vec<LoadError>> {
    let skill_md_rel = format!("{root}/SKILL.md");
    let skill_md_uri = format!("{SCHEME}{skill_md_rel}");
    // A SKILL.md whose path was refused has already been reported.
    let skill_md = files.get(&skill_md_uri).ok_or_else(Vec::new)?;
    let mut errors = Vec::new();
    let text = std::str::from_utf8(&skill_md.contents)
        .map_err(|_| vec![LoadError::invalid(shown(&skill_md_rel), "SKILL.md is not UTF-8 text")])?;
    let dir_name = root.rsplit('/').next().unwrap_or(root);
    let frontmatter = match frontmatter::parse(text) {
        Ok(fm) => {
            for problem in frontmatter::check(&fm, dir_name) {
                errors.push(LoadError::invalid(shown(&skill_md_rel), problem));
            }
            fm
        }
        Err(problem) => {
            errors.push(LoadError::invalid(shown(&skill_md_rel), problem));
            Map::new()
        }
    };
    let prefix = format!("{SCHEME}{root}/");
    let mut skill_files = vec![skill_md.clone()];
    skill_files.extend(
        files
            .range(prefix.clone()..)
            .take_while(|(uri, _)| uri.starts_with(&prefix))
            .filter(|(uri, _)| **uri != skill_md_uri)
            .map(|(_, f)| f.clone()),
    );
    if skill_files.len() > MAX_FILES_PER_SKILL {
        errors.push(LoadError::invalid(
            shown(root),
            format!(
                "the skill has {} files; SEP-2640 allows at most {MAX_FILES_PER_SKILL} (SKILL.md and nested skills included)",
                skill_files.len()
            ),
        ));
    }
    let total: u64 = skill_files.iter().map(|f| f.contents.len() as u64).sum();
    if total > MAX_SKILL_BYTES {
        errors.push(LoadError::invalid(
            shown(root),
            format!("the skill's files add up to {total} bytes; SEP-2640 allows at most {MAX_SKILL_BYTES} (16 MiB)"),
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Skill { path: root.to_owned(), uri: skill_md_uri, frontmatter, files: skill_files })
}

/// Checks that every segment of a served file's path can stand in a `skill://` URI as is: the
/// first (the URI's authority) an RFC 3986 reg-name, the others path segments.
fn check_path(rel: &str) -> Result<(), String> {
    for (i, segment) in rel.split('/').enumerate() {
        let allowed =
            |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b) || (i > 0 && b"@:".contains(&b));
        if segment.is_empty() || !segment.bytes().all(allowed) {
            let what = if i == 0 { "the first folder (the URI's authority)" } else { "a file or folder name" };
            return Err(format!(
                "`{segment}` cannot be {what} in a skill:// URI; use letters, digits and - . _ ~ (no spaces or %)"
            ));
        }
    }
    Ok(())
}

/// `sha256:<64 lowercase hex digits>` of `bytes`: the digest format of SEP-2640 entries.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The MIME type of a file, from its extension; text of an unknown kind is `text/plain`,
/// anything else `application/octet-stream`.
fn mime_type(rel: &str, contents: &[u8]) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "zip" => "application/zip",
        _ if std::str::from_utf8(contents).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// SEP-2640: names SHOULD be unique within a listing; two skills may share one legitimately
/// (`acme/billing/refunds`, `acme/support/refunds`), so this is a warning, not an error.
fn warn_on_shared_names(skills: &[Arc<Skill>]) {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for s in skills {
        if let Some(first) = seen.insert(s.name(), s.path()) {
            tracing::warn!(
                name = s.name(),
                first,
                second = s.path(),
                "two skills share a name; hosts must disambiguate them"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Arc<[u8]>)> {
        list.iter().map(|(p, c)| (p.to_string(), Arc::from(c.as_bytes()))).collect()
    }

    const PDF: &str = "---\nname: pdf\ndescription: Read PDFs\n---\nUse references/FORMS.md.\n";

    #[test]
    fn builds_entries_with_digests_and_directories() {
        let nested = "---\nname: inner\ndescription: Nested\n---\n";
        let catalog = Catalog::from_files(
            "skills/",
            files(&[
                ("pdf/SKILL.md", PDF),
                ("pdf/references/FORMS.md", "forms"),
                ("pdf/inner/SKILL.md", nested),
                ("README.md", "not served"),
            ]),
        )
        .expect("valid");
        let uris: Vec<&str> = catalog.skills().map(Skill::uri).collect();
        assert_eq!(uris, ["skill://pdf/SKILL.md", "skill://pdf/inner/SKILL.md"]);
        let entry = catalog.skill("skill://pdf/SKILL.md").expect("listed").entry();
        let resources = entry["resources"].as_array().expect("array");
        assert_eq!(resources.len(), 3, "the nested skill's files belong to the enclosing one too");
        assert_eq!(resources[0]["uri"], "skill://pdf/SKILL.md");
        assert_eq!(resources[0]["size"], PDF.len());
        let forms = resources.iter().find(|r| r["uri"] == "skill://pdf/references/FORMS.md").expect("listed");
        // sha256("forms"), as `printf forms | sha256sum` prints it.
        assert_eq!(forms["digest"], "sha256:8bec8757f662f0f3cab90d3c7cfbf69ce66e4e120b0f8fb911aa1022798b3edf");
        assert!(catalog.file("skill://README.md").is_none());
        let root = catalog.directory("skill://pdf").expect("a directory");
        let kinds: Vec<(&str, &str)> =
            root.iter().map(|r| (r["uri"].as_str().unwrap_or(""), r["mimeType"].as_str().unwrap_or(""))).collect();
        assert_eq!(
            kinds,
            [
                ("skill://pdf/SKILL.md", "text/markdown"),
                ("skill://pdf/inner", DIRECTORY_MIME_TYPE),
                ("skill://pdf/references", DIRECTORY_MIME_TYPE)
            ]
        );
        assert_eq!(root[0]["name"], "pdf");
        assert_eq!(root[0]["description"], "Read PDFs");
        assert!(catalog.directory("skill://pdf/SKILL.md").is_none());
        assert!(catalog.directory("skill://nope").is_none());
    }

    #[test]
    fn digest_is_sha256_hex() {
        assert_eq!(digest(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn reports_every_problem_with_its_file() {
        let err = Catalog::from_files(
            "skills/",
            files(&[
                ("SKILL.md", PDF),
                ("good/SKILL.md", "---\nname: bad\ndescription: d\n---\n"),
                ("no-fm/SKILL.md", "# nothing"),
                ("sp ace/SKILL.md", PDF),
            ]),
        )
        .expect_err("invalid");
        let text = err.to_string();
        assert!(matches!(err, LoadError::Several(ref v) if v.len() == 4), "{text}");
        assert!(text.contains("skills/SKILL.md: a SKILL.md directly in the skills folder"), "{text}");
        assert!(text.contains("skills/good/SKILL.md: `name: bad` differs from the skill's folder `good`"), "{text}");
        assert!(text.contains("skills/no-fm/SKILL.md: SKILL.md must begin with YAML frontmatter"), "{text}");
        assert!(text.contains("skills/sp ace/SKILL.md: `sp ace` cannot be"), "{text}");
    }

    #[test]
    fn refuses_skills_over_the_limits() {
        let mut list =
            vec![("big/SKILL.md".to_owned(), Arc::from(b"---\nname: big\ndescription: d\n---\n".as_slice()))];
        for i in 0..MAX_FILES_PER_SKILL {
            list.push((format!("big/f{i}.txt"), Arc::from(b"x".as_slice())));
        }
        let err = Catalog::from_files("s/", list).expect_err("too many files");
        assert!(err.to_string().contains("s/big: the skill has 513 files"), "{err}");
    }
}
