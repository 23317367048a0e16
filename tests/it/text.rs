//! Word-list matching as product managers rely on it: stems, whole words, phrases with
//! flexible separators, `ё` folding, Cyrillic word boundaries, and refused patterns.

use turnout::text::*;

/// The shipped pack's normalisation: lower case, `ё` read as `е`.
fn norm() -> Normalizer {
    Normalizer::new([('ё', 'е')])
}

fn normalize(text: &str) -> String {
    norm().normalize(text)
}

fn matcher(words: &[&str]) -> WordMatcher {
    let words: Vec<String> = words.iter().map(|s| s.to_string()).collect();
    WordMatcher::new(&words, &[], &norm())
}

#[test]
fn normalisation_keeps_character_count() {
    let s = "ЁЛКА Ёж İstanbul ẞ";
    assert_eq!(normalize(s).chars().count(), s.chars().count());
    assert_eq!(normalize("Ёлка"), "елка");
}

#[test]
fn stem_matches_inflections_at_word_start_only() {
    let m = matcher(&["письм"]);
    assert!(m.is_match(&normalize("Найди ПИСЬМАМИ")));
    assert!(!m.is_match(&normalize("написьмо")));
}

#[test]
fn whole_word_marker() {
    let m = matcher(&["пост$"]);
    assert!(m.is_match("напиши пост"));
    assert!(m.is_match("пост, пожалуйста"));
    assert!(!m.is_match("поставь будильник"));
}

#[test]
fn phrase_words_are_stems_with_flexible_separators() {
    let m = matcher(&["топ 10", "курс доллар"]);
    assert!(m.is_match("топ-10 фильмов"));
    assert!(m.is_match("топ 10 фильмов"));
    assert!(!m.is_match("топ10 фильмов"));
    assert!(m.is_match("курсы долларов на сегодня"));
    assert!(!m.is_match("курс по долларам"));
}

#[test]
fn hit_span_is_in_characters() {
    let m = matcher(&["где куп"]);
    let text = normalize("Где купить запчасти");
    let hit = m.find(&text).expect("matches");
    assert_eq!(hit.char_span(&text), (0, 10));
}

#[test]
fn punctuation_entries_match_anywhere() {
    let m = matcher(&["?"]);
    assert!(m.is_match("как дела?"));
}

#[test]
fn overlapping_first_stems_are_all_tried() {
    // "сколько" is a prefix of the text at the same place as "сколько стоит".
    let m = matcher(&["сколько стоит", "сколько"]);
    let text = "сколько лет";
    assert_eq!(m.find(text).map(|h| h.entry), Some(1));
}

#[test]
fn patterns_run_on_normalised_text() {
    let m = WordMatcher::new(&[], &[r"топ\s*\d+".to_string()], &norm());
    assert!(m.is_match(&normalize("ТОП10 ноутбуков")));
}

#[test]
fn bad_patterns_are_refused() {
    assert!(matches!(
        WordMatcher::compile_pattern("(а"),
        Err(EntryError::Regex(_))
    ));
    assert_eq!(
        WordMatcher::compile_pattern("а*").err(),
        Some(EntryError::MatchesEmpty)
    );
    assert!(WordMatcher::compile_pattern(&"а".repeat(MAX_PATTERN_LEN + 1)).is_err());
    assert!(matches!(
        WordMatcher::compile_pattern(r"\w{1000}\w{1000}"),
        Err(EntryError::Regex(_))
    ));
}

#[test]
fn dollar_only_ends_words() {
    assert_eq!(
        WordMatcher::check_word("по$ст"),
        Err(EntryError::MisplacedDollar)
    );
    assert_eq!(WordMatcher::check_word("  "), Err(EntryError::Empty));
}

#[test]
fn request_phrases() {
    let text = normalize("Добавь строку в таблицу Трафик за май");
    assert!(find_phrase(&text, &normalize("Трафик")).is_some());
    assert!(find_phrase(&text, &normalize("Бюджет 2025")).is_none());
    assert!(find_phrase(&normalize("бюджет-2025 открой"), &normalize("Бюджет 2025")).is_some());
}

#[test]
fn the_fast_normaliser_agrees_with_unicode_lower_casing() {
    // Two-byte characters go through the table, longer ones through the Unicode tables.
    let text = "ПрИвЕт, ЁЖИК! Ǆ ΣΊΣΥΦΟΣ Ⱥ ẞ İ 日本 😀 Straße ÀÉÎ";
    let reference: String = text
        .chars()
        .map(|c| {
            let mut l = c.to_lowercase();
            match (l.next(), l.next()) {
                (Some('ё'), None) => 'е',
                (Some(x), None) => x,
                _ => c,
            }
        })
        .collect();
    assert_eq!(normalize(text), reference);
    assert_eq!(normalize(text).chars().count(), text.chars().count());
}
