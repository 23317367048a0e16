//! The layers run one way, in the order of `LAYERS` below (the one statement of it: the crate
//! doc's map of the modules is held to it here). Read from the `crate::` paths of every file
//! under `src/`, so a new import that points back up a layer fails here, with the file that
//! made it; and from the paths between files, so a new import circle fails too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and its layer; a module may only use modules of a lower layer. The
/// one place the order is written: `src/lib.rs`'s map lists the modules in it (checked below).
const LAYERS: &[(&str, u32)] = &[
    ("contract", 0),
    ("diag", 0),
    ("text", 0),
    ("rules", 1),
    ("source", 2),
    ("ruleset", 2),
    ("model", 3),
    ("engine", 4),
    // Above the engine and the models, so neither can import the compiler: they read the
    // compiled form (`ruleset`) only.
    ("compile", 5),
    ("reload", 6),
    ("report", 6),
    ("testing", 6),
    ("replay", 7),
    ("lint", 7),
    ("server", 8),
    ("cli", 9),
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

/// A file's module path: `compile/load.rs` is `compile::load`, `compile/mod.rs` is `compile`,
/// `lib.rs` the crate.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .map(|s| s.trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The tokens of blanked code that paths are made of: identifiers, `::`, `{`, `}`, `,`, `;`,
/// `*`; anything else as `.`.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else if c[i].is_whitespace() {
            i += 1;
        } else {
            out.push(if "{},;*".contains(c[i]) { c[i] } else { '.' }.to_string());
            i += 1;
        }
    }
    out
}

/// A path the code names: its segments, and whether it is a `pub use` (a name offered to
/// others, not a use of the item).
struct Named {
    path: Vec<String>,
    reexport: bool,
    /// The name it binds, for a `use`.
    binds: Option<String>,
}

