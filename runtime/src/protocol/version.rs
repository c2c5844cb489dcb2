/// The stateless revision this crate implements (spec digest §1).
pub const MODERN_VERSION: &str = "2026-07-28";

/// The session-based revisions served for legacy clients, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// Every revision served, newest first, as listed in `server/discover` `supportedVersions` and in
/// `-32022` `data.supported`.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// Which protocol era a request is served under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: stateless, per-request `_meta`.
    Modern,
    /// A session-based revision agreed in `initialize` (one of [`LEGACY_VERSIONS`]).
    Legacy(&'static str),
}

impl Era {
    /// The protocol version string of this era.
    pub fn version(&self) -> &'static str {
        match self {
            Era::Modern => MODERN_VERSION,
            Era::Legacy(v) => v,
        }
    }

    /// True for the stateless 2026-07-28 era.
    pub fn is_modern(&self) -> bool {
        matches!(self, Era::Modern)
    }
}

/// True when `v` names a session-based revision (including 2024-11-05, which is negotiated up).
pub fn is_legacy_version(v: &str) -> bool {
    LEGACY_VERSIONS.contains(&v) || v == "2024-11-05"
}

/// The legacy version to answer `initialize` with: the client's own when we serve it, otherwise
/// the newest legacy revision (2025-11-25 lifecycle rules).
pub fn negotiate_legacy(requested: Option<&str>) -> &'static str {
    requested.and_then(|r| LEGACY_VERSIONS.iter().copied().find(|v| *v == r)).unwrap_or(LEGACY_VERSIONS[0])
}
