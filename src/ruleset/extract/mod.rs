//! Each tool's `extract`, compiled: how the embedded router fills arguments from the message,
//! at request time ([`ArgExtract::fill`]), so the embedded router and any other stage use one
//! implementation. The compiler's pass that builds it is `compile/extract.rs`.

use regex::Regex;
use serde_json::{Map, Value};

mod number;

use crate::rules::ContextValue;
use crate::text::{WordMatcher, word_spans};

/// How one argument is filled, compiled.
#[derive(Debug, Clone)]
pub struct ArgExtract {
    /// The argument's name.
    pub name: String,
    pub(crate) choices: Vec<ChoiceDef>,
    /// Every choice's words in one matcher (one automaton per argument, not per choice).
    pub(crate) words: WordMatcher,
    /// For each entry of `words`: its choice and its text.
    pub(crate) word_entries: Vec<(usize, String)>,
    pub(crate) number: Option<NumberDef>,
    pub(crate) from_context: Option<ContextValue>,
    pub(crate) text: Option<TextDef>,
    pub(crate) default: Option<Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct ChoiceDef {
    pub(crate) value: Value,
    /// The patterns, as written, for the trace.
    pub(crate) entries: Vec<String>,
    pub(crate) patterns: Vec<Regex>,
}

#[derive(Debug, Clone)]
pub(crate) struct NumberDef {
    pub(crate) patterns: Vec<Regex>,
    /// Longest first.
    pub(crate) units: Vec<(String, f64)>,
    /// Numbers written as words, longest stem first.
    pub(crate) words: Vec<NumberWord>,
    /// Normalised words that may join two number words of a run (spaces single).
    pub(crate) joiners: Vec<String>,
    pub(crate) integer: bool,
    /// `number.range`: `(scale, cycle)` for the patterns with `from` and `to` groups.
    pub(crate) range: (f64, Option<f64>),
    /// `number.without_unit`: `(below, times)` for a number matched without a unit.
    pub(crate) without_unit: Option<(f64, f64)>,
    /// `number.before_hundreds`: what a units word right before a hundreds word counts.
    pub(crate) before_hundreds: Option<f64>,
}

/// One number word: a normalised stem (or a whole word) and its value.
#[derive(Debug, Clone)]
pub(crate) struct NumberWord {
    pub(crate) stem: String,
    pub(crate) whole: bool,
    pub(crate) value: f64,
    /// A multiplier that names one of itself (`number.singular`): it counts once at the head
    /// of a run.
    pub(crate) one: bool,
}

/// A word worth this much or more multiplies the number words before it («seven thousand»).
const MULTIPLIER: f64 = 1000.0;

/// Text with its runs of number words written as digits, and the way back to the original's
/// byte offsets.
struct Digits {
    text: String,
    /// `(start in text, end in text, start in the original, end in the original)` of each
    /// rewritten run, in order.
    runs: Vec<(usize, usize, usize, usize)>,
}

impl Digits {
    /// The original's byte offset of a byte offset of the rewritten text (a run maps to its
    /// whole original span).
    fn back(&self, at: usize, end: bool) -> usize {
        let mut shift = 0isize;
        for &(s, e, os, oe) in &self.runs {
            if at < s || (end && at == s) {
                break;
            }
            if at < e || (end && at == e) {
                return if end { oe } else { os };
            }
            shift = oe as isize - e as isize;
        }
        (at as isize + shift).max(0) as usize
    }
}

#[derive(Debug, Clone)]
pub(crate) struct TextDef {
    pub(crate) drop: WordMatcher,
    pub(crate) drop_patterns: Vec<Regex>,
}

/// What an extraction sees of one request.
#[derive(Debug, Clone, Copy)]
pub struct ExtractInput<'a> {
    /// The message as the user wrote it.
    pub original: &'a str,
    /// The message normalised by the rules (same characters, one for one).
    pub normalized: &'a str,
    /// The name of the file open in the interface.
    pub open_file: Option<&'a str>,
}

impl<'a> ExtractInput<'a> {
    /// The words of the original message at these byte offsets of the normalised one
    /// (normalising maps one character to one character; when it did not, the normalised
    /// words).
    pub fn original_of(&self, start: usize, end: usize) -> &'a str {
        let normalized = self.normalized.get(start..end).unwrap_or_default();
        original_slice(self.original, self.normalized, start, end).unwrap_or(normalized)
    }
}

