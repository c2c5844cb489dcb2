//! `include_skills!`, re-exported by `switchyard-mcp-skills` (use it from there): embeds every
//! file of a skills folder in the binary, as `switchyard_skills::EmbeddedFile`s.
//!
//! The folder is read when the calling crate is compiled; each file is embedded with
//! `include_bytes!`, so Cargo rebuilds the crate when an embedded file changes. Validation of
//! the skills (frontmatter, names, limits) happens in `switchyard_skills`, when the server
//! loads them; a test calling `SkillsExtension::embedded` catches a bad skill in CI.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use std::path::{Path, PathBuf};
use syn::LitStr;

/// Embeds the skills folder `path` (relative to the calling crate's `Cargo.toml`) in the
/// binary: `include_skills!("skills")` is a `&'static [switchyard_skills::EmbeddedFile]` with
/// one entry per file below the folder (paths relative to it, `/`-separated, sorted; hidden
/// files and folders, whose names begin with `.`, are left out).
///
/// Errors at compile time: a path that is not a string literal, a folder that cannot be read,
/// a file or folder name that is not UTF-8.
///
/// Cargo tracks the embedded files, not the folder: after adding or removing a file, touch
/// the source file that calls the macro (or `cargo clean -p` the crate) so it is expanded again.
#[proc_macro]
pub fn include_skills(input: TokenStream) -> TokenStream {
    let lit = match syn::parse::<LitStr>(input) {
        Ok(lit) => lit,
        Err(_) => {
            return syn::Error::new(
                Span::call_site(),
                "include_skills! takes the folder as a string literal, e.g. include_skills!(\"skills\")",
            )
            .to_compile_error()
            .into();
        }
    };
    match expand(&lit) {
        Ok(tokens) => tokens.into(),
        Err(message) => syn::Error::new(lit.span(), message).to_compile_error().into(),
    }
}

fn expand(lit: &LitStr) -> Result<proc_macro2::TokenStream, String> {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR")
        .map_err(|_| "include_skills! needs CARGO_MANIFEST_DIR (set by Cargo) to find the folder".to_owned())?;
    let root = Path::new(&manifest_dir).join(lit.value());
    let mut files = Vec::new();
    walk(&root, &root, &mut files)?;
    files.sort();
    let entries = files.iter().map(|(rel, abs)| {
        let abs = abs.to_string_lossy();
        quote! {
            ::switchyard_skills::EmbeddedFile { path: #rel, contents: include_bytes!(#abs) }
        }
    });
    Ok(quote! {
        {
            const FILES: &[::switchyard_skills::EmbeddedFile] = &[#(#entries),*];
            FILES
        }
    })
}

/// Collects `(relative path, absolute path)` of every non-hidden file below `dir`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("include_skills!: cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("include_skills!: cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(format!("include_skills!: {} has a name that is not UTF-8", path.display()));
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| format!("include_skills!: {}: {e}", path.display()))?;
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if path.is_file() {
            // A symbolic link to a file is embedded; one to a folder is skipped (is_file is
            // false), so a link cycle cannot make the walk endless.
            let rel = path
                .strip_prefix(root)
                .map_err(|_| format!("include_skills!: {} is outside the folder", path.display()))?;
            let rel: Vec<&str> = rel.components().filter_map(|c| c.as_os_str().to_str()).collect();
            out.push((rel.join("/"), path.clone()));
        }
    }
    Ok(())
}
