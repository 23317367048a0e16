//! Numbers and amounts read from a message (`extract: {ARG: {number: …}}`).

use serde_json::Value;

use super::{Digits, Filled, MULTIPLIER, NumberDef};

impl NumberDef {
    /// The value of one word, if it is a number word.
    fn word_value(&self, word: &str) -> Option<(f64, bool)> {
        self.words
            .iter()
            .find(|w| {
                if w.whole {
                    word == w.stem
                } else {
                    word.starts_with(&w.stem)
                }
            })
            .map(|w| (w.value, w.one))
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
        // (start, end, value, whether it names one of itself: `number.singular`).
        let mut words: Vec<(usize, usize, f64, bool)> = Vec::new();
        let mut start = None;
        for (i, ch) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            match (crate::text::is_alphanumeric(ch), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if let Some((v, one)) = self.word_value(&text[s..i]) {
                        words.push((s, i, v, one));
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
            // The last number added within the run (not a multiplier): the next must be of a
            // lower place to add to it («twenty five»), else it starts a number of its own
            // («two-three thousand» is a range, not five thousand).
            let mut last = (words[k].2 < MULTIPLIER).then_some(words[k].2);
            while j + 1 < words.len() && self.joins(&text[words[j].1..words[j + 1].0]) {
                let v = words[j + 1].2;
                if v < MULTIPLIER {
                    // «five hundred»: a hundred after a smaller number; «three five-hundred»
                    // (3,500) only where `before_hundreds` says so.
                    let hundreds = v >= 100.0
                        && last.is_some_and(|l| {
                            l < v && (v == 100.0 || (self.before_hundreds.is_some() && l < 10.0))
                        });
                    if !hundreds && last.is_some_and(|l| v >= place(l)) {
                        break;
                    }
                    last = Some(v);
                } else {
                    last = None;
                }
                j += 1;
            }
            let run = &words[k..=j];
            // A multiplier heading a longer run counts once when it is a singular one
            // («thousand two hundred») or hundreds follow it («under thousands five hundred»
            // reads 1500: hundreds after a multiplier are never its count).
            let hundreds_next = (run.iter().skip(1)).any(|w| (100.0..MULTIPLIER).contains(&w.2));
            let lead = if run.len() > 1 && run[0].2 >= MULTIPLIER && (run[0].3 || hundreds_next) {
                0
            } else {
                run.iter().take_while(|w| w.2 >= MULTIPLIER).count()
            };
            if let (Some(first), Some(last)) = (run.get(lead), run.last()) {
                let (mut total, mut current) = (0.0, 0.0);
                for &(_, _, v, _) in &run[lead..] {
                    if v >= MULTIPLIER {
                        total += if current == 0.0 { 1.0 } else { current } * v;
                        current = 0.0;
                    } else if v == 100.0 && current > 0.0 && current < v {
                        // «seven hundred»: a hundred counts the number before it.
                        current *= v;
                    } else if v > 100.0 && current > 0.0 && current < v {
                        // «three five-hundred»: the units word counts `before_hundreds`.
                        total += current * self.before_hundreds.unwrap_or(1.0);
                        current = v;
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

    /// The length of a span from its ends (`number.range`): `to − from` times the scale, the
    /// cycle added to `to` while it is not beyond `from`; `None` for an empty or backward span
    /// without a cycle.
    fn span(&self, from: &str, to: &str) -> Option<f64> {
        let (scale, cycle) = self.range;
        let (from, mut to) = (clock(from)?, clock(to)?);
        if let Some(cycle) = cycle.filter(|&c| c > 0.0) {
            while to <= from {
                to += cycle;
            }
        }
        (to > from).then_some((to - from) * scale)
    }

    pub(super) fn find(&self, original: &str) -> Option<Filled> {
        let digits = self.digits(original);
        let text = digits.as_ref().map_or(original, |d| d.text.as_str());
        let back = |at: usize, end: bool| digits.as_ref().map_or(at, |d| d.back(at, end));
        for re in &self.patterns {
            for c in re.captures_iter(text) {
                let Some(whole) = c.get(0) else {
                    continue;
                };
                let said_unit = c
                    .name("unit")
                    .is_some_and(|u| !u.as_str().trim().is_empty());
                let n = match (c.name("number"), c.name("from"), c.name("to")) {
                    // An empty number before a unit said alone is one of the unit («under a
                    // thousand»: 1,000).
                    (Some(digits), _, _) if digits.as_str().trim().is_empty() => {
                        said_unit.then_some(1.0)
                    }
                    (Some(digits), _, _) => plain(digits.as_str()),
                    (None, Some(from), Some(to)) => self.span(from.as_str(), to.as_str()),
                    _ => None,
                };
                let Some(mut n) = n else {
                    continue;
                };
                // A group named `exact` that matched (the currency said: «95 ₽») says the number
                // is as written, however small.
                let exact = c
                    .name("exact")
                    .is_some_and(|e| !e.as_str().trim().is_empty());
                if let Some((below, times)) = self.without_unit
                    && c.name("number").is_some()
                    && !said_unit
                    && !exact
                    && n > 0.0
                    && n < below
                {
                    n *= times;
                }
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

/// The place of a number's highest digit (1 for 7, 10 for 20 or 15, 100 for 300); 1 below 1.
fn place(n: f64) -> f64 {
    if n < 10.0 {
        1.0
    } else {
        10f64.powi(n.log10().floor() as i32)
    }
}

/// A number as a pattern captured it: spaces dropped («15 000»), a decimal comma read as a
/// point.
fn plain(digits: &str) -> Option<f64> {
    let cleaned: String = digits
        .chars()
        .filter(|ch| !ch.is_whitespace())
        .map(|ch| if ch == ',' { '.' } else { ch })
        .collect();
    cleaned.parse().ok()
}

/// One end of a span: a number, or a clock time whose two digits after `:` or `.` are
/// minutes («15:30», «9.45» → 15.5, 9.75).
fn clock(end: &str) -> Option<f64> {
    let end = end.trim();
    match end.split_once([':', '.']) {
        Some((h, m)) if m.len() == 2 && m.bytes().all(|b| b.is_ascii_digit()) => {
            let (h, m): (f64, f64) = (h.trim().parse().ok()?, m.parse().ok()?);
            (m < 60.0).then_some(h + m / 60.0)
        }
        _ => plain(end),
    }
}
