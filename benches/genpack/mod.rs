//! Grows the shipped rule pack N times, for benchmarks: the shipped `rules/` (test cases
//! included) plus N − 1 generated parts, each about the size of the shipped pack's own rules —
//! 21 word lists (≈ 23 entries each: stems, two-stem phrases, whole words, and a pattern in one
//! list of four), 7 pre-rules, 3 search rules and 7 guards that mention them, shaped like the
//! shipped ones (`all`/`any`/`not`, lengths, skills, files, attachments, arguments).
//!
//! The words are random Cyrillic-looking stems that start with a consonant pair no Russian word
//! starts with, so they do not occur in real messages: the generated rules add work to every
//! decision, compile and lint, but change no decision of the shipped test cases or the corpus.
//! Every generated list is mentioned exactly once, and no generated rule is implied by an
//! earlier one, so `turnout lint` finds nothing new.
//!
//! Deterministic: part `k` is always the same text. Used by the criterion benches (included
//! with `#[path]`), the `gen_pack` example and the tests.
//!
//! Layout of the generated directory:
//! - every file of the shipped directory, copied (`tests/` too: the cases still pass);
//! - `search.yaml` with the generated search rules appended to its `rules:` list (a directory
//!   has one `search` section);
//! - `zz-generated/part-NNN.yaml`, one per part: its word lists, pre-rules and guards. The
//!   folder sorts after the shipped files, so generated pre-rules and guards come after the
//!   shipped ones.

#![allow(dead_code)] // each bench uses a different part of it

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// The shipped rule pack.
pub fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

/// What [`write_pack`] wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub parts: usize,
    pub lists: usize,
    pub entries: usize,
    pub pre_rules: usize,
    pub search_rules: usize,
    pub guards: usize,
}

/// Writes the shipped pack `factor` times over into `out` (created; emptied first if it
/// holds a previous pack). `factor` 1 is a plain copy.
pub fn write_pack(shipped: &Path, out: &Path, factor: usize) -> io::Result<Stats> {
    if out.join("zz-generated").exists() {
        std::fs::remove_dir_all(out)?;
    }
    copy_dir(shipped, out)?;
    let mut stats = Stats::default();
    if factor <= 1 {
        return Ok(stats);
    }
    let gen_dir = out.join("zz-generated");
    std::fs::create_dir_all(&gen_dir)?;
    let mut search = std::fs::read_to_string(out.join("search.yaml"))?;
    if !search.ends_with('\n') {
        search.push('\n');
    }
    for k in 1..factor {
        let part = Part::new(k);
        let (text, search_rules) = part.render(&mut stats);
        std::fs::write(gen_dir.join(format!("part-{k:03}.yaml")), text)?;
        search.push_str(&search_rules);
        stats.parts += 1;
    }
    std::fs::write(out.join("search.yaml"), search)?;
    Ok(stats)
}

/// A pack in a fresh temporary directory (kept until the process ends), for benches.
pub fn temp_pack(factor: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("turnout-pack-{factor}x-{}", std::process::id()));
    write_pack(&shipped(), &dir, factor).expect("the generated pack is written");
    dir
}

fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// splitmix64: small, deterministic, good enough to pick letters.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Word starts no Russian word has: every generated stem begins with one.
const ONSETS: &[&str] = &[
    "жв", "щр", "гз", "цл", "фц", "зщ", "хж", "пщ", "чз", "бц", "мж", "дщ", "тц", "шф", "кщ", "вщ",
    "щм", "цб", "жг", "фх",
];
const CONSONANTS: &[&str] = &[
    "б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х", "ц", "ч", "ш",
];
const VOWELS: &[&str] = &["а", "о", "у", "ы", "и", "е", "я", "ю"];

/// The shapes of generated rules refer to shipped lists, skills and tools by these ids.
const SHIPPED_LISTS: &[&str] = &["content_words", "selling_words", "question_marks"];

struct Part {
    k: usize,
    rng: Rng,
    stems: usize,
}

impl Part {
    fn new(k: usize) -> Self {
        Part {
            k,
            rng: Rng(0x7475_726e_6f75_7400 ^ (k as u64).wrapping_mul(0x1000_0001)),
            stems: 0,
        }
    }

