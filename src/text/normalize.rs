//! Normalisation of messages and word-list entries, configured by the rules' `matching`
//! section: lower case and one-for-one folds always; then, when asked, canonical composition
//! (a letter typed as a base and a combining mark becomes one letter, stray marks such as
//! stress accents are dropped), invisible format characters removed (a zero-width space counts
//! as a space), and look-alike letters of another script read as the word's own script.
//!
//! When characters are removed or composed, [`Normalized`] keeps, for each character, where it
//! was in the original message, so spans in the trace still point into what the user wrote.

use unicode_normalization::char::{compose, is_combining_mark};

use super::normalized::Normalized;
use super::translit::{Translit, Transliteration};
use super::words::TABLE_LEN;

/// Bits of a [`Normalizer`] table entry above the code point.
const CODE: u32 = 0x1F_FFFF;
/// One more than the 128-code-point block of a letter, when look-alikes are folded (0: not a
/// letter, or no look-alikes).
const BLOCK: u32 = 0xFF << BLOCK_SHIFT;
const BLOCK_SHIFT: u32 = 21;
/// The character is its own normalised form.
const SAME: u32 = 1 << 29;
const WORD: u32 = 1 << 30;
const SPECIAL: u32 = 1 << 31;

/// What normalisation does beyond lower case and folds.
#[derive(Debug, Clone, Default)]
pub struct NormalizerOptions {
    /// Compose base letters with combining marks (NFC) and drop marks that do not compose.
    pub compose: bool,
    /// Remove invisible format characters; a zero-width space becomes a space.
    pub strip_invisible: bool,
    /// Pairs of letters that look alike in two scripts (after lower-casing), e.g. a Latin and
    /// a Cyrillic `a`. In a word written mostly in one script, a letter of the other script
    /// that has a look-alike is read as its look-alike.
    pub look_alikes: Vec<(char, char)>,
    /// How many letters at the end of each word of a file name may differ when the message
    /// names the file (`Budgets` named as "the budget"); stems keep at least three letters.
    pub name_endings: usize,
    /// Words typed in another script, read through a table (a message's words only, never a
    /// list's entries).
    pub transliterate: Option<Transliteration>,
    /// The endings the language allows after a stem (`matching.word_endings`): when given, an
    /// entry's word matches the stem in its forms, not every word that starts with it.
    pub word_endings: Option<Vec<String>>,
    /// Particles that a hyphen joins to the word before into another word
    /// (`matching.joined_particles`, normalised as a message is): that hyphen becomes `_`, a
    /// word character, so the two are one word (same offsets) and an entry for the first alone
    /// does not match. A particle written with a hyphen after it (`some-`) joins the word
    /// after it instead.
    pub joined_particles: Vec<String>,
    /// The letters a slip of typing puts for one another (`matching.typos.slips`), for the
    /// readers of slips; normalisation itself does not use them.
    pub slips: Option<std::sync::Arc<super::Slips>>,
}

/// Lower-cases text and applies the rules' character folds and options.
///
/// The mapping of the first `TABLE_LEN` code points is computed once, when the rules are
/// compiled: on the hot path a character costs one array read instead of a search through the
/// Unicode case tables (which was most of a decision's time).
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// (from, to) pairs, applied after lower-casing.
    folds: Vec<(char, char)>,
    /// For each code point below `TABLE_LEN`, what the one-pass fold needs in one read: its
    /// normalised form (low 21 bits), whether that is the character itself ([`SAME`]), its
    /// block if it is a letter and look-alikes are folded ([`BLOCK`]), whether it is a word
    /// character ([`WORD`]), and whether the careful path must handle it ([`SPECIAL`]: a mark
    /// or an invisible character the options ask to handle).
    entries: Box<[u32; TABLE_LEN]>,
    options: NormalizerOptions,
    translit: Option<Box<Translit>>,
    endings: Option<std::sync::Arc<super::Endings>>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self::new([])
    }
}

impl Normalizer {
    /// A normaliser with these folds (each applied after lower-casing) and nothing else.
    pub fn new(folds: impl IntoIterator<Item = (char, char)>) -> Self {
        Self::with_options(folds, NormalizerOptions::default())
    }

