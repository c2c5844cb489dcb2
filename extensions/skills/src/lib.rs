//! # switchyard-mcp-skills (`switchyard_skills`): the MCP Skills extension (`io.modelcontextprotocol/skills`)
//!
//! Serves [Agent Skills](https://agentskills.io/specification) from a Switchyard server, as
//! [SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension) defines: every file of
//! a skill is a resource `skill://<skill-path>/<file-path>` read with `resources/read`, and the
//! server answers `skills/list`, `skills/get` and (unless turned off) `resources/directory/read`.
//!
//! A skills folder holds one folder per skill (nested as deep as you like: the folders above a
//! skill are its path prefix), each with a `SKILL.md` whose YAML frontmatter has at least
//! `name` (equal to the folder's name) and `description`, beside any other files:
//!
//! ```text
//! skills/
//!   pdf-processing/SKILL.md            -> skill://pdf-processing/SKILL.md
//!   pdf-processing/references/FORMS.md -> skill://pdf-processing/references/FORMS.md
//!   acme/billing/refunds/SKILL.md      -> skill://acme/billing/refunds/SKILL.md
//! ```
//!
//! ## Two ways to ship the folder, one model
//! Load it when the server starts ([`SkillsExtension::from_dir`]), or embed it in the binary at
//! compile time ([`include_skills!`] and [`SkillsExtension::embedded`]). Both build the same
//! [`Catalog`], validated the same way:
//!
//! ```no_run
//! use switchyard::Server;
//! use switchyard_skills::SkillsExtension;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // From a folder next to the binary, read at start:
//! let skills = SkillsExtension::from_dir("skills")?;
//! let server = skills.install(Server::builder("docs", "1.0.0")).build()?;
//! switchyard::transport::stdio::serve(server).await?;
//! # Ok(()) }
//! ```
//!
//! ```ignore
//! // Or carried by the binary: the folder is relative to the calling crate's Cargo.toml.
//! let skills = SkillsExtension::embedded(switchyard_skills::include_skills!("skills"))?;
//! ```
//!
//! ## Validation
//! Loading fails with a [`LoadError`] naming every file at fault: a `SKILL.md` without YAML
//! frontmatter, a `name` that breaks the naming rules (1-64 of `a-z 0-9 -`, no leading,
//! trailing or double hyphen) or differs from its folder, a missing or over-long `description`
//! (1024 characters) or `compatibility` (500), `metadata` keys under the reserved
//! `io.modelcontextprotocol/` prefix, a skill with more than 512 files or 16 MiB (SEP-2640:
//! servers SHOULD NOT serve those), a file or folder name that cannot stand in a URI. Two skills
//! sharing a name are served, with a warning (names SHOULD be unique).
//!
//! ## On the wire
//! Installing declares `capabilities.extensions["io.modelcontextprotocol/skills"] =
//! {"directoryRead": true}` (or `{}` with [`directory_read(false)`](SkillsExtension::directory_read))
//! in `server/discover`, and serves, on 2026-07-28 requests (the extension defines no client
//! declaration, so clients need not declare it):
//! - `skills/list {cursor?}` → `{skills: [entry], nextCursor?, ttlMs, cacheScope}`, paginated
//!   by [`page_size`](SkillsExtension::page_size); an entry is
//!   `{uri, frontmatter, resources: [{uri, digest: "sha256:<hex>", size}]}`, `frontmatter` being the
//!   `SKILL.md` frontmatter as JSON and `resources` every file of the skill, `SKILL.md` first.
//!   `-32602` for a cursor that is not a `skill://` URI.
//! - `skills/get {uri}` → `{skill: entry, ttlMs, cacheScope}`; `-32602` when `uri` is not the
//!   `SKILL.md` URI of a served skill.
//! - `resources/directory/read {uri, cursor?}` → `{resources: [Resource], nextCursor?}`: the
//!   direct children of a directory (`skill://pdf-processing`, `skill://pdf-processing/references`,
//!   or a prefix folder such as `skill://acme`), subfolders with `mimeType: "inode/directory"`;
//!   `-32602` for a URI that is no directory.
//! - every file through `resources/list` and `resources/read` (`SKILL.md` as `text/markdown`,
//!   listed with its skill's `name` and `description`; UTF-8 files as text, others as blobs).
//!
//! `ttlMs` of the skills methods is [`cache_ttl`](SkillsExtension::cache_ttl) (one minute by
//! default), with `cacheScope: "public"`: every caller sees the same skills.
//!
//! ## Changes
//! [`SkillLibrary::reload`] reads the folder again; with the `watch` feature,
//! `SkillLibrary::watch` does so whenever a file changes. A reload swaps the catalog atomically,
//! updates the served resources and publishes `notifications/resources/list_changed` (files
//! added or removed) and `notifications/resources/updated` (each changed file) to listen
//! streams and legacy sessions. A folder that no longer validates keeps the previous skills.
//!
//! The crate's registrations (`skills/list`, `skills/get`, `resources/directory/read`) are in a
//! group of their own, `"io.modelcontextprotocol/skills"`, which `install` adds to whatever
//! groups the server selects (`ServerBuilder::include_group`).
//!
//! ## Features
//! - `watch`: `SkillLibrary::watch`, reloading a skills folder when its files change (the
//!   `notify` crate).
//! - `client`: the host side, module `client`: list a server's skills (`skills/list`,
//!   `skills/get`), load one (its `SKILL.md` checked against the entry's `size`, `digest` and
//!   `frontmatter`) and read its supporting files, verified the same way, over any
//!   `switchyard::call::Caller`. The guide `docs/skills.md` ("Skills from the client side")
//!   shows it.

