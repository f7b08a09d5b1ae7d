//! Test support: temp paths whose folder is removed when the test ends (a run of the suite
//! used to leave a few hundred MB in the temp dir).

use std::path::{Path, PathBuf};

/// A path in a fresh folder of the temp dir (`psn-<label>-<uuid>`), removed with the folder
/// when this is dropped.
pub struct TempPath {
    path: PathBuf,
    dir: PathBuf,
}

impl TempPath {
    /// The fresh folder itself.
    pub fn dir(label: &str) -> TempPath {
        let dir = std::env::temp_dir().join(format!("psn-{label}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        TempPath { path: dir.clone(), dir }
    }

    /// A file `name` (not created) in a fresh folder.
    pub fn file(label: &str, name: &str) -> TempPath {
        let mut t = TempPath::dir(label);
        t.path = t.dir.join(name);
        t
    }
}

impl std::ops::Deref for TempPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
