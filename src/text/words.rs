//! What a word is: the word characters (one table lookup below `TABLE_LEN`), the words of a
//! text and their lengths. Every matcher of the folder finds boundaries through these.

/// Characters below this are lower-cased and folded by one table lookup (Latin, Greek,
/// Cyrillic, Armenian, Hebrew, Arabic); above it, by the Unicode tables. The word table below
/// and the normalizer's share it.
pub(super) const TABLE_LEN: usize = 0x800;

/// A word character for boundary checks.
pub(crate) fn is_word(c: char) -> bool {
    word_table()
        .get(c as usize)
        .copied()
        .unwrap_or_else(|| c.is_alphanumeric() || c == '_')
}

/// `char::is_alphanumeric` through the same table (whose only other word character is `_`):
/// the standard one searches the Unicode tables for every non-ASCII character.
pub(crate) fn is_alphanumeric(c: char) -> bool {
    c != '_' && is_word(c)
}

/// Whether each of the first code points is a word character, computed once: `is_alphanumeric`
/// searches the Unicode tables for every non-ASCII character, and boundaries are checked often.
pub(super) fn word_table() -> &'static [bool; TABLE_LEN] {
    static TABLE: std::sync::OnceLock<Box<[bool; TABLE_LEN]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([false; TABLE_LEN]);
        for (u, slot) in (0u32..).zip(table.iter_mut()) {
            *slot = char::from_u32(u).is_some_and(|c| c.is_alphanumeric() || c == '_');
        }
        table
    })
}

/// Whether the character at byte `i` of `text` (a char boundary) is a word character, and its
/// length; `None` at the end. Two-byte characters (Cyrillic) are decoded by hand.
#[inline]
pub(super) fn char_at(table: &[bool; TABLE_LEN], text: &str, i: usize) -> Option<(bool, usize)> {
    let bytes = text.as_bytes();
    let b = *bytes.get(i)?;
    Some(if b < 0x80 {
        (table[usize::from(b)], 1)
    } else if let (0xC2..=0xDF, Some(&next)) = (b, bytes.get(i + 1)) {
        (
            table[(usize::from(b & 0x1F) << 6) | usize::from(next & 0x3F)],
            2,
        )
    } else {
        let c = text[i..].chars().next()?;
        (is_word(c), c.len_utf8())
    })
}

/// Calls `f` with the byte offset of every word start in `text` until it returns `true`.
pub(super) fn each_word_start(text: &str, mut f: impl FnMut(usize) -> bool) -> bool {
    let table = word_table();
    let mut previous_is_word = false;
    let mut i = 0;
    while let Some((word, len)) = char_at(table, text, i) {
        if word && !previous_is_word && f(i) {
            return true;
        }
        previous_is_word = word;
        i += len;
    }
    false
}

/// The byte span (start, end) of every word of `text`, in order: one walk over the characters
/// (finding each start and then measuring its word read every word twice).
pub(crate) fn word_spans(text: &str) -> Vec<(u32, u32)> {
    let table = word_table();
    let at = |k: usize| u32::try_from(k).unwrap_or(u32::MAX);
    let mut spans = Vec::new();
    let mut start = None;
    let mut i = 0;
    while let Some((word, len)) = char_at(table, text, i) {
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((at(s), at(i)));
                start = None;
            }
            _ => {}
        }
        i += len;
    }
    if let Some(s) = start {
        spans.push((at(s), at(i)));
    }
    spans
}

/// `words` without the words inside an e-mail address or a link (a run of non-space characters
/// with `@`, `://` or a leading `www.`): «buh@selenga-drive.ru» is one address, not the words
/// «buh», «selenga», «drive» and «ru» that a word list could take for a name or a service.
/// Patterns still see the text whole, so a list pattern can match the address itself.
pub(crate) fn drop_address_words(text: &str, words: &mut Vec<(u32, u32)>) {
    if !text.contains('@') && !text.contains("://") && !text.contains("www.") {
        return;
    }
    let mut addresses = Vec::new();
    let mut at = 0;
    for token in text.split(char::is_whitespace) {
        let (start, end) = (at, at + token.len());
        at = end + text[end..].chars().next().map_or(0, char::len_utf8);
        if token.contains('@') || token.contains("://") || token.starts_with("www.") {
            addresses.push((start, end));
        }
    }
    words.retain(|&(s, e)| {
        !addresses
            .iter()
            .any(|&(a, b)| s as usize >= a && e as usize <= b)
    });
}

/// How many characters `s` has: the standard count's set-up costs more than the count for the
/// short strings (a word, a part of one) of the hot path.
#[inline]
pub(crate) fn char_len(s: &str) -> usize {
    // Every byte but a UTF-8 continuation byte (0b10xx_xxxx) starts a character.
    s.bytes().filter(|&b| (b as i8) >= -0x40).count()
}

/// Length in bytes of the run of word characters at the start of `text`.
pub(super) fn word_len(text: &str) -> usize {
    let table = word_table();
    let mut i = 0;
    while let Some((true, len)) = char_at(table, text, i) {
        i += len;
    }
    i
}

/// Characters allowed between the words of a phrase entry.
pub(super) fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '‐' | '‑' | '–' | '—' | '_')
}

#[cfg(test)]
mod tests {
    #[test]
    fn word_spans_are_the_runs_of_word_characters() {
        // Greek: two-byte letters, as most of the pack's are.
        let text = "«Γειά», world_2 -- ΐκαρ!";
        let words: Vec<&str> = super::word_spans(text)
            .iter()
            .map(|&(s, e)| &text[s as usize..e as usize])
            .collect();
        assert_eq!(words, ["Γειά", "world_2", "ΐκαρ"]);
        assert!(super::word_spans(" ,. ").is_empty());
        let text = "send to buh@selenga-drive.ru and see https://drive.example/x now";
        let mut words = super::word_spans(text);
        super::drop_address_words(text, &mut words);
        let kept: Vec<&str> = words
            .iter()
            .map(|&(s, e)| &text[s as usize..e as usize])
            .collect();
        assert_eq!(kept, ["send", "to", "and", "see", "now"]);
        assert_eq!(super::word_spans("λόγος"), [(0, 10)]);
    }

    #[test]
    fn the_tabled_alphanumeric_test_is_the_standard_one() {
        // Every code point below and well past the table's end, and the word character that is
        // not alphanumeric.
        for u in (0u32..0x3_0000).chain([0x1_F600, 0x10_FFFF]) {
            if let Some(c) = char::from_u32(u) {
                assert_eq!(super::is_alphanumeric(c), c.is_alphanumeric(), "U+{u:04X}");
            }
        }
        assert!(super::is_word('_') && !super::is_alphanumeric('_'));
    }
}
