//! The value of a rule file, built from the same event walk that finds its spans, so that the
//! file is parsed once instead of twice (parsing was a third of loading the rules).
//!
//! Only what is certain is built here: mappings with scalar keys, sequences, quoted and block
//! scalars (strings), the plain scalars whose meaning cannot be in doubt (strings that start
//! like no number, `null`, `true`, decimal integers and decimals), and an alias as a copy of
//! its anchor's value (as `serde_yaml` replays it). Anything else, such as an explicit tag, a
//! complex key, an anchored or aliased key, or a plain `0x1F` or `1e3`, gives up, and the
//! caller reads the file with `serde_yaml` as before. A test checks every shipped rule
//! file and a list of awkward scalars against `serde_yaml`.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// A collection being built.
enum Partial {
    Seq(Vec<Value>),
    /// The members so far, and the key waiting for its value.
    Map(Map<String, Value>, Option<String>),
}

/// Builds the document's value from its events; see the module docs.
#[derive(Default)]
pub(crate) struct Builder {
    /// Open collections, each with its anchor.
    stack: Vec<(Partial, Option<String>)>,
    /// The value of every anchor seen.
    anchors: HashMap<String, Value>,
    root: Option<Value>,
    /// Something was met that only `serde_yaml` reads for certain.
    gave_up: bool,
}

impl Builder {
    /// The document's value (`Null` for a file with no document); `None` when it gave up.
    pub fn finish(self) -> Option<Value> {
        if self.gave_up || !self.stack.is_empty() {
            return None;
        }
        Some(self.root.unwrap_or(Value::Null))
    }

    /// Stops building: the caller will read the file with `serde_yaml`.
    pub fn give_up(&mut self) {
        self.gave_up = true;
        self.stack.clear();
    }

    /// Whether the next node is a mapping key.
    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some((Partial::Map(_, None), _)))
    }

    /// A scalar: `text` as libyaml read it; `plain` when it was written without quotes and not
    /// as a block.
    /// `anchor` is the scalar's own (`&name`), if it has one.
    pub fn scalar(&mut self, text: &str, plain: bool, anchor: Option<&str>) {
        if self.gave_up {
            return;
        }
        if let Some((Partial::Map(_, key @ None), _)) = self.stack.last_mut() {
            if anchor.is_some() {
                self.give_up();
                return;
            }
            // A key is its text, whatever it looks like (as `serde_yaml` reads a string key).
            *key = Some(text.to_owned());
            return;
        }
        match resolve(text, plain) {
            Some(value) => self.add(value, anchor),
            None => self.give_up(),
        }
    }

    /// An alias (`*name`): a copy of its anchor's value.
    pub fn alias(&mut self, name: &str) {
        if self.gave_up {
            return;
        }
        match self.anchors.get(name) {
            Some(value) if !self.expects_key() => self.add(value.clone(), None),
            _ => self.give_up(),
        }
    }

    pub fn start_seq(&mut self, anchor: Option<&str>) {
        self.start(Partial::Seq(Vec::new()), anchor);
    }

    pub fn start_map(&mut self, anchor: Option<&str>) {
        self.start(Partial::Map(Map::new(), None), anchor);
    }

    fn start(&mut self, partial: Partial, anchor: Option<&str>) {
        if self.gave_up {
            return;
        }
        if self.expects_key() {
            // A complex key: no JSON member can have it.
            self.give_up();
            return;
        }
        self.stack.push((partial, anchor.map(str::to_owned)));
    }

    /// The end of the innermost collection.
    pub fn end(&mut self) {
        if self.gave_up {
            return;
        }
        let (value, anchor) = match self.stack.pop() {
            Some((Partial::Seq(items), anchor)) => (Value::Array(items), anchor),
            Some((Partial::Map(members, None), anchor)) => (Value::Object(members), anchor),
            // A key without a value, or an end with nothing open: not a well-formed document.
            Some((Partial::Map(_, Some(_)), _)) | None => {
                self.give_up();
                return;
            }
        };
        self.add(value, anchor.as_deref());
    }

    /// Adds a finished node to the collection it is in (or makes it the document), and keeps
    /// it under its anchor.
    fn add(&mut self, value: Value, anchor: Option<&str>) {
        if let Some(name) = anchor {
            self.anchors.insert(name.to_owned(), value.clone());
        }
        match self.stack.last_mut() {
            Some((Partial::Seq(items), _)) => items.push(value),
            Some((Partial::Map(members, key), _)) => match key.take() {
                Some(k) => {
                    members.insert(k, value);
                }
                None => self.give_up(),
            },
            None if self.root.is_none() => self.root = Some(value),
            None => self.give_up(),
        }
    }
}

