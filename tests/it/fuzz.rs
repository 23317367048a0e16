//! Seeded mutation tests: thousands of broken variants of the shipped rules and of realistic
//! requests go through the same code the service runs. None may panic, and none may take more
//! than two seconds (a hang in a reload or a request is an outage nobody notices until it is
//! one). The seed is fixed, so a failure reproduces; `TURNOUT_FUZZ_SEED` tries another.
use crate::common::root;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use turnout::contract::Request;
use turnout::engine;
use turnout::model::RawCall;
use turnout::model::scripted::ScriptedModel;

/// How long one broken rule set or request may take: a hang, not a slow machine. Twenty times
/// what loading the shipped rules takes here and now (a debug build, other tests on the same
/// cores), and at least 2 s; a fixed 2 s failed at random on a busy machine.
fn limit() -> Duration {
    static LIMIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let texts = shipped();
        let started = Instant::now();
        let _ = turnout::compile::load_texts(&texts);
        (started.elapsed() * 20).max(Duration::from_secs(2))
    })
}

/// xorshift64*: small, seeded, the same everywhere.
struct Rng(u64);

impl Rng {
    fn seeded(offset: u64) -> Self {
        let seed = std::env::var("TURNOUT_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5EED_u64);
        Rng((seed ^ offset).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Pieces that break YAML, schemas and meaning in different ways.
const SNIPPETS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ":",
    ": ",
    "- ",
    "-",
    " ",
    "  ",
    "\t",
    "'",
    "\"",
    "&a ",
    "*a",
    "!!str ",
    "!!python/object ",
    "---\n",
    "...\n",
    "\n",
    "#",
    "0",
    "-1",
    "1e999",
    "null",
    "~",
    "true",
    "ё",
    "🙂",
    "\u{200b}",
    "\\",
    "$",
    "(",
    ")",
    "*",
    "+",
    "?",
    "|",
    ">",
    "%",
    "@",
    "`",
    ",",
    "id: x",
    "mentions: nope",
    "tools: [nope]",
    "any: []",
    "all: [",
    "not:",
    "\u{0}",
];

fn mutate_text(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.below(lines.len());
        match rng.below(10) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 => {
                // Indent or dedent a line.
                if rng.below(2) == 0 {
                    lines[i].insert_str(0, "  ");
                } else {
                    lines[i] = lines[i].trim_start_matches(' ').to_owned();
                }
            }
            4 => {
                // Cut the file here (a save caught half-written).
                lines.truncate(i);
                if let Some(last) = lines.last_mut() {
                    let cut = rng.below(last.len() + 1);
                    let cut = (0..=cut)
                        .rev()
                        .find(|c| last.is_char_boundary(*c))
                        .unwrap_or(0);
                    last.truncate(cut);
                }
            }
            5 => {
                // Replace a number with another.
                let numbers = ["0", "-5", "999999999999999999999", "6.5", "1e10", "NaN"];
                let line = &lines[i];
                if let Some(pos) = line.find(|c: char| c.is_ascii_digit()) {
                    let end = line[pos..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(line.len(), |e| pos + e);
                    lines[i] = format!("{}{}{}", &line[..pos], rng.pick(&numbers), &line[end..]);
                }
            }
            6 => {
                // Rename an id or a reference, so it no longer matches anything.
                lines[i] = lines[i].replacen('_', "__", 1).replacen('-', "--", 1);
            }
            7 => {
                // Blow up a list: a long run of items.
                let n = 1 + rng.below(200);
                lines.insert(i, format!("words: [{}]", vec!["x"; n].join(", ")));
            }
            _ => {
                let line = &mut lines[i];
                let mut at = rng.below(line.len() + 1);
                while !line.is_char_boundary(at) {
                    at -= 1;
                }
                line.insert_str(at, rng.pick::<&str>(SNIPPETS));
            }
        }
    }
    let mut out = lines.join("\n");
    if rng.below(4) > 0 {
        out.push('\n');
    }
    out
}

/// Runs `work` on another thread and fails when it panics or takes longer than [`limit`].
fn within_limit<T: Send + 'static>(what: String, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    let limit = limit();
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("took over {limit:?}: {what}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("panicked: {what}"),
    }
}

fn shipped() -> Vec<(PathBuf, String)> {
    turnout::source::rule_files(&root().join("rules"))
        .expect("rules")
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read");
            (p, text)
        })
        .collect()
}

