//! OTLP export from the command line (the `otel` feature): when the environment names a
//! collector, [`ServeArgs::init_tracing`] puts [`OtelGuard::layer`] into the subscriber it
//! installs and keeps the guard here, and [`serve_with`] shuts the exporters down (sending what
//! is buffered) when the server stops.
//!
//! [`ServeArgs::init_tracing`]: super::ServeArgs::init_tracing
//! [`serve_with`]: super::serve_with

use crate::context::SPAN_TARGET;
use crate::otel::{self, OtelGuard};
use crate::server::Server;
use std::sync::Mutex;
use tracing_subscriber::filter::Directive;

/// The exporters of the global subscriber, while it exports.
static GUARD: Mutex<Option<OtelGuard>> = Mutex::new(None);

/// The filter directive that enables the request spans: the export has nothing to send without
/// them, whatever the log level.
pub(super) fn request_spans() -> Directive {
    // Parsing a constant target at a constant level: the error case is unreachable.
    format!("{SPAN_TARGET}=info").parse().expect("a valid directive")
}

/// The exporters for `server`'s name and version (the resource's `service.name` and
/// `service.version`, unless the environment overrides them), or, before the server exists,
/// for the executable's name. `None`, after saying why on stderr, when the environment's
/// `OTEL_EXPORTER_OTLP_*` values are invalid: logging goes on without export.
pub(super) fn exporters(server: Option<&Server>) -> Option<OtelGuard> {
    let (name, version) = match server {
        Some(server) => {
            let info = server.server_info();
            let name = info["name"].as_str().unwrap_or("unknown_service").to_owned();
            (name, info["version"].as_str().unwrap_or_default().to_owned())
        }
        None => {
            let exe = std::env::current_exe().ok();
            let stem = exe.as_deref().and_then(std::path::Path::file_stem).and_then(std::ffi::OsStr::to_str);
            (stem.unwrap_or("unknown_service").to_owned(), String::new())
        }
    };
    match otel::build(&name, &version, None) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("warning: not exporting to OpenTelemetry: {e}");
            None
        }
    }
}

/// Keeps `guard` until [`stop`]: its layer is in the global subscriber now.
pub(super) fn installed(guard: OtelGuard) {
    if let Ok(mut slot) = GUARD.lock() {
        *slot = Some(guard);
    }
}

/// Exports `server`'s metrics through the exporters of the global subscriber, if it has any
/// ([`OtelGuard::observe`]); the subscriber may have been installed before the server existed.
pub(super) fn observe(server: &Server) {
    if let Ok(slot) = GUARD.lock()
        && let Some(guard) = slot.as_ref()
    {
        let server = server.clone();
        guard.observe(move || server.metrics());
    }
}

/// Shuts the exporters of the global subscriber down, if it has any, waiting (on a blocking
/// thread) until what is buffered was sent or the export timed out. Spans that end later are
/// not exported.
pub(super) async fn stop() {
    let guard = GUARD.lock().ok().and_then(|mut slot| slot.take());
    if let Some(guard) = guard {
        let _ = tokio::task::spawn_blocking(move || drop(guard)).await;
    }
}
