//! Reading a rules directory from disk: which files are rule files, reading each one within the
//! [`Limits`], and one SHA-256 over what was read. That digest is both the ruleset's version and
//! the reload's "did anything change" fingerprint, so the files are read once per reload.
//!
//! Reads are confined to the directory: a symlink (or a symlinked folder) that resolves outside
//! it is refused without being opened, so a rule file can never read, and a finding never
//! echo, a file that is not a rule file. Kubernetes ConfigMap volumes keep working: their
//! `file.yaml -> ..data/file.yaml -> ..2026_…/file.yaml` chains stay inside the directory.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::yaml::{self, Limits};
use crate::diag::{Code, Diagnostic, Location};

/// What reading a directory gave: the texts of the rule files, the problems met, and the digest
/// of it all.
#[derive(Debug)]
pub struct ReadDir {
    /// The directory read.
    pub dir: PathBuf,
    /// Every rule file found, read or not, in path order.
    pub files: Vec<PathBuf>,
    /// The rule files that could be read, as (path, text), in path order.
    pub texts: Vec<(PathBuf, String)>,
    /// Files refused or unreadable, and a missing directory.
    pub diagnostics: Vec<Diagnostic>,
    /// The directory cannot be used at all (missing, unreadable).
    pub unusable: bool,
    /// SHA-256 over every file's path and bytes (and every problem met), in order.
    pub digest: [u8; 32],
    /// How many bytes were read from disk.
    pub bytes_read: u64,
}

impl ReadDir {
    /// The ruleset version these files give: the first 8 bytes of the digest, in hex.
    pub fn version(&self) -> String {
        version_of(&self.digest)
    }
}

/// The first 8 bytes of a digest in hex.
pub(crate) fn version_of(digest: &[u8; 32]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes (name, bytes) pairs the way [`read_dir`] does.
pub(crate) fn digest_of<'t>(items: impl IntoIterator<Item = (&'t Path, &'t [u8])>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for (path, bytes) in items {
        hasher.update(path.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        hasher.update(bytes);
        hasher.update([0]);
    }
    hasher.finalize().into()
}

/// Whether a directory entry is left out: hidden files and folders (editor swap files,
/// Kubernetes' `..data`), and editors' backup files.
fn skipped(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~')
}

/// The rule files of a directory and its subfolders: `*.yaml` and `*.yml`, in path order.
/// Hidden entries and the top-level `tests/` folder (test cases) are not rule files. Entries
/// that resolve outside the directory are returned as refused, with the reason.
pub fn rule_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let (files, _) = list(dir, true)?;
    Ok(files)
}

/// Lists `dir`: (rule files, refused entries). `skip_tests` leaves out `dir/tests/`.
fn list(dir: &Path, skip_tests: bool) -> std::io::Result<(Vec<PathBuf>, Vec<Diagnostic>)> {
    let root = std::fs::canonicalize(dir)?;
    if !root.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    let mut files = Vec::new();
    let mut refused = Vec::new();
    let mut visited = HashSet::from([root.clone()]);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(e) => e,
            Err(e) if folder == dir => return Err(e),
            Err(e) => {
                refused.push(unreadable(&folder, &e));
                continue;
            }
        };
        for entry in entries {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if skipped(name) || (skip_tests && folder == dir && name == "tests") {
                continue;
            }
            let Ok(real) = std::fs::canonicalize(&path) else {
                // A dangling symlink, or an entry removed meanwhile: nothing to read.
                continue;
            };
            if !real.starts_with(&root) {
                if is_yaml(&path) || real.is_dir() {
                    refused.push(outside(&path));
                }
                continue;
            }
            if real.is_dir() {
                if visited.insert(real) {
                    pending.push(path);
                }
            } else if is_yaml(&path) && real.is_file() {
                files.push(path);
            } else if is_yaml(&path) {
                // A pipe or a device: reading it could block the reload forever.
                let e = std::io::Error::other("not a regular file");
                refused.push(unreadable(&path, &e));
            }
        }
    }
    files.sort();
    Ok((files, refused))
}

fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

fn at_start(path: &Path) -> Option<Location> {
    Some(Location::new(path.to_path_buf(), 1, 1))
}

fn outside(path: &Path) -> Diagnostic {
    Diagnostic::error(
        Code::OutsideRulesDir,
        "this entry is a link to a place outside the rules directory; it was not read",
    )
    .at(at_start(path))
    .hint("rule files must live inside the rules directory: copy the file in instead of linking to it")
}

fn unreadable(path: &Path, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(Code::Unreadable, format!("cannot read this file: {e}")).at(at_start(path))
}