/// Why a refused mutant's findings do not lead its author to the fault: an error with no place,
/// a place in no file of the set or past its end; `None` when every error is located.
fn unlocated(texts: &[(PathBuf, String)], loaded: &turnout::compile::Loaded) -> Option<String> {
    let errors: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == turnout::Severity::Error)
        .collect();
    if errors.is_empty() {
        return Some("refused without an error".to_owned());
    }
    errors.iter().find_map(|d| {
        let Some(at) = &d.location else {
            return Some(format!("no place: {d}"));
        };
        let Some((_, text)) = texts.iter().find(|(p, _)| *p == at.file) else {
            return Some(format!("a file not in the set: {d}"));
        };
        // A file's last line may be the empty one after its final newline.
        let lines = text.lines().count() + 1;
        (at.line == 0 || at.line > lines || at.column == 0)
            .then(|| format!("line {} of {lines}: {d}", at.line))
    })
}

#[test]
fn two_thousand_broken_rule_sets_never_panic_or_hang() {
    const MUTANTS: usize = 2_000;
    // With the fixed seed, how many of them the loader refuses (each mutant is seeded by its
    // number, so the count does not depend on how many workers share them). A change to the
    // mutations, the seed, the shipped rules or what the loader accepts moves it: read the
    // printed figure, check the change meant that, and write it here.
    const REFUSED: usize = 1432;
    let files = shipped();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let started = Instant::now();
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let files = files.clone();
                scope.spawn(move || {
                    let (mut refused, mut bad) = (0, Vec::new());
                    for n in (w..MUTANTS).step_by(workers) {
                        let mut rng = Rng::seeded(n as u64);
                        let mut texts = files.clone();
                        let k = rng.below(texts.len());
                        texts[k].1 = mutate_text(&texts[k].1, &mut rng);
                        let what = format!("mutant {n} of {}", texts[k].0.display());
                        let copy = texts.clone();
                        let (ok, problem) = within_limit(what.clone(), move || {
                            let loaded = turnout::compile::load_texts(&copy);
                            // Every finding can be printed, located in the files it names.
                            for d in &loaded.diagnostics {
                                let _ = d.to_string();
                            }
                            let ok = loaded.ruleset.is_some();
                            (ok, if ok { None } else { unlocated(&copy, &loaded) })
                        });
                        if !ok {
                            refused += 1;
                        }
                        if let Some(p) = problem {
                            bad.push(format!("{what}: {p}"));
                        }
                    }
                    (refused, bad)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    let refused: usize = results.iter().map(|r| r.0).sum();
    let bad: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    eprintln!(
        "{MUTANTS} mutants in {:?}: {refused} refused, {} still valid",
        started.elapsed(),
        MUTANTS - refused
    );
    assert!(
        bad.is_empty(),
        "{} refused mutants not located at a line of a file:\n{}",
        bad.len(),
        bad.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    if std::env::var_os("TURNOUT_FUZZ_SEED").is_none() {
        assert_eq!(refused, REFUSED, "refused of {MUTANTS} with the fixed seed");
    }
    // Most mutations break something, some are harmless (a duplicated comment line).
    assert!(refused > MUTANTS / 2, "only {refused} refused");
    assert!(
        refused < MUTANTS,
        "no mutant was harmless: the mutations are too coarse"
    );
}

fn mutate_request(text: &str, rng: &mut Rng) -> String {
    let mut value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    match rng.below(6) {
        // Byte-level damage to the JSON text.
        0 => {
            let mut s = text.to_owned();
            let mut at = rng.below(s.len() + 1);
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            s.insert_str(at, rng.pick::<&str>(SNIPPETS));
            return s;
        }
        1 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            return text[..cut].to_owned();
        }
        // Odd values in fields.
        2 => {
            let odd = [
                json!(null),
                json!(""),
                json!([]),
                json!({}),
                json!(-1),
                json!("x".repeat(20_000)),
                json!("💥".repeat(3000)),
                json!("\u{0}\u{200b}\u{feff}?!"),
                json!({"name": "?"}),
                json!([{"kind": "photo", "face": "yes"}]),
            ];
            let keys = [
                "skill",
                "ui",
                "generation_mode",
                "attachments",
                "integrations",
                "recent_calls",
                "draft_shown",
                "web_search_toggle",
                "extra",
            ];
            if let Some(obj) = value.as_object_mut() {
                obj.insert((*rng.pick(&keys)).to_owned(), rng.pick(&odd).clone());
            }
        }
        // Odd messages.
        3 => {
            let texts = [
                "",
                " ",
                "?",
                "сколько стоит",
                "а",
                "ё",
                "\u{301}\u{301}\u{301}",
                "где купить где купить где купить",
            ];
            let n = 1 + rng.below(2_000);
            let content = rng.pick(&texts).repeat(n % 50 + 1);
            if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut)
                && let Some(last) = messages.last_mut()
            {
                last["content"] = json!(content);
            }
        }
        // Roles and order.
        4 => {
            if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) {
                match rng.below(3) {
                    0 => messages.reverse(),
                    1 => messages.clear(),
                    _ => {
                        if let Some(m) = messages.first_mut() {
                            m["role"] = json!(*rng.pick(&["system", "assistant", "robot", ""]));
                        }
                    }
                }
            }
        }
        _ => {
            if let Some(obj) = value.as_object_mut() {
                obj.insert(
                    "skill".into(),
                    json!(*rng.pick(&["health", "documents", "nope"])),
                );
                obj.insert(
                    "messages".into(),
                    json!([{"role": "assistant", "content": "Сколько лет ребёнку? 🙂"},
                           {"role": "user", "content": "3 годика"}]),
                );
            }
        }
    }
    value.to_string()
}