/// The part of `original` at these byte offsets of `normalized`, when the two have the same
/// characters one for one (`None` when they differ in length — a word read through the
/// transliteration table is shorter — or the offsets are not character boundaries of
/// `normalized`).
pub fn original_slice<'a>(
    original: &'a str,
    normalized: &str,
    start: usize,
    end: usize,
) -> Option<&'a str> {
    if original.chars().count() != normalized.chars().count() {
        return None;
    }
    let from = normalized.get(..start)?.chars().count();
    let len = normalized.get(start..end)?.chars().count();
    let mut offsets = original
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(original.len()));
    let s = offsets.nth(from)?;
    let e = if len == 0 { s } else { offsets.nth(len - 1)? };
    original.get(s..e)
}

/// A string value with `$0`, `$1`, `$name` or `${name}` replaced by what those groups matched,
/// in the words of the original message (its capitals kept); `$$` is a `$`.
fn expand(template: &str, captures: &regex::Captures<'_>, input: &ExtractInput<'_>) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(close) => (&braced[..close], &braced[close + 1..]),
                None => ("", after),
            },
            None => {
                let len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..len], &after[len..])
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        let group = match name.parse::<usize>() {
            Ok(i) => captures.get(i),
            Err(_) => captures.name(name),
        };
        if let Some(m) = group {
            out.push_str(input.original_of(m.start(), m.end()));
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A value found for an argument, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    /// The value.
    pub value: Value,
    /// The byte span of the words that gave it, in the normalised message.
    pub span: Option<(usize, usize)>,
    /// Whether free text leaves the span out: a date or a number matched by a pattern is not
    /// part of the text; a word that picked a value (`shoes`, `spreadsheet`) may be.
    pub consumed: bool,
    /// For the trace: which words (or which rule) gave it.
    pub why: String,
}

impl ArgExtract {
    /// Whether this extraction always gives a value (it has a `default`).
    pub fn always_fills(&self) -> bool {
        self.default.is_some()
    }

    /// Whether it fills free text.
    pub fn is_text(&self) -> bool {
        self.text.is_some()
    }

    /// Everything but free text: the first of `choose`, `number`, `from_context` that gives a
    /// value.
    pub fn fill_fixed(&self, input: &ExtractInput<'_>) -> Option<Filled> {
        self.fill_fixed_in(input, &word_spans(input.normalized))
    }

    /// [`fill_fixed`](Self::fill_fixed) with the message's word spans already found (one tool's
    /// arguments share them).
    fn fill_fixed_in(&self, input: &ExtractInput<'_>, spans: &[(u32, u32)]) -> Option<Filled> {
        let text = input.normalized;
        let by_words = self.word_hits(text, spans);
        for (k, choice) in self.choices.iter().enumerate() {
            let hit = by_words
                .iter()
                .find(|h| h.0 == k)
                .map(|&(_, start, end, entry)| {
                    let entry = self
                        .word_entries
                        .get(entry)
                        .map(|e| e.1.clone())
                        .unwrap_or_default();
                    (start, end, entry, None)
                });
            let hit = hit.or_else(|| {
                choice.patterns.iter().enumerate().find_map(|(j, re)| {
                    re.captures(text).and_then(|c| {
                        let m = c.get(0)?;
                        let entry = choice.entries.get(j).cloned().unwrap_or_default();
                        Some((m.start(), m.end(), entry, Some(c)))
                    })
                })
            });
            if let Some((start, end, entry, captures)) = hit {
                let consumed = captures.is_some();
                let value = match (&choice.value, captures) {
                    (Value::String(s), Some(c)) if s.contains('$') => {
                        Value::from(expand(s, &c, input).trim())
                    }
                    (Value::String(s), None) if s.contains('$') => {
                        Value::from(s.replace("$0", input.original_of(start, end)))
                    }
                    (v, _) => v.clone(),
                };
                return Some(Filled {
                    value,
                    span: Some((start, end)),
                    consumed,
                    // Joined rather than `format!`ted: this runs for every argument the
                    // embedded router fills.
                    why: [
                        "choose #",
                        &(k + 1).to_string(),
                        ": '",
                        &entry,
                        "' matched '",
                        &text[start..end],
                        "' at ",
                        &start.to_string(),
                        "..",
                        &end.to_string(),
                    ]
                    .concat(),
                });
            }
        }
        if let Some(number) = &self.number
            && let Some(found) = number.find(text)
        {
            return Some(found);
        }
        match (self.from_context, input.open_file) {
            (Some(ContextValue::OpenFile), Some(name)) if !name.trim().is_empty() => Some(Filled {
                value: Value::from(name),
                span: None,
                consumed: false,
                why: "the name of the open file".into(),
            }),
            _ => None,
        }
    }