/// Reads a file as text within the default [`Limits`] (see [`yaml::text_of`]).
pub fn read_text(path: &Path) -> Result<String, Diagnostic> {
    read_file(path, &Limits::default()).0
}

/// Reads one rule file within `limits`: the size is checked before reading, and at most one
/// byte more than the limit is ever read (in case the file grows meanwhile).
pub fn read_file(path: &Path, limits: &Limits) -> (Result<String, Diagnostic>, u64) {
    let too_large = |size: u64| {
        Diagnostic::error(
            Code::TooLarge,
            format!(
                "the file is {size} bytes; a rule file may have at most {} bytes",
                limits.max_file_bytes
            ),
        )
        .at(at_start(path))
        .hint("split it into several files, or raise --max-rule-file-bytes")
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return (Err(unreadable(path, &e)), 0),
    };
    match file.metadata() {
        Ok(m) if m.is_dir() => {
            let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory");
            return (Err(unreadable(path, &e)), 0);
        }
        Ok(m) if m.len() > limits.max_file_bytes => return (Err(too_large(m.len())), 0),
        _ => {}
    }
    let mut bytes = Vec::new();
    if let Err(e) = file
        .take(limits.max_file_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        return (Err(unreadable(path, &e)), bytes.len() as u64);
    }
    let read = bytes.len() as u64;
    if read > limits.max_file_bytes {
        return (Err(too_large(read)), read);
    }
    (yaml::text_of(path, bytes), read)
}

/// Reads every rule file of `dir` within `limits`.
pub fn read_dir(dir: &Path, limits: &Limits) -> ReadDir {
    let mut out = ReadDir {
        dir: dir.to_path_buf(),
        files: Vec::new(),
        texts: Vec::new(),
        diagnostics: Vec::new(),
        unusable: false,
        digest: [0; 32],
        bytes_read: 0,
    };
    let mut hasher = Sha256::new();
    let (files, refused) = match list(dir, true) {
        Ok(found) => found,
        Err(e) => {
            let message = if e.kind() == std::io::ErrorKind::NotFound {
                format!("no such rules directory: {}", dir.display())
            } else {
                format!("cannot read the rules directory {}: {e}", dir.display())
            };
            hasher.update(message.as_bytes());
            out.digest = hasher.finalize().into();
            out.diagnostics
                .push(Diagnostic::error(Code::Unusable, message));
            out.unusable = true;
            return out;
        }
    };
    for d in &refused {
        hasher.update(d.to_string().as_bytes());
        hasher.update([0]);
    }
    // A link out of the directory or a file that is not a file: the directory as it stands
    // cannot be used.
    out.unusable |= !refused.is_empty();
    out.diagnostics.extend(refused);
    // Read on every core (a grown pack is a hundred files), hashed in order.
    let read_all: Vec<_> = files.par_iter().map(|p| read_file(p, limits)).collect();
    out.files.clone_from(&files);
    for (path, (text, read)) in files.into_iter().zip(read_all) {
        out.bytes_read += read;
        let name = path.strip_prefix(dir).unwrap_or(&path);
        hasher.update(name.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        match text {
            Ok(text) => {
                hasher.update(text.as_bytes());
                out.texts.push((path, text));
            }
            Err(d) => {
                hasher.update(d.to_string().as_bytes());
                out.unusable |= d.code == Code::Unreadable;
                out.diagnostics.push(d);
            }
        }
        hasher.update([0]);
    }
    out.digest = hasher.finalize().into();
    out
}

/// Reads a router model script (a test case's `model:` section, YAML or JSON) through the same
/// checked path as rule files: size limit, YAML limits, schema.
pub fn load_script(
    path: &Path,
    limits: &Limits,
) -> Result<crate::rules::testcase::ModelScript, Vec<Diagnostic>> {
    let text = read_file(path, limits).0.map_err(|d| vec![d])?;
    let (value, _) =
        super::check::parse_checked(path, &text, super::check::SchemaCheck::script(), limits)?;
    serde_json::from_value(value).map_err(|e| {
        vec![
            Diagnostic::error(Code::Invalid, format!("not a model script: {e}")).at(at_start(path)),
        ]
    })
}

/// The test files of a rules directory: `DIR/tests/` and its subfolders, `*.yaml`/`*.yml`, in
/// path order, confined like rule files.
pub fn test_files(rules_dir: &Path) -> Vec<PathBuf> {
    list(&rules_dir.join("tests"), false)
        .map(|(files, _)| files)
        .unwrap_or_default()
}
