//! Reading a message typed in another script (`matching.transliterate`): a table of
//! sequences, longest first, applied to the words of a message whose letters are mostly the
//! table's. Entries, file names and values are never read through it.

use super::normalized::Normalized;

/// Reading words typed in another script: in a message whose letters are mostly those the
/// table reads, each word written wholly in them is read through the table, longest sequence
/// first (`shch` before `sh` before `s`). A word that is a URL, an address or a file name
/// (anything with a digit or a mark such as `@`, `.` or `/` inside) stays as it is, and so
/// does a word in `keep`.
#[derive(Debug, Clone, Default)]
pub struct Transliteration {
    /// (from, to): a sequence of the other script and what it reads as, after lower-casing.
    pub table: Vec<(String, String)>,
    /// Words never read through the table: a word equal to one, or starting with one of three
    /// letters or more (brand names, the words the lists themselves write in that script).
    pub keep: Vec<String>,
    /// (from, to): whole words read as other words in every message, whatever its script:
    /// loanwords typed in the other script inside a message in this one (an English «article»
    /// inside a Russian sentence reads as the Russian word given for it). After lower-casing.
    pub words: Vec<(String, String)>,
}

/// One sequence of a transliteration table: what it reads, what it reads as, and whether only
/// at the end of a word.
#[derive(Debug, Clone)]
struct Sequence {
    from: Vec<char>,
    to: Vec<char>,
    at_end: bool,
}

/// The characters of a table's sequences: a lookup table for ASCII, a sorted list for the rest.
#[derive(Debug, Clone)]
struct Alphabet {
    ascii: [bool; 128],
    other: Vec<char>,
    /// Every ASCII character of the table is a letter.
    letters_only: bool,
    /// The lead bytes (bit `lead - 0xC0`) of the table's non-ASCII characters when every one
    /// is a two-byte character outside U+0400..U+047F (Latin letters with marks, `č š ž`);
    /// `None` when one is not: then only the careful, per-character count is right.
    leads: Option<u64>,
}

impl Default for Alphabet {
    fn default() -> Self {
        Self {
            ascii: [false; 128],
            other: Vec::new(),
            letters_only: true,
            leads: Some(0),
        }
    }
}

impl Alphabet {
    fn insert(&mut self, c: char) {
        match self.ascii.get_mut(c as usize) {
            Some(slot) => {
                *slot = true;
                self.letters_only &= c.is_ascii_alphabetic();
            }
            None => {
                if let Err(at) = self.other.binary_search(&c) {
                    self.other.insert(at, c);
                }
                let mut buf = [0u8; 4];
                let lead = c.encode_utf8(&mut buf).as_bytes()[0];
                self.leads = self
                    .leads
                    .filter(|_| c.len_utf8() == 2 && lead & 0xFE != 0xD0)
                    .map(|l| l | 1 << (lead & 0x3F));
            }
        }
    }

    fn contains(&self, c: &char) -> bool {
        match self.ascii.get(*c as usize) {
            Some(&yes) => yes,
            None => self.other.binary_search(c).is_ok(),
        }
    }
}

/// Whether byte `b` leads a two-byte character whose lead bit is set in `leads`
/// ([`Alphabet::leads`]). Without a branch (`&`, not `&&`), so that [`count_letters`] stays
/// vector code.
#[inline]
fn is_lead(leads: u64, b: u8) -> bool {
    (b >= 0xC0) & ((leads >> (b & 0x3F)) & 1 == 1)
}

/// How many bytes of `bytes` may be letters of the table (ASCII letters when its ASCII
/// characters are all letters, else any ASCII byte, and the lead bytes `leads` of its
/// two-byte letters), and how many lead a two-byte letter of U+0400..U+047F. Branch-free over
/// 255-byte chunks with byte counters, so that it runs as vector code.
fn count_letters(bytes: &[u8], letters_only: bool, leads: u64) -> (usize, usize) {
    let (mut ours, mut others) = (0usize, 0usize);
    for chunk in bytes.chunks(255) {
        let (mut o, mut t) = (0u8, 0u8);
        for &b in chunk {
            let ascii = if letters_only {
                (b | 0x20).wrapping_sub(b'a') < 26
            } else {
                b < 0x80
            };
            o += u8::from(ascii) + u8::from(is_lead(leads, b));
            t += u8::from(b & 0xFE == 0xD0);
        }
        ours += usize::from(o);
        others += usize::from(t);
    }
    (ours, others)
}

