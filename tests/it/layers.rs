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

/// `text` with the insides of comments, string and char literals blanked to spaces, line
/// breaks kept: what is left has its braces, `;` and paths where the compiler sees them.
fn blank_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    blank(&mut out, c[i]);
                    i += 1;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    blank(&mut out, c[i]);
                    i += 1;
                }
                blank(&mut out, c[i]);
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else if c[i] == '"'
            || (c[i] == 'r'
                && matches!(next, Some('"' | '#'))
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')))
        {
            // "…", r"…", r#"…"#, (and b"…", whose `b` stays).
            let raw = c[i] == 'r';
            let mut hashes = 0;
            if raw {
                out.push('r');
                i += 1;
                while i < c.len() && c[i] == '#' {
                    hashes += 1;
                    out.push('#');
                    i += 1;
                }
                if c.get(i) != Some(&'"') {
                    continue; // `r#ident`
                }
            }
            out.push('"');
            i += 1;
            while i < c.len() {
                if !raw && c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                } else if c[i] == '"' && c[i + 1..].iter().take(hashes).all(|h| *h == '#') {
                    out.push('"');
                    i += 1 + hashes;
                    out.extend(std::iter::repeat_n('#', hashes));
                    break;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                }
                i += 1;
            }
        } else if c[i] == '\'' {
            // A char literal ('x', '\n', '\u{…}') or a lifetime ('a), which has no closing quote.
            let end = if next == Some('\\') {
                c[i + 2..]
                    .iter()
                    .position(|&q| q == '\'')
                    .map(|p| i + 2 + p)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push('\'');
                    for &ch in &c[i + 1..e] {
                        blank(&mut out, ch);
                    }
                    out.push('\'');
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A file's lines outside items gated by `#[cfg(test)]` (a `mod tests { … }` block to its
/// closing brace by depth, a function, a one-line `use` or `mod name;`), as
/// `(line number from 0, line)`; and the modules such items declare in files of their own
/// (`#[cfg(test)] mod tests;`), which are test code whole.
fn outside_tests(text: &str) -> (Vec<(usize, &str)>, Vec<String>) {
    let code = blank_literals(text);
    let code: Vec<&str> = code.lines().collect();
    let lines: Vec<&str> = text.lines().collect();
    let (mut kept, mut test_files) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        let t = code[i].trim_start();
        let Some(rest) = t.strip_prefix("#[cfg(test)]") else {
            kept.push((i, lines[i]));
            i += 1;
            continue;
        };
        // The gated item: from what follows the attribute (on its line or the next ones, past
        // further attributes) to where its braces close, or its `;` at depth 0.
        let mut item = rest.trim_start().to_owned();
        let mut depth = 0i32;
        let mut opened = false;
        loop {
            let head = item.trim();
            let attribute_only = head.starts_with("#[") && head.ends_with(']');
            if !head.is_empty() && !attribute_only {
                if let Some(name) = head
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ")
                    .strip_prefix("mod ")
                    .and_then(|r| r.strip_suffix(';'))
                    && depth == 0
                    && !opened
                {
                    test_files.push(name.trim().to_owned());
                }
                depth += head.matches('{').count() as i32 - head.matches('}').count() as i32;
                opened |= head.contains('{');
                if depth <= 0 && (opened || head.ends_with(';')) {
                    break;
                }
            }
            i += 1;
            if i >= lines.len() {
                break;
            }
            item = code[i].to_owned();
        }
        i += 1;
    }
    (kept, test_files)
}

/// The file a `mod name;` in `file` loads: beside a `mod.rs` or `lib.rs`, else in the folder
/// named after `file`.
fn module_file(file: &Path, name: &str) -> Vec<PathBuf> {
    let dir = file.parent().expect("a folder");
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let base = if matches!(stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    vec![
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ]
}

#[test]
fn no_source_file_is_over_600_lines_outside_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| (f.clone(), std::fs::read_to_string(f).expect("read")))
        .collect();
    // Files that are a `#[cfg(test)] mod x;` of another are test code, all of them.
    let mut test_only = Vec::new();
    for (file, text) in &texts {
        for name in outside_tests(text).1 {
            let found: Vec<PathBuf> = module_file(file, &name)
                .into_iter()
                .filter(|p| p.is_file())
                .collect();
            assert_eq!(found.len(), 1, "{}: mod {name}; {found:?}", file.display());
            test_only.extend(found);
        }
    }
    let long: Vec<String> = texts
        .iter()
        .filter(|(f, _)| !test_only.contains(f))
        .filter_map(|(f, text)| {
            let n = outside_tests(text).0.len();
            (n > 600).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "one job per file: {long:?}");
}

#[test]
fn the_test_gates_are_cut_where_their_items_end() {
    let text = "use a;\n#[cfg(test)]\nuse b;\nfn f() {\n    let s = \"}\";\n    let c = '{';\n}\n\
                #[cfg(test)]\n#[allow(dead_code)]\nfn g<'a>(x: &'a str) {\n    // }\n    let _ = r#\"{\"#;\n}\n\
                fn h() {}\n#[cfg(test)] mod helpers;\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
    let (kept, files) = outside_tests(text);
    let kept: Vec<&str> = kept.iter().map(|(_, l)| l.trim()).collect();
    assert_eq!(
        kept,
        [
            "use a;",
            "fn f() {",
            "let s = \"}\";",
            "let c = '{';",
            "}",
            "fn h() {}"
        ]
    );
    assert_eq!(files, ["helpers"]);
}