    /// A normaliser with these folds and options.
    pub fn with_options(
        folds: impl IntoIterator<Item = (char, char)>,
        options: NormalizerOptions,
    ) -> Self {
        let folds: Vec<(char, char)> = folds.into_iter().collect();
        let mut entries = Box::new([0u32; TABLE_LEN]);
        for (u, slot) in (0u32..).zip(entries.iter_mut()) {
            let c = char::from_u32(u).unwrap_or('\u{FFFD}');
            *slot = entry(c, slow_fold(&folds, c), &options);
        }
        let translit = options
            .transliterate
            .as_ref()
            .map(|t| Box::new(Translit::new(t)));
        let mut n = Self {
            folds,
            entries,
            options,
            translit,
            endings: None,
        };
        if let Some(endings) = &n.options.word_endings {
            let endings = super::Endings::new(endings.iter().map(|e| n.normalize(e.trim())));
            n.endings = Some(std::sync::Arc::new(endings));
        }
        // The particles as a message's words read: lower case and folded (normalising a
        // particle alone joins nothing: there is no word on the other side of its hyphen).
        let particles = std::mem::take(&mut n.options.joined_particles);
        n.options.joined_particles = particles.iter().map(|p| n.normalize(p.trim())).collect();
        n
    }

    /// The endings a stem's word may have (`None`: a stem matches every word it starts),
    /// shared with the scanner that matches by them.
    pub fn endings(&self) -> Option<&std::sync::Arc<super::Endings>> {
        self.endings.as_ref()
    }

    /// What `matching.transliterate.words` reads a whole word (normalised) as, in every
    /// message; `None` when the word is read as written.
    pub fn respelling(&self, word: &str) -> Option<String> {
        let t = self.translit.as_ref()?;
        t.word(word).map(|to| to.iter().collect())
    }

    /// The letters a slip of typing puts for one another, when the rules declare them.
    pub fn slips(&self) -> Option<&std::sync::Arc<super::Slips>> {
        self.options.slips.as_ref()
    }

    /// The normalised text of a list's entry, a file name or a value: everything but the
    /// transliteration, which reads messages only.
    pub fn normalize(&self, text: &str) -> String {
        self.normalize_plain(text).text
    }

    /// The normalised text of a user's message (see [`Self::normalize_mapped`]).
    pub fn normalize_message(&self, text: &str) -> String {
        self.normalize_mapped(text).text
    }

    /// A user's message normalised, with where each character came from: what
    /// [`Self::normalize`] does, then the transliteration when the message is typed in the
    /// table's script.
    pub fn normalize_mapped(&self, text: &str) -> Normalized {
        let n = self.normalize_plain(text);
        let mut n = match &self.translit {
            Some(t) if t.applies(&n.text) => t.apply(n, true),
            Some(t) if t.may_hold_words(&n.text, &n.words) => t.apply(n, false),
            _ => n,
        };
        super::words::drop_address_words(&n.text, &mut n.words);
        n
    }

    fn normalize_plain(&self, text: &str) -> Normalized {
        let mut n = self.normalize_folded(text);
        if !self.options.joined_particles.is_empty() && n.text.contains('-') {
            join_particles(&mut n.text, &mut n.words, &self.options.joined_particles);
        }
        n
    }

