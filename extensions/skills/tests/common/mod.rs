//! Shared by the integration tests: a scratch skills folder.

use std::path::PathBuf;

/// A scratch skills folder with one skill, removed on drop.
pub struct Folder(pub PathBuf);

impl Folder {
    pub fn new(tag: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!("switchyard-skills-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let folder = Folder(dir);
        folder.write("alpha/SKILL.md", "---\nname: alpha\ndescription: The first\n---\nBody\n");
        folder
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