/// A [`Transliteration`] ready to apply.
#[derive(Debug, Clone, Default)]
pub(super) struct Translit {
    /// The table's sequences by their first character, longest first: (from, to, only at the
    /// end of a word).
    by_first: std::collections::HashMap<char, Vec<Sequence>>,
    /// Every character of the table's sequences: the letters a transliterable word is made of.
    alphabet: Alphabet,
    keep: std::collections::HashSet<String>,
    keep_prefixes: Vec<String>,
    /// Whole words read as other words, in any message ([`Transliteration::words`]).
    words: rustc_hash::FxHashMap<String, Vec<char>>,
    /// The shortest and longest (in bytes) of the words of `words` written in letters the
    /// table does not read (loanwords typed in the message's own script), when there are any:
    /// each word of a message of a length between them is looked up.
    own_script_words: Option<(usize, usize)>,
}

impl Translit {
    pub(super) fn new(t: &Transliteration) -> Self {
        let mut by_first: std::collections::HashMap<char, Vec<Sequence>> =
            std::collections::HashMap::new();
        let mut alphabet = Alphabet::default();
        for (from, to) in &t.table {
            let lower = from.to_lowercase();
            // `ai$`: only at the end of a word.
            let (from, at_end) = match lower.strip_suffix('$') {
                Some(f) if !f.is_empty() => (f, true),
                _ => (lower.as_str(), false),
            };
            let from: Vec<char> = from.chars().collect();
            let Some(&first) = from.first() else {
                continue;
            };
            for &c in &from {
                alphabet.insert(c);
            }
            by_first.entry(first).or_default().push(Sequence {
                from,
                to: to.to_lowercase().chars().collect(),
                at_end,
            });
        }
        for seqs in by_first.values_mut() {
            seqs.sort_by(|a, b| {
                b.from
                    .len()
                    .cmp(&a.from.len())
                    .then_with(|| a.from.cmp(&b.from))
                    .then_with(|| b.at_end.cmp(&a.at_end))
            });
        }
        let keep: std::collections::HashSet<String> =
            t.keep.iter().map(|k| k.to_lowercase()).collect();
        let mut keep_prefixes: Vec<String> = keep
            .iter()
            .filter(|k| k.chars().count() >= 3)
            .cloned()
            .collect();
        keep_prefixes.sort();
        let words: rustc_hash::FxHashMap<String, Vec<char>> = (t.words.iter())
            .map(|(from, to)| {
                (
                    from.trim().to_lowercase(),
                    to.trim().to_lowercase().chars().collect::<Vec<char>>(),
                )
            })
            .filter(|(from, to)| !from.is_empty() && !to.is_empty())
            .collect();
        let own: Vec<&str> = (words.keys())
            .filter(|w| w.chars().any(|c| !alphabet.contains(&c)))
            .map(String::as_str)
            .collect();
        let own_script_words =
            (own.iter().map(|w| w.len()).min()).zip(own.iter().map(|w| w.len()).max());
        Self {
            by_first,
            alphabet,
            keep,
            keep_prefixes,
            words,
            own_script_words,
        }
    }

    /// Whether a message not written in the table's script may hold a word of
    /// [`Transliteration::words`]: a run of the table's letters in it is one, or one of its
    /// `words` (byte spans) is (a word with a digit or a mark around it may still not be;
    /// [`Self::apply`] reads whole words only).
    pub(super) fn may_hold_words(&self, text: &str, words: &[(u32, u32)]) -> bool {
        if self.words.is_empty() {
            return false;
        }
        if let Some((shortest, longest)) = self.own_script_words {
            let own = words.iter().any(|&(s, e)| {
                let len = (e - s) as usize;
                (shortest..=longest).contains(&len)
                    && text
                        .get(s as usize..e as usize)
                        .is_some_and(|w| self.words.contains_key(w))
            });
            if own {
                return true;
            }
        }
        let bytes = text.as_bytes();
        let plain = match self.alphabet.leads {
            Some(0) => true,
            // The table's other letters are two-byte: a message without their lead bytes
            // holds none of them (most messages: Cyrillic letters lead with 0xD0 and 0xD1).
            Some(leads) => !bytes.iter().any(|&b| is_lead(leads, b)),
            None => false,
        };
        if plain {
            // Only ASCII letters of the table here: most messages have no ASCII letter at
            // all, which one pass over the bytes tells; the others are cut into runs of ASCII
            // letters.
            return bytes.iter().any(u8::is_ascii_alphabetic)
                && (bytes.split(|b| !b.is_ascii_alphabetic()))
                    .filter(|run| !run.is_empty())
                    .any(|run| std::str::from_utf8(run).is_ok_and(|w| self.words.contains_key(w)));
        }
        text.split(|c: char| !self.alphabet.contains(&c))
            .any(|run| !run.is_empty() && self.words.contains_key(run))
    }