    fn normalize_folded(&self, text: &str) -> Normalized {
        if let Some((text, words)) = self.fold_all(text) {
            return Normalized {
                text,
                words,
                ..Normalized::default()
            };
        }
        let o = &self.options;
        let mut chars: Vec<char> = Vec::with_capacity(text.len());
        let mut origin: Vec<u32> = Vec::new();
        let mut shifted = false;
        let mut total = 0u32;
        for (k, c) in (0u32..).zip(text.chars()) {
            total = k + 1;
            if o.strip_invisible {
                match invisible(c) {
                    Some(Invisible::Space) => {
                        chars.push(' ');
                        origin.push(k);
                        continue;
                    }
                    Some(Invisible::Remove) => {
                        shifted = true;
                        continue;
                    }
                    None => {}
                }
            }
            if o.compose && is_mark(c) {
                shifted = true;
                if let Some(last) = chars.last_mut()
                    && let Some(composed) = compose(*last, c)
                {
                    *last = self.fold(composed);
                }
                continue;
            }
            chars.push(self.fold(c));
            origin.push(k);
        }
        origin.push(total);
        let folded = if o.look_alikes.is_empty() {
            Vec::new()
        } else {
            fold_look_alikes(&mut chars, &o.look_alikes)
        };
        let text: String = chars.iter().collect();
        let folded = if folded.is_empty() {
            folded
        } else {
            // Character indices to byte offsets.
            let mut bytes = Vec::with_capacity(folded.len());
            let mut at = 0;
            let mut next = folded.iter().peekable();
            for (k, c) in chars.iter().enumerate() {
                if next.peek() == Some(&&k) {
                    bytes.push(at);
                    next.next();
                }
                at += c.len_utf8();
            }
            bytes
        };
        Normalized {
            words: super::word_spans(&text),
            text,
            origin: shifted.then_some(origin),
            folded,
            read: Vec::new(),
        }
    }

    /// How a message's words stand for the words of a file's name: in their forms by
    /// `word_endings`, else cut by `name_endings` letters (see [`super::NameForms`]).
    pub fn name_forms(&self) -> super::NameForms<'_> {
        super::NameForms {
            endings: self.endings().map(|e| &**e),
            cut: self.options.name_endings,
        }
    }

    /// Lower case and folds, character for character; `None` when `text` has anything the
    /// options change: a combining mark, an invisible character, or a word with letters of
    /// two Unicode blocks (a look-alike may hide in it). Most messages have none of these (a
    /// Latin brand name among Cyrillic words is not one), and then this one pass is all.
    fn fold_all(&self, text: &str) -> Option<(String, Vec<(u32, u32)>)> {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() + 8);
        let mut words: Vec<(u32, u32)> = Vec::with_capacity(text.len() / 6 + 1);
        // `out` holds `text[..copied]` normalised; `text[copied..i]` needs no change and is
        // copied in one piece when a character that changes comes, or at the end.
        let mut copied = 0;
        // Where the current word started in `out`, and the block of its letters (0: none yet).
        let mut word_start: Option<usize> = None;
        let mut block = 0;
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        let mut i = 0;
        loop {
            if word_start.is_some() {
                i = self.pass_unchanged(bytes, i, SAME | WORD | block);
            }
            if i >= bytes.len() {
                break;
            }
            let (entry, len) = match self.tabled(bytes, i) {
                Some(tabled) => tabled,
                None => {
                    let c = text[i..].chars().next()?;
                    (entry(c, self.fold(c), &self.options), c.len_utf8())
                }
            };
            // The common case, a letter inside a word that needs no change: nothing to do.
            if entry & (SPECIAL | SAME | WORD | BLOCK) == SAME | WORD | block
                && word_start.is_some()
            {
                i += len;
                continue;
            }
            if entry & SPECIAL != 0 {
                return None;
            }
            if entry & WORD == 0 {
                block = 0;
                if let Some(start) = word_start.take() {
                    words.push((offset(start), offset(out.len() + (i - copied))));
                }
            } else {
                if word_start.is_none() {
                    word_start = Some(out.len() + (i - copied));
                }
                let here = entry & BLOCK;
                if here != block && here != 0 {
                    if block != 0 {
                        return None;
                    }
                    block = here;
                }
            }
            if entry & SAME == 0 {
                out.push_str(text.get(copied..i)?);
                // The table holds chars, so this never fails (and a failure would fall back
                // to the slow path, not panic).
                out.push(char::from_u32(entry & CODE)?);
                copied = i + len;
            }
            i += len;
        }
        out.push_str(text.get(copied..)?);
        if let Some(start) = word_start {
            words.push((offset(start), offset(out.len())));
        }
        Some((out, words))
    }

    /// Where the run of letters from `bytes[i..]` that need no change and whose entries are
    /// all `want` (inside a word, of its block) ends: the common case, in a loop of its own
    /// so that it keeps everything in registers.
    #[inline(never)]
    fn pass_unchanged(&self, bytes: &[u8], mut i: usize, want: u32) -> usize {
        while let Some((entry, len)) = self.tabled(bytes, i) {
            if entry & (SPECIAL | SAME | WORD | BLOCK) != want {
                break;
            }
            i += len;
        }
        i
    }

    /// The table's entry for the character at `bytes[i]` and its length, when it is one or two
    /// bytes long (a code point below 0x800, so always inside the table); `None` for a longer
    /// one, or at the end.
    #[inline(always)]
    fn tabled(&self, bytes: &[u8], i: usize) -> Option<(u32, usize)> {
        match *bytes.get(i)? {
            b @ 0..=0x7F => Some((self.entries[usize::from(b)], 1)),
            // A two-byte sequence (valid, since the bytes are a str's).
            b @ 0xC2..=0xDF => {
                let next = *bytes.get(i + 1)?;
                let code = (usize::from(b & 0x1F) << 6) | usize::from(next & 0x3F);
                Some((self.entries[code], 2))
            }
            _ => None,
        }
    }

    fn fold(&self, c: char) -> char {
        match self.entries.get(c as usize) {
            Some(&e) => char::from_u32(e & CODE).unwrap_or(c),
            None => slow_fold(&self.folds, c),
        }
    }
}