mod catalog;
#[cfg(feature = "client")]
pub mod client;
mod error;
mod frontmatter;
mod methods;
#[cfg(feature = "watch")]
mod watch;

pub use catalog::{Catalog, DIRECTORY_MIME_TYPE, MAX_FILES_PER_SKILL, MAX_SKILL_BYTES, SCHEME, Skill, SkillFile};
pub use error::LoadError;
pub use frontmatter::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, RESERVED_METADATA_PREFIX, valid_name};
pub use methods::{DirectoryReadParams, SkillsGetParams, SkillsListParams};
/// Embeds a skills folder in the binary: `include_skills!("skills")` (relative to the calling
/// crate's `Cargo.toml`) is a `&'static [EmbeddedFile]`, for [`SkillsExtension::embedded`].
/// Hidden files (names beginning with `.`) are left out. Cargo rebuilds when an embedded file
/// changes; after adding or removing one, touch the file that calls the macro.
pub use switchyard_skills_macros::include_skills;
#[cfg(feature = "watch")]
pub use watch::{SkillsWatcher, WatchError};

/// The guide's client-side example (docs/skills.md), compiled as a doctest.
#[cfg(all(doctest, feature = "client"))]
#[doc = include_str!("../../../docs/skills.md")]
pub struct SkillsGuideDoctests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use switchyard::server::DynamicResource;
use switchyard::{ReadResourceResult, ResourceContents, Server, ServerBuilder};

/// The extension's identifier, advertised under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One file of an embedded skills folder, as [`include_skills!`] writes it.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedFile {
    /// The path below the skills folder, `/`-separated (e.g. `pdf-processing/SKILL.md`).
    pub path: &'static str,
    /// The file's bytes.
    pub contents: &'static [u8],
}

/// Where a library's skills come from.
#[derive(Debug, Clone)]
enum Source {
    Dir(PathBuf),
    Embedded(&'static [EmbeddedFile]),
}

impl Source {
    fn load(&self) -> Result<Catalog, LoadError> {
        match self {
            Source::Dir(root) => {
                let mut files = Vec::new();
                read_dir(root, root, &mut files)?;
                let origin = format!("{}/", root.display());
                Catalog::from_files(&origin, files)
            }
            Source::Embedded(files) => Catalog::from_files(
                "<embedded>/",
                files.iter().map(|f| (f.path.to_owned(), Arc::from(f.contents))).collect(),
            ),
        }
    }
}

/// Reads every non-hidden file below `dir` into `out` as `(path below root, contents)`.
/// Symbolic links to files are read; links to folders are skipped, so a cycle cannot trap the walk.
fn read_dir(root: &Path, dir: &Path, out: &mut Vec<(String, Arc<[u8]>)>) -> Result<(), LoadError> {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
        move |source| LoadError::Io { path: path.to_owned(), source }
    }
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(LoadError::invalid(path.display().to_string(), "the name is not UTF-8"));
        };
        if name.starts_with('.') {
            continue;
        }
        if entry.file_type().map_err(io(&path))?.is_dir() {
            read_dir(root, &path, out)?;
        } else if path.is_file() {
            let contents = std::fs::read(&path).map_err(io(&path))?;
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel: Vec<&str> = rel.components().filter_map(|c| c.as_os_str().to_str()).collect();
            out.push((rel.join("/"), Arc::from(contents)));
        }
    }
    Ok(())
}

