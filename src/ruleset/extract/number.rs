//! Numbers and amounts read from a message (`extract: {ARG: {number: …}}`).

use serde_json::Value;

use super::{Digits, Filled, MULTIPLIER, NumberDef};

impl NumberDef {
    /// The value of one word, if it is a number word.
    fn word_value(&self, word: &str) -> Option<f64> {
        self.words
            .iter()
            .find(|w| {
                if w.whole {
                    word == w.stem
                } else {
                    word.starts_with(&w.stem)
                }
            })
            .map(|w| w.value)
    }

    /// Whether `gap` (the text between two number words) keeps them in one run: spaces or
    /// hyphens only, or a joiner between spaces («seven and a half»).
    fn joins(&self, gap: &str) -> bool {
        if gap.chars().all(|c| c == ' ' || c == '-') {
            return true;
        }
        let words: Vec<&str> = gap.split_whitespace().collect();
        !words.is_empty()
            && gap.starts_with(' ')
            && gap.ends_with(' ')
            && self
                .joiners
                .iter()
                .any(|j| j.split(' ').eq(words.iter().copied()))
    }

    /// `text` with each run of number words (separated by spaces or hyphens only) written as
    /// one number; `None` when it has none. A run's leading multipliers are left as they are,
    /// so «15 thousand» keeps its unit for the patterns.
    fn digits(&self, text: &str) -> Option<Digits> {
        if self.words.is_empty() {
            return None;
        }
        let mut words: Vec<(usize, usize, f64)> = Vec::new();
        let mut start = None;
        for (i, ch) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            match (crate::text::is_alphanumeric(ch), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if let Some(v) = self.word_value(&text[s..i]) {
                        words.push((s, i, v));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        let mut runs: Vec<(usize, usize, f64)> = Vec::new();
        let mut k = 0;
        while k < words.len() {
            let mut j = k;
            while j + 1 < words.len() && self.joins(&text[words[j].1..words[j + 1].0]) {
                j += 1;
            }
            let run = &words[k..=j];
            let lead = run.iter().take_while(|w| w.2 >= MULTIPLIER).count();
            if let (Some(first), Some(last)) = (run.get(lead), run.last()) {
                let (mut total, mut current) = (0.0, 0.0);
                for &(_, _, v) in &run[lead..] {
                    if v >= MULTIPLIER {
                        total += if current == 0.0 { 1.0 } else { current } * v;
                        current = 0.0;
                    } else if v >= 100.0 && current > 0.0 && current < v {
                        // «seven hundred»: a hundred counts the number before it.
                        current *= v;
                    } else {
                        current += v;
                    }
                }
                runs.push((first.0, last.1, total + current));
            }
            k = j + 1;
        }
        if runs.is_empty() {
            return None;
        }
        let mut out = Digits {
            text: String::with_capacity(text.len()),
            runs: Vec::with_capacity(runs.len()),
        };
        let mut from = 0;
        for (s, e, v) in runs {
            out.text.push_str(&text[from..s]);
            let at = out.text.len();
            out.text.push_str(&v.to_string());
            out.runs.push((at, out.text.len(), s, e));
            from = e;
        }
        out.text.push_str(&text[from..]);
        Some(out)
    }

    pub(super) fn find(&self, original: &str) -> Option<Filled> {
        let digits = self.digits(original);
        let text = digits.as_ref().map_or(original, |d| d.text.as_str());
        let back = |at: usize, end: bool| digits.as_ref().map_or(at, |d| d.back(at, end));
        for re in &self.patterns {
            for c in re.captures_iter(text) {
                let (Some(whole), Some(digits)) = (c.get(0), c.name("number")) else {
                    continue;
                };
                let cleaned: String = digits
                    .as_str()
                    .chars()
                    .filter(|ch| !ch.is_whitespace())
                    .map(|ch| if ch == ',' { '.' } else { ch })
                    .collect();
                let Ok(mut n) = cleaned.parse::<f64>() else {
                    continue;
                };
                if let Some(unit) = c.name("unit") {
                    let unit = unit.as_str().trim();
                    if let Some((_, m)) = self.units.iter().find(|(k, _)| unit.starts_with(k)) {
                        n *= m;
                    }
                }
                let value = if self.integer || n.fract() == 0.0 {
                    Value::from(n.round() as i64)
                } else {
                    Value::from(n)
                };
                let (start, end) = (back(whole.start(), false), back(whole.end(), true));
                let said = original.get(start..end).unwrap_or_default();
                let read = if said == whole.as_str() {
                    String::new()
                } else {
                    format!(" (read as '{}')", whole.as_str())
                };
                return Some(Filled {
                    value,
                    span: Some((start, end)),
                    consumed: true,
                    why: format!("number from '{said}'{read} at {start}..{end}"),
                });
            }
        }
        None
    }
}