/// What the one-pass fold needs to know of `c`, folded to `folded`: see
/// the `entries` field of [`Normalizer`].
fn entry(c: char, folded: char, options: &NormalizerOptions) -> u32 {
    let code = folded as u32;
    let word = super::is_word(folded);
    // A letter's block, for telling a word that mixes scripts (digits and `_` belong to all).
    let block = if !options.look_alikes.is_empty()
        && word
        && (code >= 0x80 || folded.is_ascii_alphabetic())
    {
        (code >> 7) + 1
    } else {
        0
    };
    // A block beyond the field's range is left to the careful path.
    let special = (options.compose && is_mark(c))
        || (options.strip_invisible && invisible(c).is_some())
        || block > BLOCK >> BLOCK_SHIFT;
    code | (block.min(BLOCK >> BLOCK_SHIFT) << BLOCK_SHIFT)
        | if folded == c { SAME } else { 0 }
        | if word { WORD } else { 0 }
        | if special { SPECIAL } else { 0 }
}

/// Joins each particle of `particles` to the word before it (or, for a particle written
/// `some-`, to the word after it) where a hyphen stands between them and the particle is a
/// whole word: the hyphen becomes `_` (one byte for one, so every offset stays) and the two
/// word spans become one.
fn join_particles(text: &mut String, words: &mut Vec<(u32, u32)>, particles: &[String]) {
    let mut joined = Vec::new();
    for (k, pair) in words.windows(2).enumerate() {
        let [(first, end), (start, next_end)] = pair else {
            continue;
        };
        let (first, end) = (*first as usize, *end as usize);
        let (start, next_end) = (*start as usize, *next_end as usize);
        if start != end + 1 || text.as_bytes().get(end) != Some(&b'-') {
            continue;
        }
        let after = text.get(start..next_end);
        let before = text.get(first..end);
        let particle = |p: &String| match p.strip_suffix('-') {
            Some(prefix) => before == Some(prefix),
            None => after == Some(p.as_str()),
        };
        if particles.iter().any(particle) {
            joined.push((k, end));
        }
    }
    for &(k, at) in joined.iter().rev() {
        text.replace_range(at..=at, "_");
        words[k].1 = words[k + 1].1;
        words.remove(k + 1);
    }
}

/// [`is_combining_mark`] through a table for the first code points (the lookup is a hash).
fn is_mark(c: char) -> bool {
    static TABLE: std::sync::OnceLock<Box<[bool; TABLE_LEN]>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = Box::new([false; TABLE_LEN]);
        for (u, slot) in (0u32..).zip(t.iter_mut()) {
            *slot = char::from_u32(u).is_some_and(is_combining_mark);
        }
        t
    });
    table
        .get(c as usize)
        .copied()
        .unwrap_or_else(|| is_combining_mark(c))
}

enum Invisible {
    /// A zero-width space: it separates words.
    Space,
    /// Joiners, soft hyphens, byte-order marks: they sit inside words.
    Remove,
}