/// The leaves of the use tree at `t[*i..]` under `prefix`, up to its end (`;`, `,` or `}`).
fn use_tree(t: &[String], i: &mut usize, prefix: &[String], reexport: bool, out: &mut Vec<Named>) {
    let mut path = prefix.to_vec();
    while *i < t.len() {
        match t[*i].as_str() {
            "{" => {
                *i += 1;
                while *i < t.len() && t[*i] != "}" {
                    use_tree(t, i, &path, reexport, out);
                    if *i < t.len() && t[*i] == "," {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "::" => *i += 1,
            "*" => {
                *i += 1;
                out.push(Named {
                    path: path.clone(),
                    reexport,
                    binds: None,
                });
                return;
            }
            ";" | "," | "}" => break,
            "as" => {
                let alias = t.get(*i + 1).cloned();
                *i += 2;
                out.push(Named {
                    path: path.clone(),
                    reexport,
                    binds: alias,
                });
                return;
            }
            seg => {
                if seg == "self" && !path.is_empty() {
                    // `use a::{self}` names `a`.
                } else {
                    path.push(seg.to_owned());
                }
                *i += 1;
            }
        }
    }
    let binds = path.last().cloned();
    out.push(Named {
        path,
        reexport,
        binds,
    });
}

/// Every path a file's non-test code names through `use` or as `crate::…`, `super::…` or
/// `self::…` in its text.
fn named_paths(code: &str) -> Vec<Named> {
    named_and_used(code).0
}

/// [`named_paths`], and the identifiers the code uses outside its `use` statements.
fn named_and_used(code: &str) -> (Vec<Named>, BTreeSet<String>) {
    let t = tokens(code);
    let mut out = Vec::new();
    let mut used = BTreeSet::new();
    let mut i = 0;
    while i < t.len() {
        used.insert(t[i].clone());
        if t[i] == "use" {
            // `pub use`, `pub(crate) use`: a re-export.
            let reexport =
                (i >= 1 && t[i - 1] == "pub") || (i >= 4 && t[i - 4] == "pub" && t[i - 1] == ".");
            i += 1;
            used.remove("use");
            use_tree(&t, &mut i, &[], reexport, &mut out);
            out.retain(|n| !n.path.is_empty());
            continue;
        }
        if matches!(t[i].as_str(), "crate" | "super" | "self")
            && t.get(i + 1).is_some_and(|s| s == "::")
            && (i == 0 || t[i - 1] != "::")
        {
            let mut path = vec![t[i].clone()];
            i += 1;
            while i + 1 < t.len()
                && t[i] == "::"
                && t[i + 1].chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                path.push(t[i + 1].clone());
                i += 2;
            }
            out.push(Named {
                path,
                reexport: false,
                binds: None,
            });
            continue;
        }
        i += 1;
    }
    (out, used)
}

/// The crate's files, by module path, with what each names.
struct Crate {
    /// Its path under `src/`, the paths it names, the identifiers its code uses.
    files: BTreeMap<Vec<String>, (String, Vec<Named>, BTreeSet<String>)>,
}

impl Crate {
    fn read(root: &Path) -> Self {
        let mut all = Vec::new();
        rs_files(root, &mut all);
        let mut files = BTreeMap::new();
        let mut test_only = Vec::new();
        for file in all {
            let rel = file.strip_prefix(root).expect("under src");
            if rel == Path::new("main.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("read");
            let (kept, test_mods) = outside_tests(&text);
            let code: String = kept.iter().map(|(_, l)| format!("{l}\n")).collect();
            let at = module_path(rel);
            for name in test_mods {
                let mut child = at.clone();
                child.push(name);
                test_only.push(child);
            }
            let name = rel.to_str().expect("utf-8").to_owned();
            let (named, used) = named_and_used(&blank_literals(&code));
            files.insert(at, (name, named, used));
        }
        // A `#[cfg(test)] mod tests;` file is test code whole.
        for m in test_only {
            files.remove(&m);
        }
        Self { files }
    }

    /// `path` as named in module `at`, from the crate's root; `None` for another crate's.
    fn absolute(&self, at: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut base = at.to_vec();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &path[1..];
            }
            Some("self") => rest = &path[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = at.to_vec();
                child.push(first.to_owned());
                if !self.files.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file that defines what the crate path `path` names: its longest prefix that is a
    /// module, then through that module's `use` of the next name, if it has one.
    fn defined_in(&self, path: &[String], depth: usize) -> Option<&str> {
        let k = (0..=path.len())
            .rev()
            .find(|k| self.files.contains_key(&path[..*k]))?;
        let (file, named, _) = &self.files[&path[..k]];
        if k < path.len() && depth < 8 {
            let name = &path[k];
            if let Some(n) = named.iter().find(|n| n.binds.as_ref() == Some(name))
                && let Some(mut target) = self.absolute(&path[..k], &n.path)
            {
                target.extend(path[k + 1..].iter().cloned());
                return self.defined_in(&target, depth + 1).or(Some(file));
            }
        }
        Some(file)
    }

    /// Which files each file's non-test code uses. A module's re-export of its own submodules'
    /// items (`pub use load::read_dir` in `compile/mod.rs`) is its face, not a use, unless its
    /// own code uses the name too; any other `pub use` is one.
    fn imports(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (at, (file, named, used)) in &self.files {
            let edges = out.entry(file.as_str()).or_default();
            for n in named {
                let Some(path) = self.absolute(at, &n.path) else {
                    continue;
                };
                let face = n.reexport && path.len() > at.len() && path.starts_with(at);
                if face && !n.binds.as_ref().is_some_and(|b| used.contains(b)) {
                    continue;
                }
                if let Some(to) = self.defined_in(&path, 0)
                    && to != file
                {
                    edges.insert(to);
                }
            }
        }
        out
    }
}

/// The import circles of `graph`: each group of files that reach one another (a strongly
/// connected part of more than one file), by its files in order, and one shortest circle
/// through its first file as `a -> b -> a`.
fn circles<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<(Vec<&'a str>, String)> {
    let reach = |from: &'a str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(f) = stack.pop() {
            for &to in graph.get(f).into_iter().flatten() {
                if seen.insert(to) {
                    stack.push(to);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&f| (f, reach(f))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for (&f, r) in &reached {
        if done.contains(f) || !r.contains(f) {
            continue;
        }
        let group: Vec<&str> = r
            .iter()
            .copied()
            .filter(|g| reached[g].contains(f))
            .collect();
        done.extend(group.iter().copied());
        // The shortest way back to `f`, breadth first.
        let mut back: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([f]);
        'search: while let Some(at) = queue.pop_front() {
            for &to in &graph[at] {
                if to == f {
                    back.insert(f, at);
                    break 'search;
                }
                if !back.contains_key(to) {
                    back.insert(to, at);
                    queue.push_back(to);
                }
            }
        }
        let mut path = vec![f];
        let mut at = back[f];
        while at != f {
            path.push(at);
            at = back[at];
        }
        path.push(f);
        path.reverse();
        out.push((group, path.join(" -> ")));
    }
    out
}

/// No import circle between files: files that need one another cannot be read, tested or
/// moved alone. The last one (the word helpers in `text/mod.rs`, which also used the matchers
/// built on them) was broken by moving them into leaves (`text/words.rs`, `entry.rs`,
/// `endings.rs`, `normalized.rs`).
#[test]
fn no_import_circle_between_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::read(&root);
    let graph = krate.imports();
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "import circles (break them: move what both need to where it belongs):\n{}",
        found
            .iter()
            .map(|(group, path)| format!("{group:?}: {path}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_circle_finder_names_each_circle_once_with_a_shortest_path() {
    let edges = [
        ("a.rs", "b.rs"),
        ("b.rs", "c.rs"),
        ("c.rs", "a.rs"),
        ("c.rs", "b.rs"),
        ("c.rs", "d.rs"),
        ("d.rs", "e.rs"),
        ("f/mod.rs", "f/x.rs"),
        ("f/x.rs", "f/mod.rs"),
    ];
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, to) in edges {
        graph.entry(from).or_default().insert(to);
        graph.entry(to).or_default();
    }
    assert_eq!(
        circles(&graph),
        vec![
            (
                vec!["a.rs", "b.rs", "c.rs"],
                "a.rs -> b.rs -> c.rs -> a.rs".to_owned()
            ),
            (
                vec!["f/mod.rs", "f/x.rs"],
                "f/mod.rs -> f/x.rs -> f/mod.rs".to_owned()
            ),
        ]
    );
}

#[test]
fn the_import_reader_resolves_paths_through_re_exports() {
    let t = named_paths(
        "use super::{index::RuleIndex, ruleset::{self, Cond as C}};\npub use load::read_dir;\n\
         fn f() { crate::diag::Location::new(); }\n",
    );
    let shown: Vec<(String, bool, Option<String>)> = t
        .iter()
        .map(|n| (n.path.join("::"), n.reexport, n.binds.clone()))
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        shown,
        [
            (s("super::index::RuleIndex"), false, Some(s("RuleIndex"))),
            (s("super::ruleset"), false, Some(s("ruleset"))),
            (s("super::ruleset::Cond"), false, Some(s("C"))),
            (s("load::read_dir"), true, Some(s("read_dir"))),
            (s("crate::diag::Location::new"), false, None),
        ]
    );
}

#[test]
fn the_crate_doc_lists_the_modules_in_the_layer_order() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("src/lib.rs");
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    // `//! - [`a`] and [`b`]: …`: the modules a line of the map is about, before its colon.
    let mut listed: Vec<(String, u32)> = Vec::new();
    for line in lib.lines() {
        let Some(item) = line.strip_prefix("//! - ") else {
            continue;
        };
        let head = item.split(": ").next().unwrap_or("");
        for name in head.split('`').skip(1).step_by(2) {
            let l = *layer
                .get(name)
                .unwrap_or_else(|| panic!("src/lib.rs lists `{name}`, which is not in LAYERS"));
            listed.push((name.to_owned(), l));
        }
    }
    let names: BTreeSet<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    let all: BTreeSet<&str> = layer.keys().copied().collect();
    assert_eq!(names, all, "src/lib.rs's map against LAYERS");
    assert_eq!(
        names.len(),
        listed.len(),
        "a module listed twice: {listed:?}"
    );
    for pair in listed.windows(2) {
        assert!(
            pair[0].1 <= pair[1].1,
            "src/lib.rs lists `{}` (layer {}) above `{}` (layer {}): not the order of LAYERS",
            pair[0].0,
            pair[0].1,
            pair[1].0,
            pair[1].1
        );
    }
}