    /// Every word hit in `text`: (choice, start, end, entry), in message order, none inside
    /// the whole word of an earlier one.
    fn word_hits(&self, text: &str, spans: &[(u32, u32)]) -> Vec<(usize, usize, usize, usize)> {
        separate_hits(&self.words, text, spans)
            .into_iter()
            .filter_map(|(hit, _)| {
                let &(choice, _) = self.word_entries.get(hit.entry)?;
                Some((choice, hit.start, hit.end, hit.entry))
            })
            .collect()
    }

    /// Free text: the message without the command words and without `taken` (the spans that
    /// filled other arguments).
    pub fn fill_text(&self, input: &ExtractInput<'_>, taken: &[(usize, usize)]) -> Option<Filled> {
        self.fill_text_in(input, taken, &word_spans(input.normalized))
    }

    /// [`fill_text`](Self::fill_text) with the message's word spans already found.
    fn fill_text_in(
        &self,
        input: &ExtractInput<'_>,
        taken: &[(usize, usize)],
        spans: &[(u32, u32)],
    ) -> Option<Filled> {
        let def = self.text.as_ref()?;
        let text = input.normalized;
        let mut cut: Vec<(usize, usize)> = taken.to_vec();
        cut.extend(
            separate_hits(&def.drop, text, spans)
                .into_iter()
                .map(|(_, word)| word),
        );
        for re in &def.drop_patterns {
            cut.extend(re.find_iter(text).map(|m| (m.start(), m.end())));
        }
        let kept = keep_outside(input, &cut);
        if kept.is_empty() {
            return None;
        }
        let dropped = cut.len();
        Some(Filled {
            value: Value::from(kept),
            span: None,
            consumed: false,
            why: format!("the message without {dropped} command or argument span(s)"),
        })
    }

    /// The argument filled on its own, the way [`fill_arguments`] fills it when no other
    /// argument's words are taken out of the message: its words or patterns, else free text,
    /// else its `default`.
    pub fn fill_alone(&self, input: &ExtractInput<'_>) -> Option<Filled> {
        let spans = word_spans(input.normalized);
        self.fill_fixed_in(input, &spans)
            .or_else(|| self.fill_text_in(input, &[], &spans))
            .or_else(|| self.default_value())
    }

    /// The `default`, if any.
    pub fn default_value(&self) -> Option<Filled> {
        self.default.clone().map(|value| Filled {
            value,
            span: None,
            consumed: false,
            why: "default (nothing matched)".into(),
        })
    }
}

/// The hits of `words` in `text` the way a reader takes them: in message order (exact before
/// a typo at the same place, then entry order), each with the whole words it touches, skipping
/// a hit that starts inside an earlier one's words. At most 64.
fn separate_hits(
    words: &WordMatcher,
    text: &str,
    spans: &[(u32, u32)],
) -> Vec<(crate::text::Hit, (usize, usize))> {
    let mut all = Vec::new();
    words.each_hit_in(text, spans, |h| all.push(h));
    all.sort_unstable_by_key(|h| (h.start, h.typo, h.entry, h.end));
    let mut out: Vec<(crate::text::Hit, (usize, usize))> = Vec::new();
    for hit in all {
        if out.last().is_some_and(|(_, (_, e))| hit.start < *e) {
            continue;
        }
        let word = whole_word(text, hit.start, hit.end);
        if word.1 <= word.0 || out.len() >= 64 {
            break;
        }
        out.push((hit, word));
    }
    out
}

/// Widens a byte span to the whole words it touches.
fn whole_word(text: &str, start: usize, end: usize) -> (usize, usize) {
    let is_word = |c: char| crate::text::is_alphanumeric(c) || c == '_' || c == '-';
    let s = text[..start]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(start, |(i, _)| i);
    let e = text[end..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| end + i);
    (s, e)
}

