//! Which services and tools the service-backed tests can reach, as `cfg`s read when the tests
//! are compiled, so that a test without its service is reported `ignored` (with what it needs)
//! instead of passing after printing "skipped". Under CI (`CI` set, as `.ci/run` runs) every
//! `cfg` is on: a missing service is then a failure, never an ignored test.
//!
//! | cfg | on when |
//! |---|---|
//! | `svc_pg` | `SWITCHYARD_TEST_PG` is set |
//! | `svc_nats` | `SWITCHYARD_TEST_NATS` is set |
//! | `svc_nats_server` | a `nats-server` binary (`SWITCHYARD_NATS_SERVER`, PATH, /usr/sbin) |
//! | `svc_haproxy` | an `haproxy` binary (`SWITCHYARD_HAPROXY`, PATH, /usr/sbin) |
//! | `svc_nginx` | an `nginx` binary (`SWITCHYARD_NGINX`, PATH, /usr/sbin) |
//! | `svc_npm` | `npm` on PATH |
//! | `svc_chromium` | a `chromium` binary (`SWITCHYARD_CHROMIUM`, PATH, /usr/sbin, /usr/bin) |
//! | `svc_python` | `python3` on PATH |

use std::path::PathBuf;

fn set(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.trim().is_empty())
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|c| c.is_file())
}

/// The same search as `common::service_binary`.
fn binary(var: &str, name: &str) -> bool {
    if set(var) {
        return true;
    }
    let sbin = PathBuf::from("/usr/sbin").join(name);
    println!("cargo:rerun-if-changed={}", sbin.display());
    on_path(name).is_some() || sbin.is_file()
}

/// Debian's `chromium` lives in /usr/bin: watched as well, so that installing it after a build
/// turns the browser test on.
fn chromium() -> bool {
    println!("cargo:rerun-if-changed=/usr/bin/chromium");
    binary("SWITCHYARD_CHROMIUM", "chromium")
}

fn main() {
    for var in [
        "CI",
        "PATH",
        "SWITCHYARD_TEST_PG",
        "SWITCHYARD_TEST_NATS",
        "SWITCHYARD_NATS_SERVER",
        "SWITCHYARD_HAPROXY",
        "SWITCHYARD_NGINX",
        "SWITCHYARD_CHROMIUM",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    let found = [
        ("svc_pg", set("SWITCHYARD_TEST_PG")),
        ("svc_nats", set("SWITCHYARD_TEST_NATS")),
        ("svc_nats_server", binary("SWITCHYARD_NATS_SERVER", "nats-server")),
        ("svc_haproxy", binary("SWITCHYARD_HAPROXY", "haproxy")),
        ("svc_nginx", binary("SWITCHYARD_NGINX", "nginx")),
        ("svc_npm", on_path("npm").is_some()),
        ("svc_chromium", chromium()),
        ("svc_python", on_path("python3").is_some()),
    ];
    for (cfg, present) in found {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
        if ci || present {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
}