    /// What a whole word (normalised) is read as in every message ([`Transliteration::words`]).
    pub(super) fn word(&self, word: &str) -> Option<&[char]> {
        self.words.get(word).map(Vec::as_slice)
    }

    /// Whether most letters of `text` are the table's.
    pub(super) fn applies(&self, text: &str) -> bool {
        if let Some(leads) = self.alphabet.leads {
            // The common case: the table's letters are ASCII bytes and two-byte letters with
            // known lead bytes, and every two-byte sequence led by 0xD0 or 0xD1
            // (U+0400..U+047F) is a letter of another script: when the first count cannot
            // beat the second, the answer is known from two passes the compiler turns into
            // vector code, without decoding a character.
            let (ours_at_most, others_at_least) =
                count_letters(text.as_bytes(), self.alphabet.letters_only, leads);
            if ours_at_most == 0 {
                return false;
            }
            if ours_at_most <= others_at_least {
                return false;
            }
        }
        let (mut ours, mut others) = (0usize, 0usize);
        for c in text.chars() {
            if self.alphabet.contains(&c) {
                ours += 1;
            } else if super::is_alphanumeric(c) && !c.is_ascii_digit() {
                others += 1;
            }
        }
        ours > others
    }

    fn kept(&self, word: &[char]) -> bool {
        let word: String = word.iter().collect();
        self.keep.contains(&word)
            || self
                .keep_prefixes
                .iter()
                .any(|k| word.starts_with(k.as_str()))
    }

