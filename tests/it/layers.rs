//! The layers run one way: contract → rules → compile → model → engine → testing / lint /
//! reload → server → cli. Read from the `crate::` paths of every file under `src/`, so a new
//! import that points back up a layer fails here, with the file that made it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and its layer; a module may only use modules of a lower layer.
const LAYERS: &[(&str, u32)] = &[
    ("contract", 0),
    ("diag", 0),
    ("text", 0),
    ("rules", 1),
    ("compile", 2),
    ("model", 3),
    ("engine", 4),
    ("reload", 5),
    ("report", 5),
    ("testing", 5),
    ("replay", 6),
    ("lint", 6),
    ("server", 7),
    ("cli", 8),
];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file's text names through `crate::`, including grouped imports
/// (`use crate::{a, b::c}`).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out
}

/// `mod name;` (any visibility, any attribute before it on its own line): a module in a file of
/// its own.
fn declares_a_module_file(line: &str) -> bool {
    let mut t = line.trim();
    if let Some(rest) = t.strip_prefix("pub") {
        t = rest.trim_start();
        if let Some(rest) = t.strip_prefix('(') {
            t = rest.split_once(')').map_or("", |(_, r)| r).trim_start();
        }
    }
    t.strip_prefix("mod ")
        .and_then(|r| r.strip_suffix(';'))
        .is_some_and(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[test]
fn the_layers_import_one_way_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    let mut seen = 0;
    // Every file but the crate root and the binary is a module some file declares with
    // `mod name;`: the files read must be exactly those the compiler builds.
    let mut declared = 0;
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).expect("under src");
        let text = std::fs::read_to_string(&file).expect("read");
        declared += text.lines().filter(|l| declares_a_module_file(l)).count();
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs"))
            .unwrap_or_default()
            .to_owned();
        // The crate root and the binary may use everything.
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(&own) = layer.get(top.as_str()) else {
            panic!(
                "src/{} is in no layer: add '{top}' to LAYERS",
                rel.display()
            );
        };
        seen += 1;
        for used in crate_paths(&text) {
            if used == top || used.is_empty() {
                continue;
            }
            match layer.get(used.as_str()) {
                Some(&l) if l < own => {}
                Some(&l) => wrong.push(format!(
                    "src/{} ({top}, layer {own}) uses crate::{used} (layer {l})",
                    rel.display()
                )),
                None => {
                    // `crate::RuleSet`, `crate::Diagnostic`: re-exports at the root.
                    if used.chars().next().is_some_and(char::is_lowercase) {
                        wrong.push(format!(
                            "src/{} uses crate::{used}, which is in no layer",
                            rel.display()
                        ));
                    }
                }
            }
        }
    }
    assert_eq!(
        seen, declared,
        "{seen} files read under src/, {declared} declared with `mod name;`"
    );
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_source_file_is_over_600_lines_before_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).expect("read");
            let body = text.split("#[cfg(test)]").next().unwrap_or("");
            let n = body.lines().count();
            (n > 600).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "one job per file: {long:?}");
}
