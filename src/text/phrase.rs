//! One `words` entry: a phrase of stems, each matched at a word start, with `$` for a whole
//! word, `*` for any word that starts with the stem, and `…` for a gap of a few other words
//! between two of them. When the language declares its endings, a stem without a mark matches
//! the word in its forms: the stem and one allowed ending.

use super::entry::EntryError;
pub(super) use super::words::word_len;
use super::words::{is_separator, is_word};

/// The token that allows other words between two words of an entry (`...` is read the same).
pub const GAP: &str = "…";
/// The token that lets the words of an entry stand in any order (with a gap between them).
pub const ANY_ORDER: &str = "&";
/// Most words an `&` entry may have (their orders are all compiled: 3 words are 6 phrases).
pub const MAX_ANY_ORDER_WORDS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub stem: String,
    /// `stem$`: the word must end with the stem.
    pub whole: bool,
    /// How many other words may stand before this one (0: only separators).
    pub gap_before: usize,
    /// Whether this word may be matched with one letter wrong, missing or extra.
    pub fuzzy: bool,
    /// Whether that letter may be its first one.
    pub typo_first: bool,
    /// The word must be the stem and one of the language's endings (an unmarked stem when
    /// the language declares them); otherwise any word that starts with the stem.
    pub forms: bool,
    /// Whether the stem ends with a word character (then the rest of the word is skipped).
    pub ends_in_word: bool,
    /// Whether the stem starts with a word character (then it is found only at a word start).
    pub starts_in_word: bool,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Phrase {
    pub words: Vec<Word>,
    /// A variant of its entry that stands for one slip of typing (words glued or split one
    /// letter off, the first letter missing or swapped with the second): its match is a typo.
    pub slip: bool,
}

/// A normalised text with the byte span of each of its words (runs of word characters), so
/// that where a word ends is looked up, not read again letter by letter.
#[derive(Debug, Clone, Copy)]
pub(super) struct Words<'a> {
    pub text: &'a str,
    spans: &'a [(u32, u32)],
    endings: Option<&'a super::Endings>,
}

impl<'a> Words<'a> {
    /// `spans` must be the words of `text`, in order ([`super::word_spans`]).
    pub fn new(text: &'a str, spans: &'a [(u32, u32)]) -> Self {
        Self {
            text,
            spans,
            endings: None,
        }
    }

    /// The same words, matched with the language's endings.
    pub fn with_endings(mut self, endings: Option<&'a super::Endings>) -> Self {
        self.endings = endings;
        self
    }

    /// Whether `rest`, what follows word `w`'s stem to the end of its word, lets it match.
    pub fn ending_fits(&self, w: &Word, rest: &str) -> bool {
        if rest.is_empty() || !w.ends_in_word {
            return true;
        }
        if w.whole {
            return false;
        }
        !w.forms || self.endings.is_some_and(|e| e.allows(rest))
    }

    /// Whether `rest`, what follows word `w`'s stem read with a typo, lets it match: a typo is
    /// read in the word's forms only, even for a stem that starts any word (`*`), so that a
    /// longer word one letter off a stem is not taken for it ("trimmer" is no `prim*` read with a typo).
    pub fn typo_ending_fits(&self, w: &Word, rest: &str) -> bool {
        if rest.is_empty() || !w.ends_in_word {
            return true;
        }
        !w.whole && self.endings.is_none_or(|e| e.allows(rest))
    }

    /// How many bytes of word characters follow `pos`: the rest of the word `pos` is in.
    pub fn rest_of_word(&self, pos: usize) -> usize {
        self.around(pos).1
    }

    /// The index of the first word that starts after `pos`, and [`rest_of_word`](Self::rest_of_word).
    fn around(&self, pos: usize) -> (usize, usize) {
        let after = self.spans.partition_point(|&(s, _)| s as usize <= pos);
        let rest = match after.checked_sub(1).map(|k| self.spans[k]) {
            Some((_, end)) if pos < end as usize => end as usize - pos,
            _ => 0,
        };
        (after, rest)
    }
}

