use super::Role;
use crate::vocab::metadata::{check_icon_mime_type, check_icon_size, check_icon_src, check_icon_theme, check_meta_key};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An icon a client may show beside a tool, prompt, resource, template or the server itself
/// (schema `Icon`, SEP-973,
/// <https://modelcontextprotocol.io/specification/2025-11-25/basic/index#icons>).
///
/// JSON: `{"src":"https://…/icon.png","mimeType"?:"image/png","sizes"?:["48x48"],"theme"?:"light"|"dark"}`.
/// Only 2025-11-25 and 2026-07-28 clients see icons; older sessions are sent none.
///
/// Checked when the server is built or the definition added ([`Icon::check`]): `src` is an
/// `https:`/`http:` URL or a `data:image/…` URI (never `javascript:`, `file:`, …), `mimeType` an
/// `image/*` type, each size `WxH` or `any`, the theme `light` or `dark`.
///
/// ```
/// # use switchyard::Icon;
/// let icon = Icon::new("https://example.com/dice.svg").mime_type("image/svg+xml").sizes(["any"]);
/// assert!(icon.check().is_ok());
/// assert!(Icon::new("javascript:alert(1)").check().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` URL or a `data:image/…;base64,…` URI.
    pub src: String,
    /// The image type, when the URL does not tell it (`image/png`, `image/svg+xml`).
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes it can be shown at: `"48x48"`, or `"any"` for scalable images; empty: any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// `light` or `dark`: the background it is drawn for; `None`: either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon { src: src.into(), mime_type: None, sizes: Vec::new(), theme: None }
    }

    /// Sets `mimeType`.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// Sets `sizes` (`"48x48"`, `"any"`).
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `theme` (`"light"` or `"dark"`).
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }

    /// Checks the icon against the rules above.
    ///
    /// Errors: a sentence naming the first field that breaks them.
    pub fn check(&self) -> Result<(), String> {
        check_icon_src(&self.src)?;
        if let Some(mime) = &self.mime_type {
            check_icon_mime_type(mime)?;
        }
        self.sizes.iter().try_for_each(|s| check_icon_size(s))?;
        self.theme.as_deref().map_or(Ok(()), check_icon_theme)
    }
}

/// Hints for the client about a content block or resource (schema `Annotations`,
/// <https://modelcontextprotocol.io/specification/2025-11-25/server/resources#annotations>).
///
/// JSON: `{"audience"?:["user","assistant"],"priority"?:0.0..=1.0,"lastModified"?:"2025-01-12T15:00:58Z"}`.
/// `lastModified` is sent to 2025-06-18 and later clients only.
///
/// ```
/// # use switchyard::{Annotations, Content, Role};
/// let note = Content::text("for the user only")
///     .with_annotations(Annotations::new().audience([Role::User]).priority(0.2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Annotations {
    /// Who the data is for; empty: not said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<Role>,
    /// How important it is, from 0 (optional) to 1 (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When it last changed, an ISO 8601 date-time (`2025-01-12T15:00:58Z`).
    #[serde(rename = "lastModified", skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No hints.
    pub fn new() -> Self {
        Annotations::default()
    }

    /// Sets `audience`.
    pub fn audience(mut self, roles: impl IntoIterator<Item = Role>) -> Self {
        self.audience = roles.into_iter().collect();
        self
    }

    /// Sets `priority`, held to 0..=1 (a NaN is dropped).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = (!priority.is_nan()).then(|| priority.clamp(0.0, 1.0));
        self
    }

    /// Sets `lastModified` (ISO 8601, e.g. `2025-01-12T15:00:58Z`).
    pub fn last_modified(mut self, when: impl Into<String>) -> Self {
        self.last_modified = Some(when.into());
        self
    }

    /// Checks the hints of a listed resource or template (the fields are public, and the
    /// schema bounds `priority`): `priority` a number in 0..=1 (a NaN would be sent as `null`),
    /// `lastModified` an ISO 8601 date or date-time (`2025-01-12`, `2025-01-12T15:00:58Z`).
    ///
    /// Errors: a sentence naming the field and its value.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(p) = self.priority
            && !(0.0..=1.0).contains(&p)
        {
            return Err(format!("annotations `priority` {p} is not a number from 0 to 1"));
        }
        match &self.last_modified {
            Some(when) if !is_iso8601(when) => Err(format!(
                "annotations `lastModified` {when:?} is not an ISO 8601 date-time such as `2025-01-12T15:00:58Z`"
            )),
            _ => Ok(()),
        }
    }
}

/// True for `YYYY-MM-DD`, optionally followed by `T` and `hh:mm[:ss[.fff]]` with an optional
/// `Z` or `±hh:mm` offset (RFC 3339's profile of ISO 8601, plus a bare date).
fn is_iso8601(text: &str) -> bool {
    fn num(s: &str, len: usize, max: u32) -> bool {
        s.len() == len && s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<u32>().is_ok_and(|n| n <= max)
    }
    let (date, time) = match text.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let date_ok = matches!(date.split('-').collect::<Vec<_>>()[..],
        [y, m, d] if num(y, 4, 9999) && num(m, 2, 12) && m != "00" && num(d, 2, 31) && d != "00");
    let Some(time) = time else { return date_ok };
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => (time, ""),
    };
    let offset_ok = match offset.as_bytes().first() {
        None => true,
        Some(b'Z' | b'z') => offset.len() == 1,
        Some(_) => matches!(offset[1..].split(':').collect::<Vec<_>>()[..], [h, m] if num(h, 2, 23) && num(m, 2, 59)),
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let clock_ok = !frac.is_empty()
        && frac.bytes().all(|b| b.is_ascii_digit())
        && match hms.split(':').collect::<Vec<_>>()[..] {
            [h, m] => num(h, 2, 23) && num(m, 2, 59) && frac == "0",
            [h, m, s] => num(h, 2, 23) && num(m, 2, 59) && num(s, 2, 60),
            _ => false,
        };
    date_ok && clock_ok && offset_ok
}

