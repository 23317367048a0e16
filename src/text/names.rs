//! Open files' names as a person says them.

use super::phrase::find_phrase;
use super::words::is_separator;

/// A file name without its extension (a final `.` and one to five letters or digits).
pub fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, ext))
            if !base.trim().is_empty()
                && (1..=5).contains(&ext.chars().count())
                && ext.chars().all(char::is_alphanumeric) =>
        {
            base
        }
        _ => name,
    }
}

/// A file's base name as the words a person would say: split at separators (`-`, `_`,
/// spaces), where letters meet digits (`Plan2025` → `Plan 2025`) and where a lower-case letter
/// meets a capital (`SalesPlan` → `Sales Plan`). Case is kept; normalise after.
pub fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if is_separator(c) {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let boundary = (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic())
                || (p.is_lowercase() && c.is_uppercase());
            if boundary {
                out.push(' ');
            }
        }
        out.push(c);
        previous = Some(c);
    }
    out.trim_end().to_owned()
}

/// Finds an open file's name (its [`name_words`], normalised and cut to stems) in a message,
/// whose words are split the way names are: at `_` ("in plan_2025" names `Plan_2025`) and
/// where letters meet digits ("in report_q3", "in report q3" name `Report_Q3`, whose words
/// are "report", "q", "3").
pub fn find_name(text: &str, stems: &str) -> Option<(usize, usize)> {
    let boundary = |p: char, c: char| {
        (p.is_alphabetic() && c.is_numeric()) || (p.is_numeric() && c.is_alphabetic())
    };
    let mut chars = text.chars().peekable();
    let mut split = text.contains('_');
    while let (Some(p), Some(&c)) = (chars.next(), chars.peek()) {
        split |= boundary(p, c);
    }
    if !split {
        return find_phrase(text, stems);
    }
    // The message with a space for each `_` and between a letter and a digit; `at[i]` is where
    // byte `i` of the copy was in `text` (one more entry: the end).
    let mut copy = String::with_capacity(text.len() + 8);
    let mut at: Vec<usize> = Vec::with_capacity(text.len() + 9);
    let mut previous: Option<char> = None;
    for (i, c) in text.char_indices() {
        if previous.is_some_and(|p| boundary(p, c)) {
            copy.push(' ');
            at.push(i);
        }
        let c = if c == '_' { ' ' } else { c };
        copy.push(c);
        at.extend(i..i + c.len_utf8());
        previous = Some(c);
    }
    at.push(text.len());
    let (start, end) = find_phrase(&copy, stems)?;
    Some((*at.get(start)?, *at.get(end)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{Normalizer, NormalizerOptions};

    #[test]
    fn a_file_name_splits_where_a_person_hears_words() {
        assert_eq!(name_words("Plan_2025"), "Plan 2025");
        assert_eq!(name_words("SalesPlan2025-v2"), "Sales Plan 2025 v 2");
        assert_eq!(name_words("budget  final"), "budget final");
        assert_eq!(name_words("CV"), "CV");
    }

    #[test]
    fn an_underscore_in_the_message_separates_words_of_a_name() {
        let n = Normalizer::with_options(
            [],
            NormalizerOptions {
                name_endings: 2,
                ..NormalizerOptions::default()
            },
        );
        let stems = n.name_stems(&n.normalize(&name_words("Plan_2025")));
        for message in ["in plan_2025 fix the total", "in plans 2025 fix the total"] {
            assert!(find_name(message, &stems).is_some(), "{message}");
        }
        assert_eq!(find_name("in plan_2025 fix", &stems), Some((3, 12)));
        assert!(find_name("in planets 2024", &stems).is_none());
    }

    #[test]
    fn letters_next_to_digits_in_the_message_are_two_words_as_in_names() {
        let n = Normalizer::default();
        let stems = n.name_stems(&n.normalize(&name_words("Report_Q3")));
        for message in ["add to report_q3 the totals", "add to report q3 the totals"] {
            assert!(find_name(message, &stems).is_some(), "{message}");
        }
        // Offsets are the message's own, around the inserted space.
        assert_eq!(find_name("to report_q3 now", &stems), Some((3, 12)));
        assert_eq!(find_name("to report q3", &stems), Some((3, 12)));
        assert!(find_name("to report q4", &stems).is_none());
    }
}