/// From how many letters a stem of a typo-tolerant list tolerates one typo, and one of its
/// first letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TypoLengths {
    pub from: usize,
    pub first_letter_from: usize,
}

/// Parses an entry (already normalised). `gap` is how many words a `…` allows; `typos` the
/// lengths in letters from which a stem tolerates one typo (`None`: never); `forms` whether an
/// unmarked stem matches the word in its forms (the language declares endings).
pub(super) fn parse_phrase(
    entry: &str,
    gap: usize,
    typos: Option<TypoLengths>,
    forms: bool,
) -> Result<Phrase, EntryError> {
    let mut words: Vec<Word> = Vec::new();
    let mut pending_gap = 0;
    for raw in entry.split_whitespace() {
        if raw == GAP || raw == "..." {
            if words.is_empty() {
                return Err(EntryError::MisplacedGap);
            }
            pending_gap = gap;
            continue;
        }
        let (stem, whole, starts) = match (raw.strip_suffix('$'), raw.strip_suffix('*')) {
            (Some(s), _) => (s, true, false),
            (None, Some(s)) => (s, false, true),
            (None, None) => (raw, false, false),
        };
        if stem.is_empty() || stem.contains('$') {
            return Err(EntryError::MisplacedDollar);
        }
        if stem.contains('*') {
            return Err(EntryError::MisplacedStar);
        }
        let letters = stem.chars().filter(|&c| is_word(c)).count();
        words.push(Word {
            stem: stem.to_owned(),
            whole,
            gap_before: std::mem::take(&mut pending_gap),
            fuzzy: typos.is_some_and(|t| letters >= t.from),
            typo_first: typos.is_some_and(|t| letters >= t.from.max(t.first_letter_from)),
            forms: forms && !whole && !starts,
            ends_in_word: stem.chars().next_back().is_some_and(is_word),
            starts_in_word: stem.chars().next().is_some_and(is_word),
        });
    }
    if pending_gap > 0 {
        return Err(EntryError::MisplacedGap);
    }
    if words.is_empty() {
        return Err(EntryError::Empty);
    }
    Ok(Phrase { words, slip: false })
}

/// An entry and the phrases it stands for. `rate & dollar` is both orders with a gap between
/// ("dollar, what rate", "rate of the dollar"); in a typo-tolerant list (`typos`), a phrase
/// of two words of four letters or more also stands for them glued ("whatprice") and split one
/// letter off ("wha tprice", "whatp rice"). (A first letter missing or swapped is a typo like
/// any other: the typo index finds it.)
pub(super) fn parse_variants(
    entry: &str,
    gap: usize,
    typos: Option<TypoLengths>,
    forms: bool,
) -> Result<Vec<Phrase>, EntryError> {
    let parts: Vec<&str> = entry.split_whitespace().collect();
    if parts.contains(&ANY_ORDER) {
        let words: Vec<&str> = parts.iter().copied().filter(|w| *w != ANY_ORDER).collect();
        // Words at the even places, `&` at the odd ones (checked after the count: an entry of
        // `&` alone has no words).
        let shape_ok = (2..=MAX_ANY_ORDER_WORDS).contains(&words.len())
            && parts.len() == 2 * words.len() - 1
            && parts.iter().skip(1).step_by(2).all(|w| *w == ANY_ORDER);
        if !shape_ok {
            return Err(EntryError::MisplacedAnyOrder);
        }
        let mut out = Vec::new();
        for order in permutations(words.len()) {
            let text: Vec<&str> = order.iter().map(|&k| words[k]).collect();
            out.push(parse_phrase(&text.join(" … "), gap.max(1), typos, forms)?);
        }
        return Ok(out);
    }
    let phrase = parse_phrase(entry, gap, typos, forms)?;
    let mut out = vec![phrase];
    if typos.is_some() {
        out.extend(glued_and_split(&out[0]));
    }
    Ok(out)
}