struct LibraryInner {
    source: Source,
    catalog: RwLock<Arc<Catalog>>,
}

/// A handle on the skills a server serves: the current [`Catalog`], and the means to reload
/// it. Cheap to clone; every clone is the same library. Get one with
/// [`SkillsExtension::library`].
#[derive(Clone)]
pub struct SkillLibrary {
    inner: Arc<LibraryInner>,
}

impl std::fmt::Debug for SkillLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillLibrary").field("source", &self.inner.source).finish_non_exhaustive()
    }
}

/// What a [`SkillLibrary::reload`] changed, by resource URI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadSummary {
    /// Files served now that were not before.
    pub added: Vec<String>,
    /// Files no longer served.
    pub removed: Vec<String>,
    /// Files whose contents changed.
    pub changed: Vec<String>,
}

impl ReloadSummary {
    /// True when the reload changed nothing.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl SkillLibrary {
    /// The skills served now (a snapshot: a reload does not change it).
    pub fn catalog(&self) -> Arc<Catalog> {
        // A poisoned lock only means a reload panicked between two plain assignments; the
        // catalog in it is whole either way.
        self.inner.catalog.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads the skills again (the folder; an embedded library never changes) and, when they
    /// validate, serves them on `server` at once: the catalog is swapped, resources of new files
    /// are added and those of removed files dropped (`notifications/resources/list_changed`),
    /// and `notifications/resources/updated` is published for each file whose contents changed.
    ///
    /// Errors: the [`LoadError`] of the new contents; the previous skills stay served.
    pub fn reload(&self, server: &Server) -> Result<ReloadSummary, LoadError> {
        let next = Arc::new(self.inner.source.load()?);
        let previous = {
            let mut slot = self.inner.catalog.write().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *slot, next.clone())
        };
        let mut summary = ReloadSummary::default();
        for file in next.files() {
            match previous.file(file.uri()) {
                None => summary.added.push(file.uri().to_owned()),
                Some(old) if old.digest() != file.digest() => summary.changed.push(file.uri().to_owned()),
                Some(_) => {}
            }
        }
        summary.removed =
            previous.files().filter(|f| next.file(f.uri()).is_none()).map(|f| f.uri().to_owned()).collect();
        server.remove_resources(summary.removed.iter().map(String::as_str));
        // Every file is re-added: a changed SKILL.md may change its listed name or description,
        // and add_resources announces a list change only when a listed object differs.
        // Skill files declare no icons or `_meta` and a `type/subtype` MIME type, so nothing
        // in them breaks a rule add_resources checks.
        if let Err(e) = server.add_resources(self.resources()) {
            tracing::warn!(error = %e, "skills reloaded, but their files could not be served");
        }
        let publisher = server.publisher();
        for uri in &summary.changed {
            publisher.resource_updated(uri.clone());
        }
        if !summary.is_empty() {
            tracing::info!(
                added = summary.added.len(),
                removed = summary.removed.len(),
                changed = summary.changed.len(),
                "skills reloaded"
            );
        }
        Ok(summary)
    }

    /// Watches the skills folder and [reloads](Self::reload) it onto `server` whenever files
    /// change (changes are gathered for 200 ms first, so an editor's save is one reload). A
    /// reload that fails validation is logged (`tracing` warning) and the previous skills stay
    /// served. Watching stops when the returned [`SkillsWatcher`] is dropped.
    ///
    /// Errors: [`WatchError`] for an embedded library (nothing to watch), outside a Tokio
    /// runtime, or when the operating system refuses the watch.
    #[cfg(feature = "watch")]
    pub fn watch(&self, server: &Server) -> Result<SkillsWatcher, WatchError> {
        match &self.inner.source {
            Source::Dir(root) => watch::start(self.clone(), root.clone(), server.clone()),
            Source::Embedded(_) => Err(WatchError::Embedded),
        }
    }