/// What a scalar means, when that is certain; `None` leaves it to `serde_yaml`.
fn resolve(text: &str, plain: bool) -> Option<Value> {
    if !plain {
        return Some(Value::String(text.to_owned()));
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    let first = text.as_bytes()[0];
    // Only a digit, a sign or a dot can start a number (`inf` and `nan` words are not finite,
    // so they stay strings), and a number is written in ASCII letters, digits, signs, dots and
    // underscores only (`3 months` is text).
    let numeric = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_');
    if !matches!(first, b'0'..=b'9' | b'+' | b'-' | b'.') || !text.bytes().all(numeric) {
        return Some(Value::String(text.to_owned()));
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let decimal = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // No leading zeros (a string to `serde_yaml`), no `-0`, and few enough digits to fit.
    if !decimal(whole) || whole.len() > 15 || (whole.len() > 1 && whole.starts_with('0')) {
        return None;
    }
    match fraction {
        None if negative && whole == "0" => None,
        None => {
            let n: u64 = whole.parse().ok()?;
            Some(if negative {
                Value::from(-i64::try_from(n).ok()?)
            } else {
                Value::from(n)
            })
        }
        Some(f) if decimal(f) && f.len() <= 15 => {
            Number::from_f64(text.parse::<f64>().ok()?).map(Value::Number)
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `serde_yaml`'s value of `text`.
    fn reference(text: &str) -> Value {
        use serde::Deserialize;
        match serde_yaml::Deserializer::from_str(text).next() {
            None => Value::Null,
            Some(document) => Value::deserialize(document).expect("serde_yaml reads it"),
        }
    }

    #[test]
    fn awkward_scalars_read_as_serde_yaml_reads_them_or_are_left_to_it() {
        let scalars = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nULL",
            "true",
            "True",
            "TRUE",
            "tRUE",
            "false",
            "False",
            "FALSE",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "Yes",
            "0",
            "1",
            "-1",
            "-0",
            "+1",
            "007",
            "-007",
            "0x1F",
            "0o17",
            "0b101",
            "1_000",
            "1e3",
            "1E3",
            "1.5e3",
            "0.5",
            "-0.5",
            "00.5",
            ".5",
            "5.",
            "1.",
            ".inf",
            "-.inf",
            ".nan",
            "inf",
            "nan",
            "infinity",
            "NaN",
            "12345678901234567890",
            "123456789012345",
            "-123456789012345",
            "1.234567890123456789",
            "1:2",
            "12:30",
            "2026-12-01",
            "1.2.3",
            "- 1",
            "~x",
            "ξ",
            "γεια",
            "πόσο κάνει",
            "a b",
            "#x",
            "@x",
            "`x",
            "%x",
            "€",
            "«quote»",
            "1 2",
            "0.10",
            "3.14159",
            "-3.0",
            "1,5",
            "3 μήνες",
            "5-10 λεπτά",
            "+7 999",
            "1.5 ώρες",
            ".5 δ",
            "2x",
            "0x1F ",
            "1e3 φορές",
        ];
        let mut compared = 0;
        for s in scalars {
            for text in [
                format!("k: {s}\n"),
                format!("- {s}\n"),
                format!("{s}: v\n"),
                format!("k: '{s}'\n"),
                format!("k: \"{s}\"\n"),
                format!("k: |\n  {s}\n"),
            ] {
                let Ok(Some(built)) = build(&text) else {
                    continue;
                };
                assert_eq!(built, reference(&text), "{text:?}");
                compared += 1;
            }
        }
        // Quoted, block and key forms are always built; most plain ones too.
        let plain_built = compared - 4 * scalars.len();
        assert!(plain_built >= scalars.len(), "{compared} compared");
    }

    #[test]
    fn every_shipped_rule_file_and_lint_fixture_is_read_as_serde_yaml_reads_it() {
        fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    found.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        walk(&root.join("rules"), &mut files);
        walk(&root.join("tests/lint"), &mut files);
        let mut built = 0;
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let expected = serde_yaml::Deserializer::from_str(&text)
                .next()
                .map(|d| <Value as serde::Deserialize>::deserialize(d).ok());
            let Ok(Some(value)) = build(&text) else {
                continue;
            };
            match expected {
                None => assert_eq!(value, Value::Null, "{}", path.display()),
                Some(expected) => assert_eq!(Some(value), expected, "{}", path.display()),
            }
            built += 1;
        }
        // Every shipped file is built here, not left to `serde_yaml`.
        assert!(
            built >= 17 && built * 10 >= files.len() * 9,
            "{built} of {}",
            files.len()
        );
    }

    #[test]
    fn mutated_rule_files_are_built_as_serde_yaml_reads_them_or_left_to_it() {
        // Seeded xorshift: the same mutations everywhere.
        let mut state = 0x5EED_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let pieces = [
            "'", "\"", ": ", "- ", "[", "]", "{", "}", "&a ", "*a", "~", "0x1F", "1e3", "007",
            "-0", "0.5", "true", "null", " #", "\n", "  ", "|\n  ", "? ", ",", "ξ",
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
        let (mut built, mut tried) = (0, 0);
        for entry in std::fs::read_dir(root).expect("rules/").flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            for _ in 0..60 {
                let mut mutated = text.clone();
                for _ in 0..1 + next(3) {
                    let mut at = next(mutated.len() + 1);
                    while !mutated.is_char_boundary(at) {
                        at -= 1;
                    }
                    mutated.insert_str(at, pieces[next(pieces.len())]);
                }
                tried += 1;
                let Ok(Some(value)) = build(&mutated) else {
                    continue;
                };
                // What is built here must be exactly what serde_yaml reads, and serde_yaml
                // must read it (else a broken file would pass).
                let expected = serde_yaml::Deserializer::from_str(&mutated)
                    .next()
                    .map(<Value as serde::Deserialize>::deserialize);
                match expected {
                    None => assert_eq!(value, Value::Null),
                    Some(Ok(expected)) => assert_eq!(value, expected, "{mutated}"),
                    Some(Err(e)) => panic!("serde_yaml refuses what was built: {e}\n{mutated}"),
                }
                built += 1;
            }
        }
        assert!(
            built * 2 >= tried,
            "only {built} of {tried} mutated files were built"
        );
    }

    #[test]
    fn an_alias_is_a_copy_of_its_anchors_value() {
        for text in [
            "k: &a [1, x, {y: 2}]\nj: *a\n",
            "- &a 0.5\n- *a\n- [*a, *a]\n",
            "k: &a\n  - &b q\n  - *b\nj: *a\n",
        ] {
            assert_eq!(build(text), Ok(Some(reference(text))), "{text:?}");
        }
    }

    #[test]
    fn a_merge_key_is_refused_not_built() {
        // Rule files refuse merge keys (`merge-key`) rather than take them as a key named '<<'.
        let refused = build("k: &a {y: 2}\nj:\n  <<: *a\n  z: 3\n");
        assert!(
            refused.as_ref().is_err_and(|e| e.starts_with("MergeKey")),
            "{refused:?}"
        );
    }

    #[test]
    fn what_is_not_certain_is_left_to_serde_yaml() {
        for text in [
            "k: 0x1F\n",
            "k: 1e3\n",
            "&a k: 1\nj: *a\n",
            "k: &a 1\n*a : 2\n",
            "k: !!str 1\n",
            "? [a, b]\n: c\n",
        ] {
            assert_eq!(build(text), Ok(None), "{text:?}");
        }
    }

    /// The value of `text` built from the span walk's events.
    fn build(text: &str) -> Result<Option<Value>, String> {
        super::super::spans::SpanMap::build_with_value(text, 64)
            .map(|(_, value)| value)
            .map_err(|stop| format!("{stop:?}"))
    }
}