/// Every order of `n` items (n ≤ 3).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for _ in 0..n {
        all = all
            .into_iter()
            .flat_map(|p: Vec<usize>| {
                (0..n)
                    .filter(|k| !p.contains(k))
                    .map(|k| {
                        let mut q = p.clone();
                        q.push(k);
                        q
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    all
}

/// A phrase of two words of letters, four or more each, standing next to each other: glued
/// into one word, and split one letter too early or too late. A variant's moved boundary is
/// its one slip, so its words take no further typo; the first part of a split is whole.
fn glued_and_split(p: &Phrase) -> Vec<Phrase> {
    let [a, b] = p.words.as_slice() else {
        return Vec::new();
    };
    let letters = |w: &Word| w.stem.chars().count() >= 4 && w.stem.chars().all(is_word);
    if b.gap_before > 0 || a.whole || !letters(a) || !letters(b) {
        return Vec::new();
    }
    let word = |stem: String, like: &Word, whole: bool| Word {
        stem,
        whole,
        gap_before: 0,
        fuzzy: false,
        typo_first: false,
        forms: like.forms && !whole,
        ends_in_word: true,
        starts_in_word: true,
    };
    let mut a_chars: Vec<char> = a.stem.chars().collect();
    let mut b_chars: Vec<char> = b.stem.chars().collect();
    let glued = Phrase {
        words: vec![word(format!("{}{}", a.stem, b.stem), b, b.whole)],
        slip: true,
    };
    let mut out = vec![glued];
    // One letter too early: "wha tprice".
    if let Some(last) = a_chars.pop() {
        let first: String = a_chars.iter().collect();
        let second: String = std::iter::once(last).chain(b.stem.chars()).collect();
        out.push(Phrase {
            words: vec![word(first, a, true), word(second, b, b.whole)],
            slip: true,
        });
    }
    // One letter too late: "whatp rice".
    if !b_chars.is_empty() {
        let moved = b_chars.remove(0);
        let first: String = a.stem.chars().chain(std::iter::once(moved)).collect();
        let second: String = b_chars.iter().collect();
        out.push(Phrase {
            words: vec![word(first, a, true), word(second, b, b.whole)],
            slip: true,
        });
    }
    out
}

/// A phrase from request data: `$` and `…` have no special meaning, and every word is a stem.
pub(super) fn parse_phrase_literal(entry: &str) -> Option<Phrase> {
    let words: Vec<Word> = entry
        .split(is_separator)
        .filter(|w| !w.is_empty())
        .map(|w| Word {
            stem: w.to_owned(),
            whole: false,
            gap_before: 0,
            fuzzy: false,
            typo_first: false,
            forms: false,
            ends_in_word: w.chars().next_back().is_some_and(is_word),
            starts_in_word: w.chars().next().is_some_and(is_word),
        })
        .collect();
    (!words.is_empty()).then_some(Phrase { words, slip: false })
}

/// Whether the entry `general` matches wherever `specific` does (both normalised, parsed the
/// same way), so that `specific` adds nothing to a list holding both: `mail` covers `mailbox`
/// and `mail$`, `reply to` covers `reply to mail`. Entries with gaps or typo tolerance are
/// never called redundant (the answer would need more than a word-by-word comparison).
pub(super) fn covers(a: &Phrase, b: &Phrase) -> bool {
    if a.words.len() > b.words.len()
        || a.words
            .iter()
            .chain(&b.words)
            .any(|w| w.gap_before > 0 || w.fuzzy)
    {
        return false;
    }
    let last = a.words.len() - 1;
    a.words.iter().zip(&b.words).enumerate().all(|(i, (x, y))| {
        let Some(rest) = y.stem.strip_prefix(x.stem.as_str()) else {
            return false;
        };
        if x.whole {
            return rest.is_empty() && y.whole;
        }
        // A word in its forms covers only the same stem, in its forms or whole.
        if x.forms {
            return rest.is_empty() && (y.forms || y.whole);
        }
        // Past a word that is not the phrase's last, the matcher only skips the rest of a
        // word (letters, digits), then a separator.
        let ends_in_word = x.stem.chars().next_back().is_some_and(is_word);
        i == last || rest.is_empty() || (ends_in_word && rest.chars().all(is_word))
    })
}

/// Finds `needle` (a phrase of stems, e.g. a file name, normalised) in `text` (normalised).
/// Used for values that come with the request, so nothing is precompiled.
pub fn find_phrase(text: &str, needle: &str) -> Option<(usize, usize)> {
    let phrase = parse_phrase_literal(needle)?;
    let first = &phrase.words[0].stem;
    let spans = super::word_spans(text);
    let words = Words::new(text, &spans);
    let mut from = 0;
    while let Some(pos) = text[from..].find(first.as_str()) {
        let start = from + pos;
        if starts_word(text, start, &phrase)
            && let Some(end) = match_rest(&words, start, &phrase, 0, first.len(), false)
        {
            return Some((start, end));
        }
        from = start + first.chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn starts_word(text: &str, start: usize, phrase: &Phrase) -> bool {
    let first_is_word = phrase
        .words
        .first()
        .and_then(|w| w.stem.chars().next())
        .is_some_and(is_word);
    !first_is_word || !text[..start].chars().next_back().is_some_and(is_word)
}

/// The phrase's first word was found at `start..start + len` (`typo`: with one letter wrong);
/// checks it ends well, then the other words one by one. Returns the end of the last word.
pub(super) fn match_rest(
    words: &Words<'_>,
    start: usize,
    phrase: &Phrase,
    word: usize,
    len: usize,
    typo: bool,
) -> Option<usize> {
    let w = phrase.words.get(word)?;
    let mut pos = start + len;
    // The words that start after `pos`, and the rest of the one `pos` is in.
    let (after, rest_of_word) = words.around(pos);
    if !words.ending_fits(w, words.text.get(pos..pos + rest_of_word)?) {
        return None;
    }
    if w.ends_in_word {
        pos += rest_of_word;
    }
    let Some(next) = phrase.words.get(word + 1) else {
        return Some(pos);
    };
    if !next.starts_in_word {
        return match_after_separators(words, pos, phrase, word + 1, typo);
    }
    // A stem that starts with a word character can only be found where a word starts: at one
    // of the next words, up to `gap_before` of them skipped.
    let text = words.text;
    // A word that does not start with the stem's first letter is passed over before anything
    // else is checked (the whole letter: the first byte of a Cyrillic one is shared by half the
    // alphabet). One whose first letter may be the typo must have the stem's first or second
    // letter among its own first two.
    let mut stem_letters = next.stem.chars();
    let first = stem_letters.next();
    let second = stem_letters
        .next()
        .filter(|_| next.fuzzy && next.typo_first && !typo);
    for k in after..=after + next.gap_before {
        let &(s, e) = words.spans.get(k)?;
        let s = s as usize;
        // The words must stand apart.
        if s <= pos {
            return None;
        }
        // Compared as a decoded letter: a slice compare was a call to `memcmp` a word.
        let mut own = text.get(s..).map(str::chars).into_iter().flatten();
        let (a, b) = (own.next(), own.next());
        let passed_over = match (first, second) {
            (Some(f), None) => a != Some(f),
            (Some(f), Some(g)) => ![a, b].iter().any(|&c| c == Some(f) || c == Some(g)),
            (None, _) => false,
        };
        if passed_over {
            if next.gap_before == 0 {
                return None;
            }
            pos = e as usize;
            continue;
        }
        // Without a gap, only separators may stand between them.
        if next.gap_before == 0 && !text.get(pos..s)?.chars().all(is_separator) {
            return None;
        }
        if let Some(end) = match_word_at(words, s, phrase, word + 1, typo) {
            return Some(end);
        }
        pos = e as usize;
    }
    None
}

/// [`match_rest`] after word `word - 1`, ending at `pos`, when word `word` starts with a
/// character that is not a word character: read character by character.
fn match_after_separators(
    words: &Words<'_>,
    mut pos: usize,
    phrase: &Phrase,
    word: usize,
    typo: bool,
) -> Option<usize> {
    let text = words.text;
    let next = &phrase.words[word];
    // Up to `gap_before` other words may stand between this word and the next.
    for _ in 0..=next.gap_before {
        let skipped = if next.gap_before > 0 {
            text[pos..]
                .chars()
                .take_while(|&c| !is_word(c))
                .map(char::len_utf8)
                .sum()
        } else {
            text[pos..]
                .chars()
                .take_while(|&c| is_separator(c))
                .map(char::len_utf8)
                .sum::<usize>()
        };
        if skipped == 0 {
            return None;
        }
        pos += skipped;
        if let Some(end) = match_word_at(words, pos, phrase, word, typo) {
            return Some(end);
        }
        // Skip one word and try again after it.
        let skip = words.rest_of_word(pos);
        if skip == 0 {
            return None;
        }
        pos += skip;
    }
    None
}

/// Matches word `word` of the phrase at `pos` (a word start) and the words after it.
fn match_word_at(
    words: &Words<'_>,
    pos: usize,
    phrase: &Phrase,
    word: usize,
    typo: bool,
) -> Option<usize> {
    let w = &phrase.words[word];
    if words.text[pos..].starts_with(w.stem.as_str()) {
        return match_rest(words, pos, phrase, word, w.stem.len(), typo);
    }
    // One typo per phrase: the first fuzzy word that needs it spends it.
    if w.fuzzy && !typo {
        for len in super::fuzzy::prefix_lengths(&w.stem, &words.text[pos..], w.typo_first) {
            let rest = words.rest_of_word(pos + len);
            if !words.typo_ending_fits(w, words.text.get(pos + len..pos + len + rest)?) {
                continue;
            }
            if let Some(end) = match_rest(words, pos, phrase, word, len, true) {
                return Some(end);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(entry: &str, text: &str) -> Option<(usize, usize)> {
        let typos = TypoLengths {
            from: 5,
            first_letter_from: 6,
        };
        let p = parse_phrase(entry, 2, Some(typos), false).ok()?;
        let first = &p.words[0].stem;
        let spans = crate::text::word_spans(text);
        let words = Words::new(text, &spans);
        text.match_indices(first.as_str()).find_map(|(s, _)| {
            starts_word(text, s, &p)
                .then(|| match_rest(&words, s, &p, 0, first.len(), false))
                .flatten()
                .map(|e| (s, e))
        })
    }

    #[test]
    fn a_gap_allows_a_few_words_between() {
        assert!(find("how … cost", "how cost").is_some());
        assert!(
            find("how … cost", "how much does it cost").is_none(),
            "three words"
        );
        assert!(find("how … cost", "how much, man, cost").is_some());
        assert!(find("how … costs", "how it costs now").is_some());
        assert!(find("how cost", "how much cost").is_none());
    }

    #[test]
    fn a_gap_must_stand_between_words() {
        assert_eq!(
            parse_phrase("… cost", 2, None, false).err(),
            Some(EntryError::MisplacedGap)
        );
        assert_eq!(
            parse_phrase("cost ...", 2, None, false).err(),
            Some(EntryError::MisplacedGap)
        );
    }

    #[test]
    fn later_words_tolerate_one_typo() {
        assert!(find("rate dollar", "rate dolar").is_some());
        assert!(find("rate dollar", "rate dolar and euro").is_some());
        assert!(
            find("rate euro", "rate eurg").is_none(),
            "short stems are exact"
        );
    }
}