    /// One [`DynamicResource`] per served file, each reading the file from the catalog current
    /// at the time of the read.
    fn resources(&self) -> Vec<DynamicResource> {
        let catalog = self.catalog();
        catalog
            .files()
            .map(|file| {
                let listed = catalog.file_resource(file);
                let library = self.clone();
                let mut resource =
                    DynamicResource::new(file.uri(), listed["name"].as_str().unwrap_or_default(), move |_ctx, req| {
                        let library = library.clone();
                        async move { Ok(library.read(&req.uri)) }
                    })
                    .mime_type(file.mime_type());
                if let Some(d) = listed.get("description").and_then(|d| d.as_str()) {
                    resource = resource.description(d);
                }
                resource
            })
            .collect()
    }

    /// The `resources/read` result of `uri`; no contents (answered as not found, `-32602`)
    /// when a reload removed the file.
    fn read(&self, uri: &str) -> ReadResourceResult {
        let catalog = self.catalog();
        let contents = match catalog.file(uri) {
            None => Vec::new(),
            Some(file) => vec![match std::str::from_utf8(file.contents()) {
                Ok(text) => ResourceContents::text(uri, Some(file.mime_type()), text),
                Err(_) => ResourceContents::blob(uri, Some(file.mime_type()), file.contents()),
            }],
        };
        ReadResourceResult::new(contents)
    }
}

/// Settings of the extension and its skills; [`install`](Self::install) puts it on a server
/// builder.
#[derive(Debug)]
pub struct SkillsExtension {
    library: SkillLibrary,
    directory_read: bool,
    page_size: usize,
    cache_ttl: Duration,
}

impl SkillsExtension {
    /// Loads and validates the skills folder `root` now (every folder below it holding a
    /// `SKILL.md` is a skill; hidden files and folders are skipped).
    ///
    /// Errors: [`LoadError::Io`] when the folder cannot be read, otherwise the validation
    /// problems (see the [crate docs](crate#validation)).
    pub fn from_dir(root: impl Into<PathBuf>) -> Result<Self, LoadError> {
        Self::from_source(Source::Dir(root.into()))
    }

    /// Validates skills embedded with [`include_skills!`].
    ///
    /// Errors: the validation problems (see the [crate docs](crate#validation)); a test that
    /// calls this catches them before the binary ships.
    pub fn embedded(files: &'static [EmbeddedFile]) -> Result<Self, LoadError> {
        Self::from_source(Source::Embedded(files))
    }

    fn from_source(source: Source) -> Result<Self, LoadError> {
        let catalog = Arc::new(source.load()?);
        Ok(SkillsExtension {
            library: SkillLibrary { inner: Arc::new(LibraryInner { source, catalog: RwLock::new(catalog) }) },
            directory_read: true,
            page_size: 50,
            cache_ttl: Duration::from_secs(60),
        })
    }

    /// Whether to serve `resources/directory/read` and declare `directoryRead: true` (default
    /// true).
    pub fn directory_read(mut self, on: bool) -> Self {
        self.directory_read = on;
        self
    }

    /// Entries per page of `skills/list` and `resources/directory/read` (default 50, at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// The `ttlMs` of `skills/list` and `skills/get` results (whole milliseconds; default one
    /// minute).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// The library of the skills: their catalog, reloading, watching. Keep a clone to reload
    /// the folder once the server runs.
    pub fn library(&self) -> SkillLibrary {
        self.library.clone()
    }

    /// Installs the extension: declares it for `server/discover`, keeps the settings in the
    /// builder's shared state and serves every skill file as a resource.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        // SEP-2640 settings sit inline under the identifier; `{}` declares no optional feature.
        let settings =
            if self.directory_read { serde_json::json!({ "directoryRead": true }) } else { serde_json::json!({}) };
        let resources = self.library.resources();
        let state = methods::SkillsState {
            library: self.library,
            directory_read: self.directory_read,
            page_size: self.page_size,
            ttl_ms: u64::try_from(self.cache_ttl.as_millis()).unwrap_or(u64::MAX),
        };
        let mut builder = builder.include_group(EXTENSION).state(state).extension_capability(EXTENSION, settings);
        for resource in resources {
            builder = builder.resource(resource);
        }
        builder
    }
}