/// Hints about a tool's behavior (schema `ToolAnnotations`,
/// <https://modelcontextprotocol.io/specification/2025-11-25/schema#toolannotations>): what
/// `#[mcp_tool(read_only, destructive = false, ..)]` declares, for a tool added at run time
/// ([`DynamicTool::annotations`](crate::server::DynamicTool::annotations)). Clients must treat
/// them as untrusted hints from the server, never as guarantees.
///
/// JSON: `{"title"?:"..","readOnlyHint"?:bool,"destructiveHint"?:bool,"idempotentHint"?:bool,"openWorldHint"?:bool}`;
/// every revision from 2025-03-26 on has all five keys.
///
/// Checked when the tool is added ([`ToolAnnotations::check`]): a tool cannot be both read-only
/// and destructive.
///
/// ```
/// # use switchyard::ToolAnnotations;
/// let hints = ToolAnnotations::new().read_only_hint(true).open_world_hint(false);
/// assert_eq!(serde_json::to_value(&hints)?, serde_json::json!({"readOnlyHint": true, "openWorldHint": false}));
/// assert!(ToolAnnotations::new().read_only_hint(true).destructive_hint(true).check().is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display title for the tool (the tool's own `title` takes precedence in clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `readOnlyHint`: the tool does not modify its environment (default `false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`: an update may destroy data (default `true`; meaningful only when the
    /// tool is not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments has no further effect
    /// (default `false`; meaningful only when the tool is not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`: the tool reaches entities outside a closed domain, such as the web
    /// (default `true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints: `{}`.
    pub fn new() -> Self {
        ToolAnnotations::default()
    }

    /// Sets `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `readOnlyHint` (as `#[mcp_tool(read_only)]`).
    pub fn read_only_hint(mut self, value: bool) -> Self {
        self.read_only_hint = Some(value);
        self
    }

    /// Sets `destructiveHint` (as `#[mcp_tool(destructive)]`).
    pub fn destructive_hint(mut self, value: bool) -> Self {
        self.destructive_hint = Some(value);
        self
    }

    /// Sets `idempotentHint` (as `#[mcp_tool(idempotent)]`).
    pub fn idempotent_hint(mut self, value: bool) -> Self {
        self.idempotent_hint = Some(value);
        self
    }

    /// Sets `openWorldHint` (as `#[mcp_tool(open_world)]`).
    pub fn open_world_hint(mut self, value: bool) -> Self {
        self.open_world_hint = Some(value);
        self
    }

    /// Checks the hints agree, as the macro checks `read_only` and `destructive`.
    ///
    /// Errors: a sentence when `readOnlyHint` and `destructiveHint` are both `true` (a tool that
    /// modifies nothing destroys nothing), or when `title` is blank.
    pub fn check(&self) -> Result<(), String> {
        if self.read_only_hint == Some(true) && self.destructive_hint == Some(true) {
            return Err("a read-only tool cannot be destructive: it does not modify anything \
                        (`readOnlyHint` and `destructiveHint` are both true)"
                .to_owned());
        }
        if self.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err("the annotations' `title` must not be empty".to_owned());
        }
        Ok(())
    }
}

/// Checks the top-level keys of a declared `_meta` object
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/index#meta>): each follows
/// the naming rules and none uses a reserved prefix (`io.modelcontextprotocol/`, `dev.mcp/`).
/// Values are free-form.
///
/// Errors: a sentence naming the first key that breaks the rules.
pub fn check_meta(meta: &Map<String, Value>) -> Result<(), String> {
    meta.keys().try_for_each(|k| check_meta_key(k))
}

/// Checks every icon of a definition.
pub(crate) fn check_icons(icons: &[Icon]) -> Result<(), String> {
    icons.iter().try_for_each(Icon::check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_are_checked_against_the_schema() {
        for ok in ["2025-01-12T15:00:58Z", "2025-01-12", "2025-01-12T15:00:58.123+02:00", "2025-01-12T15:00Z"] {
            assert!(Annotations::new().last_modified(ok).check().is_ok(), "{ok}");
        }
        for bad in ["yesterday", "", "2025-13-01", "2025-01-12T25:00:00Z", "2025-01-12T15:00:58+2", "2025-1-1"] {
            let err = Annotations::new().last_modified(bad).check().expect_err(bad);
            assert!(err.contains("lastModified"), "{err}");
        }
        let mut hints = Annotations::new().priority(0.5);
        assert!(hints.check().is_ok());
        for bad in [f64::NAN, 1.5, -0.1, f64::INFINITY] {
            hints.priority = Some(bad);
            assert!(hints.check().expect_err("out of range").contains("priority"), "{bad}");
        }
    }
}