/// The words of the message outside the cut byte spans (of the normalised text), taken from
/// the original so the user's capitals survive, joined by single spaces, without stray
/// punctuation at the ends.
fn keep_outside(input: &ExtractInput<'_>, cut: &[(usize, usize)]) -> String {
    let same_shape = input.original.chars().count() == input.normalized.chars().count();
    let source: Vec<char> = if same_shape {
        input.original.chars().collect()
    } else {
        input.normalized.chars().collect()
    };
    let mut kept = String::new();
    for ((at, _), ch) in input.normalized.char_indices().zip(source) {
        let gone = cut.iter().any(|&(s, e)| at >= s && at < e);
        kept.push(if gone { ' ' } else { ch });
    }
    let words: Vec<&str> = kept
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    words
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric() && !"\"'»)".contains(c))
        .to_owned()
}

/// Fills a tool's arguments the way the embedded router does: declared extractions first
/// (fixed values, then free text without the words they used, then defaults), then schema
/// `default`s of required arguments, then — when the only required argument left is free
/// text — the whole message. Returns the arguments and, per filled argument, why.
pub fn fill_arguments(
    schema: &Value,
    extract: &[ArgExtract],
    input: &ExtractInput<'_>,
) -> (Map<String, Value>, Vec<(String, String)>) {
    let mut arguments = Map::new();
    let mut why = Vec::new();
    let mut taken = Vec::new();
    let spans = word_spans(input.normalized);
    for x in extract.iter().filter(|x| !x.is_text()) {
        if let Some(f) = x.fill_fixed_in(input, &spans) {
            taken.extend(f.span.filter(|_| f.consumed));
            why.push((x.name.clone(), f.why));
            arguments.insert(x.name.clone(), f.value);
        }
    }
    for x in extract.iter().filter(|x| x.is_text()) {
        if let Some(f) = x
            .fill_fixed_in(input, &spans)
            .or_else(|| x.fill_text_in(input, &taken, &spans))
        {
            why.push((x.name.clone(), f.why));
            arguments.insert(x.name.clone(), f.value);
        }
    }
    for x in extract {
        if !arguments.contains_key(&x.name)
            && let Some(f) = x.default_value()
        {
            why.push((x.name.clone(), f.why));
            arguments.insert(x.name.clone(), f.value);
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = properties else {
        return (arguments, why);
    };
    let mut free_text = Vec::new();
    for name in &required {
        let Some(p) = properties.get(*name) else {
            continue;
        };
        if arguments.contains_key(*name) {
            continue;
        }
        if let Some(default) = p.get("default") {
            why.push(((*name).to_owned(), "the schema's default".into()));
            arguments.insert((*name).to_owned(), default.clone());
        } else if is_free_text(p) {
            free_text.push(*name);
        }
    }
    let unfilled = required
        .iter()
        .filter(|n| !arguments.contains_key(**n))
        .count();
    if let [name] = free_text[..]
        && unfilled == 1
    {
        why.push((
            name.to_owned(),
            "the whole message (the only free text)".into(),
        ));
        arguments.insert(name.to_owned(), Value::from(input.original.trim()));
    }
    (arguments, why)
}

/// A string argument with no `enum`, `const`, `pattern` or `format`: any text will do.
pub fn is_free_text(property: &Value) -> bool {
    property.get("type").and_then(Value::as_str) == Some("string")
        && ["enum", "const", "pattern", "format"]
            .iter()
            .all(|k| property.get(*k).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(patterns: &[&str]) -> NumberDef {
        let word = |stem: &str, whole, value| NumberWord {
            stem: stem.into(),
            whole,
            value,
            one: false,
        };
        let mut words = vec![
            word("one", true, 1.0),
            word("seven", false, 7.0),
            word("twenty", false, 20.0),
            word("hundred", false, 100.0),
            word("thousand", false, 1000.0),
        ];
        words.sort_by_key(|w| std::cmp::Reverse(w.stem.len()));
        NumberDef {
            patterns: patterns
                .iter()
                .map(|p| Regex::new(p).expect("re"))
                .collect(),
            units: vec![("thousand".into(), 1000.0)],
            words,
            joiners: vec!["and a".into()],
            integer: false,
            range: (60.0, Some(12.0)),
            without_unit: None,
            before_hundreds: None,
        }
    }

    #[test]
    fn numbers_in_words_are_read_as_digits_and_mapped_back() {
        let n = numbers(&[r"under (?P<number>[0-9]+)(?: (?P<unit>thousand))?"]);
        let text = "boots under seven thousand one hundred please";
        let f = n.find(text).expect("a number");
        assert_eq!(f.value, Value::from(7100));
        let (s, e) = f.span.expect("span");
        assert_eq!(&text[s..e], "under seven thousand one hundred");
        // Digits with a unit word keep the unit for the pattern.
        let f = n.find("boots under 15 thousand").expect("a number");
        assert_eq!(f.value, Value::from(15000));
        // «one» is whole: «ones» is no number; «twenty seven» adds up.
        assert!(n.find("under ones").is_none());
        assert_eq!(
            n.find("under twenty-seven").map(|f| f.value),
            Some(Value::from(27))
        );
    }

    /// A multiplier heading a run is left for the pattern's unit («thousands fifteen» is read
    /// by `(?P<unit>thousand\w*) (?P<number>…)` as 15,000), unless it is a singular one that
    /// names one of itself: «a thousand two hundred» is 1200, not 200 thousand.
    #[test]
    fn a_singular_multiplier_at_a_runs_head_counts_once() {
        let mut n = numbers(&[
            r"(?P<unit>thousand\w*) (?P<number>[0-9]+)",
            r"for (?P<number>[0-9]+)",
        ]);
        n.words.push(NumberWord {
            stem: "thousand".into(),
            whole: true,
            value: 1000.0,
            one: true,
        });
        n.words
            .sort_by_key(|w| (std::cmp::Reverse(w.stem.len()), !w.whole));
        let value = |t: &str| n.find(t).map(|f| f.value);
        assert_eq!(value("for thousand seven hundred"), Some(Value::from(1700)));
        assert_eq!(value("thousands twenty"), Some(Value::from(20000)));
        // Hundreds after any multiplier add to it.
        assert_eq!(
            value("for thousands seven hundred"),
            Some(Value::from(1700))
        );
        // Alone it is still a unit for the patterns.
        assert_eq!(value("thousand 15"), Some(Value::from(15000)));
    }

    /// A pattern whose `number` group is empty reads a unit said alone as one of it: «under a
    /// thousand» is 1,000; without a unit it fills nothing.
    #[test]
    fn a_unit_said_alone_is_one_of_it() {
        let n = numbers(&[
            r"under (?P<number>[0-9]+) ?(?P<unit>thousand\w*)?",
            r"under an? (?P<number>)(?P<unit>thousand\w*)?",
        ]);
        let value = |t: &str| n.find(t).map(|f| f.value);
        assert_eq!(value("under a thousand"), Some(Value::from(1000)));
        assert_eq!(value("under 3 thousand"), Some(Value::from(3000)));
        assert_eq!(value("under a cent"), None);
    }

    /// Two number words add up only when the second is of a lower place: «twenty seven» is 27,
    /// «seven-twenty thousand» is a range (7 and 20 thousand), not 27 thousand, nor is «seven
    /// seven» fourteen.
    #[test]
    fn number_words_of_the_same_place_are_two_numbers() {
        let n = numbers(&[r"to (?P<number>[0-9]+)"]);
        assert_eq!(
            n.find("to twenty-seven").map(|f| f.value),
            Some(Value::from(27))
        );
        assert_eq!(
            n.find("to seven-twenty").map(|f| f.value),
            Some(Value::from(7))
        );
        assert_eq!(
            n.find("to seven seven").map(|f| f.value),
            Some(Value::from(7))
        );
        assert_eq!(
            n.find("to twenty twenty").map(|f| f.value),
            Some(Value::from(20))
        );
        let n = numbers(&[r"-(?P<number>[0-9]+)(?: (?P<unit>thousand))?"]);
        assert_eq!(
            n.find("seven-twenty thousand").map(|f| f.value),
            Some(Value::from(20000))
        );
        // A hundred still counts the number before it, and adds what follows.
        let n = numbers(&[r"to (?P<number>[0-9]+)"]);
        assert_eq!(
            n.find("to seven hundred twenty seven").map(|f| f.value),
            Some(Value::from(727))
        );
    }

    #[test]
    fn a_joiner_keeps_two_number_words_in_one_run() {
        let mut n = numbers(&[r"under (?P<number>[0-9.]+)"]);
        n.words.push(NumberWord {
            stem: "half".into(),
            whole: true,
            value: 0.5,
            one: false,
        });
        let f = n.find("under seven and a half thousand").expect("a number");
        assert_eq!(f.value, Value::from(7500));
        // Not between number words, a joiner is text as any other.
        let f = n.find("under seven and a dog").expect("a number");
        assert_eq!(f.value, Value::from(7));
    }

    #[test]
    fn a_units_word_before_hundreds_counts_as_declared() {
        let word = |stem: &str, value| NumberWord {
            stem: stem.into(),
            whole: true,
            value,
            one: false,
        };
        let mut n = numbers(&[r"for (?P<number>[0-9]+)"]);
        n.words
            .extend([word("three", 3.0), word("fivehundred", 500.0)]);
        n.words
            .sort_by_key(|w| (std::cmp::Reverse(w.stem.len()), !w.whole));
        let value = |n: &NumberDef, text: &str| n.find(text).map(|f| f.value);
        // Undeclared: two numbers, not three times five hundred.
        assert_eq!(value(&n, "for three fivehundred"), Some(Value::from(3)));
        assert_eq!(value(&n, "for seven hundred"), Some(Value::from(700)));
        n.before_hundreds = Some(1000.0);
        assert_eq!(value(&n, "for three fivehundred"), Some(Value::from(3500)));
        // A hundred still counts the number before it; twenty is no units word.
        assert_eq!(value(&n, "for seven hundred"), Some(Value::from(700)));
        assert_eq!(value(&n, "for twenty fivehundred"), Some(Value::from(20)));
        assert_eq!(
            value(&n, "for three thousand fivehundred"),
            Some(Value::from(3500))
        );
    }

    #[test]
    fn a_small_number_without_its_unit_is_scaled() {
        let mut n = numbers(&[r"for (?P<number>[0-9.]+)(?: (?P<unit>thousand))?"]);
        n.without_unit = Some((100.0, 1000.0));
        let value = |text: &str| n.find(text).map(|f| f.value);
        assert_eq!(value("a bike for seven"), Some(Value::from(7000)));
        assert_eq!(value("a bike for 4.5"), Some(Value::from(4500)));
        // Its unit said, or a number as large as `below`: as written.
        assert_eq!(value("a bike for 15 thousand"), Some(Value::from(15000)));
        assert_eq!(value("a bike for 3000"), Some(Value::from(3000)));
        assert_eq!(value("a bike for 100"), Some(Value::from(100)));
        // The currency said (a group named `exact`): as written, however small.
        let mut priced = numbers(&[r"for (?P<number>[0-9.]+)(?: (?P<exact>dollars))?"]);
        priced.without_unit = Some((100.0, 1000.0));
        let value = |text: &str| priced.find(text).map(|f| f.value);
        assert_eq!(value("a pen for 5 dollars"), Some(Value::from(5)));
        assert_eq!(value("a bike for 5"), Some(Value::from(5000)));
    }

    #[test]
    fn a_span_is_the_length_between_its_ends() {
        // The test numbers' range: ends in hours, the value in minutes, a 12-hour face.
        let n = numbers(&[r"from (?P<from>[0-9:.]+) to (?P<to>[0-9:.]+)"]);
        let minutes = |text: &str| n.find(text).map(|f| f.value);
        assert_eq!(minutes("from 14:00 to 15:30"), Some(Value::from(90)));
        assert_eq!(minutes("from 9.45 to 10"), Some(Value::from(15)));
        // Words first: «from seven to twenty» is 13 hours.
        assert_eq!(minutes("from seven to twenty"), Some(Value::from(780)));
        // Said without am or pm, the later end comes round the face.
        assert_eq!(minutes("from 11 to 2"), Some(Value::from(180)));
        // Without a cycle a backward span is no number; minutes past 59 are no time.
        let mut straight = numbers(&[r"from (?P<from>[0-9:]+) to (?P<to>[0-9:]+)"]);
        straight.range = (1.0, None);
        assert_eq!(straight.find("from 11 to 2").map(|f| f.value), None);
        assert_eq!(
            straight.find("from 2 to 11").map(|f| f.value),
            Some(Value::from(9))
        );
        assert_eq!(minutes("from 14:75 to 16"), None);
    }

    #[test]
    fn whole_words_and_kept_text() {
        let text = "write a post about the sea";
        assert_eq!(whole_word(text, 0, 3), (0, "write".len()));
        let input = ExtractInput {
            original: "Write a post about the Sea!",
            normalized: "write a post about the sea!",
            open_file: None,
        };
        let cut = [(0, "write a post".len())];
        assert_eq!(keep_outside(&input, &cut), "about the Sea");
    }
}
