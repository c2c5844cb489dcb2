//! An HAProxy process of a test's own: its configuration checked (`haproxy -c`, so a mistake
//! reads as HAProxy's message rather than as a port that never opens), run in the foreground
//! (`-db`) from a temporary folder, and killed and cleaned up when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct Haproxy {
    child: Child,
    dir: PathBuf,
}

impl Haproxy {
    /// Runs `binary` with `config` and waits until every port in `listens` accepts connections.
    pub fn start(binary: &Path, config: &str, listens: &[u16]) -> Haproxy {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("switchyard-haproxy-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let cfg = dir.join("haproxy.cfg");
        std::fs::write(&cfg, config).expect("config written");
        let check = Command::new(binary).arg("-c").arg("-f").arg(&cfg).output().expect("haproxy runs");
        assert!(check.status.success(), "haproxy rejects the config: {}", String::from_utf8_lossy(&check.stderr));
        let child = Command::new(binary)
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy starts");
        let proxy = Haproxy { child, dir };
        for port in listens {
            super::wait_for_port(*port, "haproxy");
        }
        proxy
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
