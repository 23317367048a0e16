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

/// Finds an open file's name (its [`name_words`], normalised and cut to stems) in a message:
/// `_` in the message separates words as it does in names ("in plan_2025" names `Plan_2025`).
pub fn find_name(text: &str, stems: &str) -> Option<(usize, usize)> {
    if text.contains('_') {
        // One byte for one: offsets in the copy are offsets in `text`.
        find_phrase(&text.replace('_', " "), stems)
    } else {
        find_phrase(text, stems)
    }
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
}