    /// `n` with its words of [`Transliteration::words`] read as theirs, and, when `whole` (the
    /// message is written in the table's script), every other transliterable word read through
    /// the table.
    pub(super) fn apply(&self, n: Normalized, whole: bool) -> Normalized {
        let chars: Vec<char> = n.text.chars().collect();
        let origin_of = |k: usize| -> u32 {
            n.origin
                .as_ref()
                .and_then(|o| o.get(k).copied())
                .unwrap_or_else(|| u32::try_from(k).unwrap_or(u32::MAX))
        };
        let mut out: Vec<char> = Vec::with_capacity(chars.len() + 8);
        let mut origin: Vec<u32> = Vec::with_capacity(chars.len() + 9);
        // For each character of `n.text` copied unchanged, where it went.
        let mut moved: Vec<Option<usize>> = vec![None; chars.len()];
        let mut read: Vec<(usize, usize)> = Vec::new();
        // A word's letters as text, to look it up in `words`.
        let mut key = String::new();
        let mut k = 0;
        while k < chars.len() {
            if chars[k].is_whitespace() {
                moved[k] = Some(out.len());
                out.push(chars[k]);
                origin.push(origin_of(k));
                k += 1;
                continue;
            }
            let end = (k..chars.len())
                .find(|&j| chars[j].is_whitespace())
                .unwrap_or(chars.len());
            let core_start = (k..end).find(|&j| super::is_alphanumeric(chars[j]));
            let core_end = (k..end).rev().find(|&j| super::is_alphanumeric(chars[j]));
            // A mark the table reads as a letter right after the word («dobav'», «kalendar'»:
            // the soft sign) belongs to it.
            let core = match (core_start, core_end) {
                (Some(a), Some(b))
                    if b + 1 < end
                        && !super::is_alphanumeric(chars[b + 1])
                        && self.alphabet.contains(&chars[b + 1]) =>
                {
                    Some((a, b + 2))
                }
                (Some(a), Some(b)) => Some((a, b + 1)),
                _ => None,
            };
            let loan = core.and_then(|(a, b)| {
                key.clear();
                key.extend(&chars[a..b]);
                Some((a, b, self.words.get(key.as_str())?))
            });
            // A table may read a digit as a letter (a digit that looks like a letter of the
            // other script: «4to», «ra4ion»), but a word read whole has two letters at least and
            // does not end in a digit: «4k», «ps4» and «mp4» stay as written.
            let readable = core.filter(|&(a, b)| {
                whole
                    && chars[a..b].iter().all(|c| self.alphabet.contains(c))
                    && (!chars[a..b].iter().any(char::is_ascii_digit)
                        || (chars[a..b].iter().filter(|c| c.is_alphabetic()).count() >= 2
                            && !chars[b - 1].is_ascii_digit()))
                    && !self.kept(&chars[a..b])
            });
            let mut j = k;
            while j < end {
                if let Some((a, b, to)) = loan
                    && j == a
                {
                    let start = out.len();
                    for &c in to {
                        out.push(c);
                        origin.push(origin_of(a));
                    }
                    read.push((start, out.len()));
                    j = b;
                    continue;
                }
                // A word the table reads whole; else, in a word of the table's letters, digits,
                // hyphens and underscores («plan-2026», «plan_2025», «naushniki-vkladyshi»),
                // each run of two letters or more. An address or a link («ivan.s@mail.ru»,
                // «site.ru/page») stays as written.
                let spelt = |(a, b): (usize, usize)| {
                    chars[a..b].iter().all(|c| {
                        self.alphabet.contains(c) || c.is_ascii_digit() || matches!(c, '-' | '_')
                    })
                };
                let run = match readable {
                    Some((a, b)) if j >= a && j < b => Some((a, b)),
                    None if whole
                        && core.is_some_and(spelt)
                        && self.alphabet.contains(&chars[j])
                        && (j == k || !self.alphabet.contains(&chars[j - 1])) =>
                    {
                        let mut r = (j..end)
                            .find(|&x| !self.alphabet.contains(&chars[x]))
                            .unwrap_or(end);
                        // Digits the table reads, at the run's end, stay digits («ps4»).
                        while r > j && chars[r - 1].is_ascii_digit() {
                            r -= 1;
                        }
                        let letters = chars[j..r].iter().filter(|c| c.is_alphabetic()).count();
                        (letters >= 2 && !self.kept(&chars[j..r])).then_some((j, r))
                    }
                    _ => None,
                };
                match run {
                    Some((a, b)) => {
                        let start = out.len();
                        let mut p = a;
                        while p < b {
                            let hit = self.by_first.get(&chars[p]).and_then(|seqs| {
                                seqs.iter().find(|q| {
                                    chars[p..b].starts_with(&q.from)
                                        && (!q.at_end || p + q.from.len() == b)
                                })
                            });
                            match hit {
                                Some(q) => {
                                    for &c in &q.to {
                                        out.push(c);
                                        origin.push(origin_of(p));
                                    }
                                    p += q.from.len();
                                }
                                None => {
                                    out.push(chars[p]);
                                    origin.push(origin_of(p));
                                    p += 1;
                                }
                            }
                        }
                        read.push((start, out.len()));
                        j = b;
                    }
                    None => {
                        moved[j] = Some(out.len());
                        out.push(chars[j]);
                        origin.push(origin_of(j));
                        j += 1;
                    }
                }
            }
            k = end;
        }
        if read.is_empty() {
            return n;
        }
        let total = n
            .origin
            .as_ref()
            .and_then(|o| o.last().copied())
            .unwrap_or_else(|| u32::try_from(chars.len()).unwrap_or(u32::MAX));
        origin.push(total);
        let text: String = out.iter().collect();
        // Char indices of `out` to byte offsets.
        let mut bytes_at = Vec::with_capacity(out.len() + 1);
        let mut at = 0;
        for c in &out {
            bytes_at.push(at);
            at += c.len_utf8();
        }
        bytes_at.push(at);
        let old_char_at: std::collections::HashMap<usize, usize> = n
            .text
            .char_indices()
            .enumerate()
            .map(|(i, (b, _))| (b, i))
            .collect();
        let folded = n
            .folded
            .iter()
            .filter_map(|b| moved.get(*old_char_at.get(b)?).copied().flatten())
            .map(|i| bytes_at[i])
            .collect();
        let read = read
            .into_iter()
            .map(|(a, b)| (bytes_at[a], bytes_at[b]))
            .collect();
        Normalized {
            words: super::word_spans(&text),
            text,
            origin: Some(origin),
            folded,
            read,
        }
    }
}
