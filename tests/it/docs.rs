//! The documentation as a reader meets it: the Russian guide's commands run as written, the
//! README stays short, and every link between the pages leads somewhere.

use crate::common::root;
use crate::common::{copy_dir, turnout_on_path};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fenced block of a Markdown page, with the `<!-- проверка: … -->` note just before it.
struct Block {
    lang: String,
    note: Option<String>,
    text: String,
    line: usize,
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = page.lines().enumerate().peekable();
    let mut note = None;
    while let Some((n, line)) = lines.next() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("<!-- проверка:") {
            note = Some(rest.trim_end_matches("-->").trim().to_owned());
            continue;
        }
        if let Some(lang) = t.strip_prefix("```") {
            let mut text = String::new();
            for (_, l) in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                text.push_str(l);
                text.push('\n');
            }
            out.push(Block {
                lang: lang.to_owned(),
                note: note.take(),
                text,
                line: n + 1,
            });
        } else if !t.is_empty() {
            note = None;
        }
    }
    out
}

/// `вставить FILE | LINE | LINE`: the block's lines marked `# ←` go into FILE right after the
/// first line equal to the last anchor that follows the earlier anchors.
fn insert(repo: &Path, note: &str, block: &str) {
    let mut parts = note
        .trim_start_matches("вставить")
        .split('|')
        .map(str::trim);
    let file = repo.join(parts.next().expect("a file"));
    let anchors: Vec<&str> = parts.collect();
    let text = std::fs::read_to_string(&file).expect("the file to edit");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut at = 0;
    for a in &anchors {
        at += lines[at..]
            .iter()
            .position(|l| l.trim() == *a)
            .unwrap_or_else(|| panic!("{}: no line {a:?}", file.display()));
        at += 1;
    }
    let new: Vec<String> = block
        .lines()
        .filter(|l| l.contains("# ←"))
        .map(str::to_owned)
        .collect();
    assert!(!new.is_empty(), "the block marks no line with `# ←`");
    lines.splice(at..at, new);
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
}

fn route(repo: &Path, bin_dir: &Path, message: &str) -> serde_json::Value {
    let request = serde_json::json!({"messages": [{"role": "user", "content": message}]});
    let out = Command::new(bin_dir.join("turnout"))
        .args(["route", "--model", "none"])
        .current_dir(repo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(request.to_string().as_bytes())?;
            c.wait_with_output()
        })
        .expect("route");
    serde_json::from_slice(&out.stdout).expect("a decision")
}