    /// A fresh stem: a rare onset and a vowel, then the stem's serial number (part, then
    /// count) spelt as three consonant-vowel syllables. Every stem has nine letters and a
    /// different serial, so no stem of the pack is another's prefix (no redundant entries).
    fn stem(&mut self) -> String {
        assert!(self.stems < 1024, "a part has fewer than 1024 stems");
        let mut serial = self.k * 1024 + self.stems;
        self.stems += 1;
        let mut s = String::new();
        s.push_str(self.rng.pick(ONSETS));
        s.push_str(self.rng.pick(VOWELS));
        let base = CONSONANTS.len() * VOWELS.len();
        let mut syllables = [""; 6];
        for i in (0..3).rev() {
            let digit = serial % base;
            serial /= base;
            syllables[2 * i] = CONSONANTS[digit / VOWELS.len()];
            syllables[2 * i + 1] = VOWELS[digit % VOWELS.len()];
        }
        s.extend(syllables);
        s
    }

    fn list_id(&self, n: usize) -> String {
        format!("gen_{:03}_{n:02}", self.k)
    }

    fn word_list(&mut self, n: usize, out: &mut String, stats: &mut Stats) {
        let id = self.list_id(n);
        let _ = write!(
            out,
            "  - id: {id}\n    description: >-\n      Сгенерированный список для замеров \
             (часть {}, список {n}): случайные основы, которых нет в живой речи.\n    words:\n",
            self.k
        );
        let count = 12 + self.rng.below(23);
        for _ in 0..count {
            let word = match self.rng.below(10) {
                0 | 1 => format!("{} {}", self.stem(), self.stem()),
                2 => format!("{}$", self.stem()),
                _ => self.stem(),
            };
            let _ = writeln!(out, "      - {word}");
        }
        stats.entries += count;
        if n.is_multiple_of(4) {
            let (a, b) = (self.stem(), self.stem());
            let _ = write!(
                out,
                "    patterns:\n      - '\\b{a}(а|ы|у|ой)?\\s+\\d+'\n      - '\\b{b}\\w*\\s+(\\S+\\s+)?{}'\n",
                self.stem()
            );
            stats.entries += 2;
        }
        stats.lists += 1;
    }