fn invisible(c: char) -> Option<Invisible> {
    match c {
        '\u{200B}' => Some(Invisible::Space),
        '\u{00AD}'
        | '\u{180E}'
        | '\u{200C}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}' => Some(Invisible::Remove),
        _ => None,
    }
}

/// The script a letter is written in, as far as look-alikes are concerned: the look-alike
/// table says which two scripts there are (`a` of each pair is script 0, `b` script 1).
fn fold_look_alikes(chars: &mut [char], pairs: &[(char, char)]) -> Vec<usize> {
    let mut twins: Vec<(char, (usize, char))> = pairs
        .iter()
        .flat_map(|&(a, b)| [(a, (0, b)), (b, (1, a))])
        .collect();
    twins.sort_unstable_by_key(|t| t.0);
    let side = |c: char| -> Option<(usize, Option<char>)> {
        let i = twins.binary_search_by_key(&c, |t| t.0).ok()?;
        let (s, twin) = twins[i].1;
        Some((s, Some(twin)))
    };
    // Letters without a look-alike decide a word's script by the block they share with the
    // pairs: same Unicode block as the pairs' first (or second) letters.
    let block = |c: char| c as u32 >> 7;
    let blocks: [Vec<u32>; 2] = [
        pairs.iter().map(|p| block(p.0)).collect(),
        pairs.iter().map(|p| block(p.1)).collect(),
    ];
    let mut folded = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !super::is_word(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && super::is_word(chars[i]) {
            i += 1;
        }
        let word = &chars[start..i];
        // Letters certainly in script 0 or 1 (no look-alike), and look-alikes of each side.
        let mut sure = [0usize; 2];
        let mut alike = [0usize; 2];
        for &c in word {
            match side(c) {
                Some((s, _)) => alike[s] += 1,
                // Only letters tell the script: digits and `_` belong to every word
                // (a Cyrillic name with `_q3` is a Cyrillic word, not a Latin one).
                None if c.is_alphabetic() => {
                    for (s, b) in blocks.iter().enumerate() {
                        if b.contains(&block(c)) {
                            sure[s] += 1;
                            break;
                        }
                    }
                }
                None => {}
            }
        }
        let present = |s: usize| sure[s] + alike[s] > 0;
        if !(present(0) && present(1)) {
            continue;
        }
        let target = match sure[0].cmp(&sure[1]) {
            std::cmp::Ordering::Greater => 0,
            std::cmp::Ordering::Less => 1,
            std::cmp::Ordering::Equal => match (sure[0] + alike[0]).cmp(&(sure[1] + alike[1])) {
                std::cmp::Ordering::Greater => 0,
                std::cmp::Ordering::Less => 1,
                std::cmp::Ordering::Equal => continue,
            },
        };
        for (k, c) in chars[start..i].iter_mut().enumerate() {
            if let Some((s, Some(other))) = side(*c)
                && s != target
            {
                *c = other;
                folded.push(start + k);
            }
        }
    }
    folded
}