#[test]
fn the_russian_guide_runs_as_written() {
    let guide = std::fs::read_to_string(root().join("docs/ru/guide.md")).expect("the guide");
    let tmp = tempfile::tempdir().expect("tempdir");
    // The guide's commands run from the repository's root and write `../rules-before`.
    let repo = tmp.path().join("repo");
    copy_dir(&root().join("rules"), &repo.join("rules"));
    copy_dir(&root().join("schemas"), &repo.join("schemas"));
    std::fs::create_dir_all(repo.join("examples/corpus")).expect("mkdir");
    std::fs::copy(
        root().join("examples/corpus/requests.jsonl"),
        repo.join("examples/corpus/requests.jsonl"),
    )
    .expect("corpus");
    // Step 0 of the guide builds `turnout` and puts it on PATH; here the binary under test is.
    let (bin_dir, path) = turnout_on_path(tmp.path());

    let message = "во что обойдётся билет до Казани";
    assert_eq!(
        route(&repo, &bin_dir, message)["web_search"],
        false,
        "the guide's starting point: the phrase is not yet a search"
    );
    let (mut ran, mut skipped, mut wrote, mut skipped_sh) = (0, 0, 0, 0);
    for b in blocks(&guide) {
        let note = b.note.as_deref().unwrap_or("");
        if note.starts_with("пропустить") {
            skipped += 1;
            skipped_sh += usize::from(b.lang == "sh");
            continue;
        }
        match b.lang.as_str() {
            "sh" => {
                let out = Command::new("bash")
                    .args(["-euo", "pipefail", "-c", &b.text])
                    .current_dir(&repo)
                    .env("PATH", &path)
                    .output()
                    .expect("bash");
                assert!(
                    out.status.success(),
                    "docs/ru/guide.md:{}: the commands failed ({}):\n{}\nstdout:\n{}\nstderr:\n{}",
                    b.line,
                    out.status,
                    b.text,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
            "yaml" if note.starts_with("файл") => {
                let file = repo.join(note.trim_start_matches("файл").trim());
                std::fs::write(file, &b.text).expect("write");
                wrote += 1;
            }
            "yaml" if note.starts_with("вставить") => {
                insert(&repo, note, &b.text);
                wrote += 1;
            }
            _ => {}
        }
    }
    // Counted on the page itself, apart from `blocks`: every `sh` block runs unless a note
    // skips it, and every note is used (a file written, lines inserted, a block skipped).
    let fenced_sh = guide.lines().filter(|l| l.trim() == "```sh").count();
    let notes = guide
        .lines()
        .filter(|l| l.trim().starts_with("<!-- проверка:"))
        .count();
    assert!(fenced_sh > 0, "the guide runs no command");
    assert_eq!(
        (ran + skipped_sh, wrote + skipped),
        (fenced_sh, notes),
        "{ran} run, {wrote} written, {skipped} skipped of {fenced_sh} `sh` blocks and {notes} notes"
    );
    assert_eq!(
        route(&repo, &bin_dir, message)["web_search"],
        true,
        "after the guide's edit the phrase turns web search on"
    );
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(page: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

fn pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("docs/") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn the_readme_is_short_and_every_link_between_the_pages_resolves() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    assert!(
        readme.lines().count() <= 250,
        "README has {} lines",
        readme.lines().count()
    );
    // Being written elsewhere; linked from the index before they land.
    let coming = ["docs/traffic.md", "docs/embedded-router.md"];
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let inline = regex::Regex::new(r"`[^`]*`").expect("regex");
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page");
        assert!(
            !text.contains("../shared/") && !text.contains("shared/seed"),
            "{} points outside the repository",
            page.display()
        );
        // Links in prose only: code (fenced or inline) may hold anything.
        let mut in_code = false;
        let prose: String = text
            .lines()
            .filter(|l| {
                if l.trim_start().starts_with("```") {
                    in_code = !in_code;
                    return false;
                }
                !in_code
            })
            .collect::<Vec<_>>()
            .join("\n");
        let prose = inline.replace_all(&prose, "");
        for cap in link.captures_iter(&prose) {
            let target = &cap[1];
            if target.starts_with("http") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("dir").join(file)
            };
            let rel = dest
                .canonicalize()
                .ok()
                .and_then(|d| d.strip_prefix(root()).ok().map(Path::to_path_buf));
            if !dest.exists() {
                let lexical = page.parent().expect("dir").join(file);
                if !coming.iter().any(|c| lexical.ends_with(c)) {
                    broken.push(format!("{}: {target}", page.display()));
                }
                continue;
            }
            if !anchor.is_empty() && dest.extension().is_some_and(|x| x == "md") {
                let there = std::fs::read_to_string(&dest).expect("target page");
                if !anchors(&there).iter().any(|a| a == anchor) {
                    broken.push(format!(
                        "{}: {target} (no such heading in {rel:?})",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `docs/lint.md`'s table of check codes lists every code a finding can carry, once, and no
/// other: a code added to the engine without a line for the product manager who meets it fails
/// here.
#[test]
fn the_lint_guide_lists_every_check_code_once() {
    let page = std::fs::read_to_string(root().join("docs/lint.md")).expect("docs/lint.md");
    let table = page
        .split("### Check codes")
        .nth(1)
        .expect("a 'Check codes' section");
    let listed: Vec<&str> = table
        .lines()
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let twice: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|c| !seen.insert(*c))
        .collect();
    assert!(twice.is_empty(), "listed twice: {twice:?}");
    let codes: std::collections::BTreeSet<&str> = turnout::diag::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(codes.len(), turnout::diag::Code::ALL.len());
    let missing: Vec<&&str> = codes.difference(&seen).collect();
    let unknown: Vec<&&str> = seen.difference(&codes).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "codes with no line in docs/lint.md: {missing:?}; lines for no code: {unknown:?}"
    );
}