#[test]
fn five_thousand_broken_requests_never_panic_or_hang() {
    const REQUESTS: usize = 5_000;
    let rules = std::sync::Arc::new(
        turnout::compile::load_dir(&root().join("rules"))
            .ruleset
            .expect("the shipped rules"),
    );
    let tools: Vec<String> = rules.tools().iter().map(|t| t.id.to_string()).collect();
    let corpus = crate::common::corpus_requests();
    // One request per non-empty line of examples/corpus/requests.jsonl.
    let lines = std::fs::read_to_string(root().join("examples/corpus/requests.jsonl"))
        .expect("the corpus")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(corpus.len(), lines, "every corpus line is a request");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rng = Rng::seeded(99);
    let (mut refused, mut decided) = (0usize, 0usize);
    let started = Instant::now();
    for n in 0..REQUESTS {
        let source = corpus[rng.below(corpus.len())].clone();
        let text = mutate_request(&source, &mut rng);
        let t = Instant::now();
        match Request::from_json(&text) {
            Err(e) => {
                assert!(
                    !e.field.is_empty(),
                    "request {n}: an error names no field: {e}"
                );
                refused += 1;
            }
            Ok(req) => {
                // A model that answers with random (often wrong) calls and arguments.
                let calls: Vec<RawCall> = (0..rng.below(4))
                    .map(|_| RawCall {
                        tool: if rng.below(10) == 0 {
                            "no_such_tool".into()
                        } else {
                            tools[rng.below(tools.len())].clone()
                        },
                        arguments: rng
                            .pick(&[
                                json!({}),
                                json!({"query": "x"}),
                                json!({"skill": "health"}),
                                json!({"action": "delete"}),
                                json!(null),
                                json!("text"),
                            ])
                            .clone(),
                    })
                    .collect();
                let model = ScriptedModel::calls(calls);
                let rs = rules.clone();
                let decision = rt.block_on(engine::decide(
                    &rs,
                    &req,
                    engine::Options::model(Some(&model)),
                ));
                if let Ok(d) = decision {
                    serde_json::to_string(&d).expect("a decision serialises");
                    decided += 1;
                } else {
                    refused += 1;
                }
            }
        }
        assert!(
            t.elapsed() < limit(),
            "request {n} took {:?}: {text}",
            t.elapsed()
        );
    }
    eprintln!(
        "{REQUESTS} requests in {:?}: {refused} refused, {decided} decided",
        started.elapsed()
    );
    assert!(decided > REQUESTS / 4 && refused > REQUESTS / 10);
}