    /// The part's file (lists, pre-rules, guards) and its search rules, to append to the
    /// shipped `search.rules`.
    fn render(mut self, stats: &mut Stats) -> (String, String) {
        let k = self.k;
        let mut text = format!(
            "# yaml-language-server: $schema=../../schemas/rules.schema.json\n#\n\
             # Generated by benches/genpack (part {k}): benchmark load, not product rules.\n\n\
             word_lists:\n"
        );
        for n in 0..21 {
            self.word_list(n, &mut text, stats);
        }
        let l = |n: usize| self.list_id(n);
        let desc = |what: &str| {
            format!("    description: Сгенерированное правило для замеров ({what}, часть {k}).\n")
        };

        // Pre-rules: none is implied by a shipped one or by another generated one.
        text.push_str("\npre_rules:\n");
        let pre: [(&str, String, String); 7] = [
            (
                "mentions-not",
                format!(
                    "      all:\n        - mentions: {}\n        - not: {{mentions: {}}}\n",
                    l(0),
                    l(1)
                ),
                prompt_call("image_generate"),
            ),
            (
                "skill-answer",
                format!(
                    "      all:\n        - skill_active: true\n        - assistant_asked: true\n        - shorter_than: 240\n        - mentions: {}\n",
                    l(2)
                ),
                "    then: {skill: active}\n".to_owned(),
            ),
            (
                "open-file",
                format!(
                    "      all:\n        - file_open: true\n        - mentions: {}\n        - any:\n            - open_file_named: true\n            - mentions: {}\n",
                    l(3),
                    l(4)
                ),
                "    then:\n      calls:\n        - tool: doc_edit\n          arguments: {file: \"{open_file}\", instruction: \"{message}\"}\n".to_owned(),
            ),
            (
                "photo",
                format!(
                    "      all:\n        - attachment: {{kind: photo}}\n        - mentions: {}\n",
                    l(5)
                ),
                prompt_call("image_generate"),
            ),
            (
                "either",
                format!(
                    "      all:\n        - longer_than: 10\n        - any:\n            - mentions: {}\n            - mentions: {}\n",
                    l(6),
                    l(7)
                ),
                prompt_call("music_generate"),
            ),
            (
                "no-skill",
                format!(
                    "      all:\n        - longer_than: 20\n        - shorter_than: 400\n        - mentions: {}\n        - not: {{skill_active: true}}\n",
                    l(8)
                ),
                prompt_call("video_generate"),
            ),
            (
                "integration",
                format!(
                    "      all:\n        - integration: google\n        - mentions: {}\n",
                    l(9)
                ),
                "    then:\n      calls:\n        - tool: gmail_search\n          arguments: {query: \"{message}\"}\n".to_owned(),
            ),
        ];
        for (name, when, then) in pre {
            let _ = write!(
                text,
                "  - id: gen-{k:03}-pre-{name}\n{}    when:\n{when}{then}",
                desc("pre-rule")
            );
            stats.pre_rules += 1;
        }

        // Guards, on the tools the shipped guards watch, plus one on every tool.
        text.push_str("\nguards:\n");
        let guards: [(&str, &str, String); 7] = [
            (
                "info",
                "[product_search]",
                format!(
                    "      any:\n        - mentions: {}\n        - mentions: {}\n",
                    l(10),
                    l(11)
                ),
            ),
            (
                "buying",
                "[sell_listing]",
                format!(
                    "      all:\n        - mentions: {}\n        - not: {{mentions: {}}}\n",
                    l(12),
                    SHIPPED_LISTS[1]
                ),
            ),
            (
                "draft",
                "[post_draft, article_draft]",
                // Not `not: content_words`: the shipped guard drops every draft without them.
                format!(
                    "      all:\n        - mentions: {}\n        - mentions: {}\n",
                    l(13),
                    SHIPPED_LISTS[0]
                ),
            ),
            (
                "long",
                "",
                format!(
                    "      all:\n        - longer_than: 300\n        - mentions: {}\n",
                    l(14)
                ),
            ),
            (
                "delete",
                "[metrika_manage]",
                format!(
                    "      all:\n        - argument: {{name: action, one_of: [delete]}}\n        - mentions: {}\n",
                    l(15)
                ),
            ),
            (
                "file",
                "[doc_edit]",
                format!(
                    "      all:\n        - not: {{argument_in_message: file}}\n        - mentions: {}\n",
                    l(16)
                ),
            ),
            (
                "skill",
                "[image_generate, video_generate]",
                format!(
                    "      all:\n        - skill_active: true\n        - mentions: {}\n",
                    l(17)
                ),
            ),
        ];
        for (name, tools, drop_when) in guards {
            let tools = if tools.is_empty() {
                String::new()
            } else {
                format!("    tools: {tools}\n")
            };
            let _ = write!(
                text,
                "  - id: gen-{k:03}-guard-{name}\n{}{tools}    drop_when:\n{drop_when}",
                desc("guard")
            );
            stats.guards += 1;
        }

        // Search rules, appended to the shipped list (indented to sit inside `search.rules`).
        let mut search = String::new();
        let rules: [(&str, String); 3] = [
            ("mentions", format!("      when: {{mentions: {}}}\n", l(18))),
            (
                "long",
                format!(
                    "      when:\n        all:\n          - mentions: {}\n          - longer_than: 15\n",
                    l(19)
                ),
            ),
            (
                "question",
                format!(
                    "      when:\n        all:\n          - mentions: {}\n          - mentions: {}\n          - search_toggle: false\n",
                    SHIPPED_LISTS[2],
                    l(20)
                ),
            ),
        ];
        for (name, when) in rules {
            let _ = write!(
                search,
                "\n    - id: gen-{k:03}-search-{name}\n  {}{when}",
                desc("search rule")
            );
            stats.search_rules += 1;
        }
        (text, search)
    }
}

/// A pre-rule's `then` calling a generation tool with the message as the prompt.
fn prompt_call(tool: &str) -> String {
    format!(
        "    then:\n      calls:\n        - tool: {tool}\n          arguments: {{prompt: \"{{message}}\"}}\n"
    )
}