/// Lower-cases one character (keeping it when its lower case is several characters) and
/// applies the folds.
fn slow_fold(folds: &[(char, char)], c: char) -> char {
    let mut lower = c.to_lowercase();
    let l = match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    };
    folds
        .iter()
        .find(|(from, _)| *from == l)
        .map_or(l, |&(_, to)| to)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Greek look-alikes of Latin letters stand in for any two scripts.
    fn full() -> Normalizer {
        Normalizer::with_options(
            [('ß', 's')],
            NormalizerOptions {
                compose: true,
                strip_invisible: true,
                look_alikes: vec![('o', '\u{3BF}'), ('a', '\u{3B1}'), ('p', '\u{3C1}')],
                name_endings: 0,
                transliterate: None,
                word_endings: None,
                joined_particles: Vec::new(),
                slips: None,
            },
        )
    }

    #[test]
    fn a_joined_particle_makes_one_word_and_keeps_offsets() {
        let n = Normalizer::with_options(
            [],
            NormalizerOptions {
                joined_particles: vec!["so".into(), "ever".into()],
                ..NormalizerOptions::default()
            },
        );
        let m = n.normalize_mapped("Who-ever asked, WHO - so? who-so-ever, who-sox");
        assert_eq!(m.text, "who_ever asked, who - so? who_so_ever, who-sox");
        let words: Vec<&str> = m
            .words
            .iter()
            .map(|&(s, e)| &m.text[s as usize..e as usize])
            .collect();
        assert_eq!(
            words,
            [
                "who_ever",
                "asked",
                "who",
                "so",
                "who_so_ever",
                "who",
                "sox"
            ]
        );
        // Without the option nothing is joined.
        assert_eq!(Normalizer::default().normalize("who-so"), "who-so");
        // A particle is read as a message's word is: upper case and folds do not hide it.
        let folded = Normalizer::with_options(
            [('ß', 's')],
            NormalizerOptions {
                joined_particles: vec![" Soß ".into()],
                ..NormalizerOptions::default()
            },
        );
        assert_eq!(folded.normalize("who-soß"), "who_sos");
        // A particle written `some-` joins the word after it, and only as a whole word.
        let prefix = Normalizer::with_options(
            [],
            NormalizerOptions {
                joined_particles: vec!["Some-".into()],
                ..NormalizerOptions::default()
            },
        );
        assert_eq!(
            prefix.normalize("some-where, somewhat-where, where-some"),
            "some_where, somewhat-where, where-some"
        );
    }

    #[test]
    fn look_alikes_follow_the_word_script() {
        let n = full();
        // "hello" with a Greek omicron; a Greek word with a Latin o.
        let out = n.normalize_mapped("hell\u{3BF} and \u{3BB}\u{3B5}o\u{3BD}");
        assert_eq!(out.text, "hello and \u{3BB}\u{3B5}\u{3BF}\u{3BD}");
        assert!(out.folded_within(0, "hello".len()));
        assert!(!out.folded_within("hello".len(), "hello and".len()));
        // A word all in look-alikes of one script is left alone.
        assert_eq!(n.normalize("pop"), "pop");
        // `_` and digits are no letters of any script: a Greek word with a Latin q and `_3`
        // stays Greek (the `_` counted as Latin and turned its omicron into an o).
        assert_eq!(n.normalize("\u{3BB}\u{3BF}_q3"), "\u{3BB}\u{3BF}_q3");
    }

    #[test]
    fn invisible_characters_and_marks_keep_offsets_in_the_original() {
        let n = full();
        let message = "how\u{200B}much cafe\u{0301} mil\u{0306}k";
        let out = n.normalize_mapped(message);
        assert_eq!(out.text, "how much caf\u{E9} milk");
        let start = out.text.find("milk").expect("found");
        let (s, e) = out.char_span(start, start + "milk".len());
        let original: String = message.chars().skip(s).take(e - s).collect();
        assert_eq!(original, "mil\u{0306}k");
        assert_eq!(n.normalize("do\u{00AD}g\u{FEFF}"), "dog");
    }

    #[test]
    fn without_options_nothing_but_case_and_folds_changes() {
        let n = Normalizer::new([('ß', 's')]);
        assert_eq!(
            n.normalize("Straße h\u{3BF}\u{200B}"),
            "strase h\u{3BF}\u{200B}"
        );
    }

    fn latin_to_greek() -> Normalizer {
        let table = [
            ("ps", "\u{3C8}"),
            ("ch", "\u{3C7}"),
            ("a", "\u{3B1}"),
            ("b", "\u{3B2}"),
            ("e", "\u{3B5}"),
            ("g", "\u{3B3}"),
            ("i", "\u{3B9}"),
            ("k", "\u{3BA}"),
            ("l", "\u{3BB}"),
            ("o", "\u{3BF}"),
            ("p", "\u{3C0}"),
            ("r", "\u{3C1}"),
            ("s", "\u{3C3}"),
            ("s$", "\u{3C2}"),
            ("t", "\u{3C4}"),
            ("y", "\u{3C5}"),
            ("z", "\u{3B6}"),
        ];
        transliterating(&table, &["gmail", "ok"], ("reminder", "\u{3C5}\u{3C0}"))
    }

    /// A normaliser that reads messages through `table`, keeps `keep` and reads the one word
    /// `word.0` as `word.1`.
    fn transliterating(table: &[(&str, &str)], keep: &[&str], word: (&str, &str)) -> Normalizer {
        let owned = |(a, b): (&str, &str)| (a.to_owned(), b.to_owned());
        Normalizer::with_options(
            [],
            NormalizerOptions {
                transliterate: Some(Transliteration {
                    table: table.iter().copied().map(owned).collect(),
                    keep: keep.iter().map(|k| (*k).to_owned()).collect(),
                    words: vec![owned(word)],
                }),
                ..NormalizerOptions::default()
            },
        )
    }

    #[test]
    fn a_message_typed_in_the_tables_script_is_read_through_it() {
        let n = latin_to_greek();
        let out = n.normalize_mapped("Poso kostizei biblio, Ok?");
        assert_eq!(
            out.text,
            "\u{3C0}\u{3BF}\u{3C3}\u{3BF} \u{3BA}\u{3BF}\u{3C3}\u{3C4}\u{3B9}\u{3B6}\u{3B5}\u{3B9} \u{3B2}\u{3B9}\u{3B2}\u{3BB}\u{3B9}\u{3BF}, ok?"
        );
        // Spans still point into what the user wrote.
        let book = "\u{3B2}\u{3B9}\u{3B2}\u{3BB}\u{3B9}\u{3BF}";
        let start = out.text.find(book).expect("found");
        assert_eq!(out.char_span(start, start + book.len()), (14, 20));
        assert!(out.read_within(start, start + 2));
        let ok = out.text.find("ok").expect("kept");
        assert!(!out.read_within(ok, ok + 2), "a kept word is not read");
        // The longest sequence first (`ps`, then `s`); `s$` only at a word's end.
        assert_eq!(
            n.normalize_message("psychi"),
            "\u{3C8}\u{3C5}\u{3C7}\u{3B9}"
        );
        assert_eq!(n.normalize_message("sos"), "\u{3C3}\u{3BF}\u{3C2}");
        // Kept words, and their longer forms; addresses, links and words with digits.
        assert_eq!(
            n.normalize_message("grape ivan@mail.ru gmailom sto site.ru mp3"),
            "\u{3B3}\u{3C1}\u{3B1}\u{3C0}\u{3B5} ivan@mail.ru gmailom \u{3C3}\u{3C4}\u{3BF} site.ru mp3"
        );
    }

    /// A digit in the table («4» for a letter it looks like) is read inside a word of two
    /// letters or more, never at its end: «4k» and «2024» stay as written, «ps4» keeps its 4.
    #[test]
    fn a_digit_the_table_reads_is_a_letter_only_inside_a_word() {
        let mut table = vec![("4", "\u{3B8}")];
        table.extend([("a", "\u{3B1}"), ("e", "\u{3B5}"), ("k", "\u{3BA}")]);
        table.extend([("o", "\u{3BF}"), ("p", "\u{3C0}"), ("s", "\u{3C3}")]);
        let n = transliterating(&table, &[], ("reminder", "\u{3C5}"));
        assert_eq!(
            n.normalize_message("4eos ka4e"),
            "\u{3B8}\u{3B5}\u{3BF}\u{3C3} \u{3BA}\u{3B1}\u{3B8}\u{3B5}"
        );
        // A mark of the table right after a word is read with it, as one inside a word is.
        let mut marked = table.clone();
        marked.push(("'", "\u{3C9}"));
        let n2 = transliterating(&marked, &[], ("reminder", "\u{3C5}"));
        assert_eq!(
            n2.normalize_message("pos' kas'e"),
            "\u{3C0}\u{3BF}\u{3C3}\u{3C9} \u{3BA}\u{3B1}\u{3C3}\u{3C9}\u{3B5}"
        );
        assert_eq!(
            n.normalize_message("4eos 4k ps4 2024"),
            "\u{3B8}\u{3B5}\u{3BF}\u{3C3} 4k \u{3C0}\u{3C3}4 2024"
        );
    }

    /// A table with letters beyond ASCII (Latin with marks, as Czech and Serbian keyboards
    /// type): a message in them is read through it, its longest sequences first, and a
    /// message in the other script is not.
    #[test]
    fn a_table_with_marked_latin_letters_reads_them() {
        let n = transliterating(
            &[
                ("šč", "\u{3C3}\u{3C4}"),
                ("š", "\u{3C3}"),
                ("č", "\u{3C7}"),
                ("p", "\u{3C0}"),
                ("o", "\u{3BF}"),
                ("i", "\u{3B9}"),
            ],
            &[],
            ("nope", "\u{3BD}"),
        );
        assert_eq!(
            n.normalize_message("Poišči"),
            "\u{3C0}\u{3BF}\u{3B9}\u{3C3}\u{3C4}\u{3B9}"
        );
        assert_eq!(n.normalize_message("čip"), "\u{3C7}\u{3B9}\u{3C0}");
        let greek = "\u{3BA}\u{3B1}\u{3BB}\u{3B7}\u{3BC}\u{3AD}\u{3C1}\u{3B1} č";
        assert_eq!(n.normalize_message(greek), greek);
    }

    /// A loanword spelt in the message's own letters (an English word in Greek letters here)
    /// is read as its word too, in a message of that script; other words stay.
    #[test]
    fn a_loanword_in_the_messages_own_script_is_read_as_its_word() {
        // «ριμάιντερ» (reminder spelt in Greek) reads «υπ».
        let reminder = "\u{3C1}\u{3B9}\u{3BC}\u{3B1}\u{3B9}\u{3BD}\u{3C4}\u{3B5}\u{3C1}";
        let table = [("r", "\u{3C1}"), ("m", "\u{3BC}")];
        let n = transliterating(&table, &[], (reminder, "\u{3C5}\u{3C0}"));
        let message = "\u{3B2}\u{3B1}\u{3BB}\u{3B5} \u{3C1}\u{3B9}\u{3BC}\u{3B1}\u{3B9}\u{3BD}\u{3C4}\u{3B5}\u{3C1} \u{3B3}\u{3B9}\u{3B1}";
        let out = n.normalize_mapped(message);
        assert_eq!(
            out.text,
            "\u{3B2}\u{3B1}\u{3BB}\u{3B5} \u{3C5}\u{3C0} \u{3B3}\u{3B9}\u{3B1}"
        );
        let at = out.text.find("\u{3C5}\u{3C0}").expect("read");
        assert!(out.read_within(at, at + "\u{3C5}\u{3C0}".len()));
        // Whole words only: a longer word stays.
        let longer = "\u{3C1}\u{3B9}\u{3BC}\u{3B1}\u{3B9}\u{3BD}\u{3C4}\u{3B5}\u{3C1}\u{3C2}";
        assert_eq!(n.normalize_message(longer), longer);
    }

    #[test]
    fn a_message_mostly_in_another_script_and_every_entry_stay_as_written() {
        let n = latin_to_greek();
        // Mostly Greek: an English word is English, not read through the table.
        let mostly = "\u{3B2}\u{3B1}\u{3BB}\u{3B5} remind \u{3B3}\u{3B9}\u{3B1} \u{3B1}\u{3C5}\u{3C1}\u{3B9}\u{3BF}";
        assert_eq!(n.normalize_message(mostly), mostly);
        assert!(!n.normalize_mapped(mostly).read_within(0, mostly.len()));
        // Unless the table's `words` give it: read as that word, its span still the original's.
        let loan = "\u{3B2}\u{3B1}\u{3BB}\u{3B5} Reminder \u{3B3}\u{3B9}\u{3B1}";
        let out = n.normalize_mapped(loan);
        assert_eq!(
            out.text,
            "\u{3B2}\u{3B1}\u{3BB}\u{3B5} \u{3C5}\u{3C0} \u{3B3}\u{3B9}\u{3B1}"
        );
        let at = out.text.find("\u{3C5}\u{3C0}").expect("read");
        let end = at + "\u{3C5}\u{3C0}".len();
        assert_eq!(out.char_span(at, end), (5, 13), "the whole word as written");
        assert!(out.read_within(at, end));
        // Whole words only: «reminders» is not «reminder».
        let plural = "\u{3B2}\u{3B1}\u{3BB}\u{3B5} reminders \u{3B3}\u{3B9}\u{3B1}";
        assert_eq!(n.normalize_message(plural), plural);
        // Entries, file names and values are never transliterated.
        assert_eq!(n.normalize("biblio"), "biblio");
    }
}
