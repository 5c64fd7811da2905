//! Helpers shared by the command-line tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary directory, removed when dropped.
pub struct Tmp(pub PathBuf);

impl Tmp {
    /// A new empty directory; `tag` names the test file it serves.
    pub fn new(tag: &str) -> Tmp {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ndvm-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }

    /// Writes `contents` to `name` in the directory; its path.
    pub fn file(&self, name: &str, contents: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// The path of `name` in the directory.
    #[allow(dead_code)] // not every test file uses it
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
