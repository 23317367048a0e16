//! A small alphabet that the lists' patterns are compiled over, instead of Unicode.
//!
//! A pattern such as `\bword\w*\s+other` compiled over Unicode costs hundreds of thousands of
//! instructions: `\w` is some 770 ranges of code points, spelt out as UTF-8 byte sequences in
//! the automaton, for every `\w` of every pattern; and a Unicode `\b` keeps the lazy DFA off
//! non-ASCII text. Yet the patterns of a ruleset tell apart only a few dozen kinds of
//! character: the letters they spell out, the classes they use, and word or not.
//!
//! So the code points are split into *atoms*, the largest sets of characters that no pattern
//! of the ruleset can tell apart (every literal character is one; `[a-z]` without those is
//! another; the other word characters, the other spaces, …), and each atom gets one byte: the
//! word atoms the ASCII word bytes (`0-9A-Za-z_`), the others the rest. A pattern is rewritten
//! over those bytes (a class becomes the bytes of the atoms inside it, a Unicode `\b` the
//! ASCII one, which now sees exactly the same words), and a message is read through the same
//! table once, byte per character. The automata are then a few dozen states, built in
//! microseconds, and the lazy DFA runs on every message.
//!
//! A pattern the rewrite cannot express exactly (bytes classes, line anchors, an ASCII-only
//! `\b`) keeps the Unicode engine; so do all of them when the ruleset's patterns tell apart
//! more word atoms than there are ASCII word bytes (see [`Alphabet::new`]).

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, HirKind, Look};

/// The bytes word atoms get: exactly those an ASCII `\b` counts as word bytes.
const WORD_BYTES: &[u8; 63] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";

/// Code points below this find their byte in a table; the others by a binary search.
const TABLED: u32 = 0x500;

/// One past the last code point.
const END: u32 = 0x11_0000;

/// The atoms of a set of patterns (see the module's notes).
#[derive(Debug)]
pub(super) struct Alphabet {
    /// The first code point of each interval of code points that no pattern tells apart, in
    /// order from 0.
    starts: Vec<u32>,
    /// The byte of each interval's atom.
    bytes: Vec<u8>,
    /// The byte of each code point below [`TABLED`].
    tabled: Box<[u8]>,
    /// The bytes of the atoms inside each class of the patterns (a bit per byte), worked out
    /// once: the same `\w` or `\s` recurs in most patterns.
    classes: FxHashMap<Vec<(u32, u32)>, [u64; 4]>,
}

/// A message read through an [`Alphabet`]: one byte per character, and where each character
/// starts in the text.
#[derive(Debug, Default)]
pub(super) struct Transcoded {
    pub(super) bytes: Vec<u8>,
    /// The byte offset in the text of each character, and the text's length last.
    offsets: Vec<u32>,
}

impl Transcoded {
    /// The character index of byte offset `at` of the text (a char boundary).
    pub(super) fn index(&self, at: usize) -> usize {
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        self.offsets.partition_point(|&o| o < at)
    }

    /// The byte offset in the text of character `i`.
    pub(super) fn offset(&self, i: usize) -> usize {
        self.offsets.get(i).map_or(usize::MAX, |&o| o as usize)
    }
}

/// Whether `hir` can be rewritten over an alphabet exactly.
pub(super) fn supported(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty => true,
        HirKind::Literal(l) => std::str::from_utf8(&l.0).is_ok(),
        HirKind::Class(Class::Unicode(_)) => true,
        HirKind::Class(Class::Bytes(_)) => false,
        HirKind::Look(look) => ascii_look(*look).is_some(),
        HirKind::Repetition(r) => supported(&r.sub),
        HirKind::Capture(c) => supported(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().all(supported),
    }
}

/// The assertion over an alphabet that stands for `look` over Unicode text.
fn ascii_look(look: Look) -> Option<Look> {
    Some(match look {
        Look::Start | Look::End => look,
        Look::WordUnicode => Look::WordAscii,
        Look::WordUnicodeNegate => Look::WordAsciiNegate,
        Look::WordStartUnicode => Look::WordStartAscii,
        Look::WordEndUnicode => Look::WordEndAscii,
        Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
        Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
        _ => return None,
    })
}

/// The ranges (inclusive, as code points) of every class and literal character of `hir`.
fn sets_of(hir: &Hir, out: &mut Vec<Vec<(u32, u32)>>) {
    match hir.kind() {
        HirKind::Literal(l) => {
            if let Ok(s) = std::str::from_utf8(&l.0) {
                out.extend(s.chars().map(|c| vec![(c as u32, c as u32)]));
            }
        }
        HirKind::Class(Class::Unicode(c)) => out.push(
            c.ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        ),
        HirKind::Repetition(r) => sets_of(&r.sub, out),
        HirKind::Capture(c) => sets_of(&c.sub, out),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().for_each(|p| sets_of(p, out));
        }
        HirKind::Empty | HirKind::Look(_) | HirKind::Class(Class::Bytes(_)) => {}
    }
}

/// The ranges of Unicode `\w`, as the regex engines define a word character.
fn word_ranges() -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    if let Ok(hir) = regex_syntax::parse(r"\w") {
        sets_of(&hir, &mut out);
    }
    out.into_iter().next().unwrap_or_default()
}

impl Alphabet {
    /// The atoms that tell apart everything `patterns` (each [`supported`]) can, or `None`
    /// when they need more word atoms than there are ASCII word bytes (or more other atoms
    /// than the other bytes).
    pub(super) fn new(patterns: &[&Hir]) -> Option<Self> {
        let mut sets = Vec::new();
        for hir in patterns {
            sets_of(hir, &mut sets);
        }
        sets.sort_unstable();
        sets.dedup();
        // Set 0 is `\w`, for the signatures below.
        sets.insert(0, word_ranges());
        // The intervals: every range of every set starts one and ends before another.
        let mut starts: Vec<u32> = std::iter::once(0)
            .chain(sets.iter().flatten().flat_map(|&(s, e)| [s, e + 1]))
            .filter(|&b| b < END)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        // Each interval's signature: which sets hold it (set 0 is `\w`).
        let words = sets.len().div_ceil(64);
        let mut signatures = vec![0u64; starts.len() * words];
        for (k, set) in sets.iter().enumerate() {
            for &(s, e) in set {
                let from = starts.partition_point(|&b| b < s);
                let to = starts.partition_point(|&b| b <= e);
                for i in from..to {
                    signatures[i * words + k / 64] |= 1 << (k % 64);
                }
            }
        }
        let mut atom_of: HashMap<&[u64], u8> = HashMap::new();
        let (mut word_atoms, mut other_atoms) = (0usize, 0usize);
        let other_bytes: Vec<u8> = (0..=u8::MAX).filter(|b| !WORD_BYTES.contains(b)).collect();
        let mut bytes = Vec::with_capacity(starts.len());
        for signature in signatures.chunks_exact(words) {
            let byte = match atom_of.get(signature) {
                Some(&b) => b,
                None => {
                    let b = if signature[0] & 1 == 1 {
                        word_atoms += 1;
                        *WORD_BYTES.get(word_atoms - 1)?
                    } else {
                        other_atoms += 1;
                        *other_bytes.get(other_atoms - 1)?
                    };
                    atom_of.insert(signature, b);
                    b
                }
            };
            bytes.push(byte);
        }
        let mut classes = FxHashMap::default();
        for set in sets {
            let mut held = [0u64; 4];
            for &(s, e) in &set {
                let from = starts.partition_point(|&b| b < s);
                let to = starts.partition_point(|&b| b <= e);
                for &b in &bytes[from..to] {
                    held[usize::from(b / 64)] |= 1 << (b % 64);
                }
            }
            classes.insert(set, held);
        }
        let tabled = (0..TABLED)
            .map(|u| bytes[starts.partition_point(|&b| b <= u) - 1])
            .collect();
        Some(Self {
            starts,
            bytes,
            tabled,
            classes,
        })
    }

    /// The byte of `c`'s atom.
    #[inline]
    fn byte(&self, c: char) -> u8 {
        let u = c as u32;
        match self.tabled.get(u as usize) {
            Some(&b) => b,
            None => self.byte_at_or_above_table(u),
        }
    }

    /// `text` read through the alphabet, into `out`.
    pub(super) fn transcode(&self, text: &str, out: &mut Transcoded) {
        // At most a character a byte: both vectors sized once and written by index (pushing
        // re-read and re-stored each vector's length per character), then cut to the count;
        // ASCII and two-byte characters (Cyrillic) are read from the table without decoding
        // a `char`.
        let bytes = text.as_bytes();
        out.bytes.clear();
        out.offsets.clear();
        out.bytes.resize(bytes.len(), 0);
        out.offsets.resize(bytes.len() + 1, 0);
        let (to, at) = (&mut out.bytes[..], &mut out.offsets[..]);
        let mut n = 0;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let (byte, width) = if b < 0x80 {
                (self.tabled[usize::from(b)], 1)
            } else if b & 0xE0 == 0xC0
                && let Some(&b2) = bytes.get(i + 1)
            {
                // Every two-byte character is below U+0800; those below TABLED are tabled.
                let u = (usize::from(b & 0x1F) << 6) | usize::from(b2 & 0x3F);
                match self.tabled.get(u) {
                    Some(&t) => (t, 2),
                    None => (self.byte_at_or_above_table(u as u32), 2),
                }
            } else {
                let c = text
                    .get(i..)
                    .and_then(|t| t.chars().next())
                    .unwrap_or_default();
                (self.byte(c), c.len_utf8())
            };
            if let (Some(t), Some(a)) = (to.get_mut(n), at.get_mut(n)) {
                *t = byte;
                *a = u32::try_from(i).unwrap_or(u32::MAX);
            }
            n += 1;
            i += width;
        }
        if let Some(a) = at.get_mut(n) {
            *a = u32::try_from(text.len()).unwrap_or(u32::MAX);
        }
        out.bytes.truncate(n);
        out.offsets.truncate(n + 1);
    }

    /// The byte of code point `u`'s atom, for `u` past the table.
    fn byte_at_or_above_table(&self, u: u32) -> u8 {
        self.bytes[self.starts.partition_point(|&b| b <= u) - 1]
    }

    /// `hir` (which is [`supported`], and was among the patterns the alphabet was made for)
    /// rewritten over the alphabet's bytes.
    pub(super) fn translate(&self, hir: &Hir) -> Hir {
        match hir.kind() {
            HirKind::Empty => Hir::empty(),
            HirKind::Literal(l) => {
                let s = std::str::from_utf8(&l.0).unwrap_or_default();
                Hir::literal(s.chars().map(|c| self.byte(c)).collect::<Vec<u8>>())
            }
            HirKind::Class(Class::Unicode(c)) => {
                let set: Vec<(u32, u32)> = c
                    .ranges()
                    .iter()
                    .map(|r| (r.start() as u32, r.end() as u32))
                    .collect();
                let held = self.classes.get(&set).copied().unwrap_or_default();
                let ranges = (0..=u8::MAX)
                    .filter(|&b| held[usize::from(b / 64)] & (1 << (b % 64)) != 0)
                    .map(|b| ClassBytesRange::new(b, b));
                Hir::class(Class::Bytes(ClassBytes::new(ranges)))
            }
            HirKind::Class(Class::Bytes(c)) => Hir::class(Class::Bytes(c.clone())),
            HirKind::Look(look) => Hir::look(ascii_look(*look).unwrap_or(*look)),
            HirKind::Repetition(r) => {
                let mut r = r.clone();
                r.sub = Box::new(self.translate(&r.sub));
                Hir::repetition(r)
            }
            HirKind::Capture(c) => {
                let mut c = c.clone();
                c.sub = Box::new(self.translate(&c.sub));
                Hir::capture(c)
            }
            HirKind::Concat(parts) => {
                Hir::concat(parts.iter().map(|p| self.translate(p)).collect())
            }
            HirKind::Alternation(parts) => {
                Hir::alternation(parts.iter().map(|p| self.translate(p)).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transcoding read character by character, as it was first written.
    fn by_chars(a: &Alphabet, text: &str) -> (Vec<u8>, Vec<u32>) {
        let bytes = text.chars().map(|c| a.byte(c)).collect();
        let offsets = text
            .char_indices()
            .map(|(i, _)| i as u32)
            .chain([text.len() as u32])
            .collect();
        (bytes, offsets)
    }

    #[test]
    fn transcoding_reads_every_width_as_char_by_char() {
        let hirs: Vec<Hir> = [
            "\\b\u{43f}\u{440}\u{438}\\w*\\s+\u{43c}\u{438}\u{440}",
            r"[a-z]+\d",
            r"é[α-ω]ß",
            r"中\S",
        ]
        .iter()
        .map(|p| regex_syntax::parse(p).expect("pattern"))
        .collect();
        let a = Alphabet::new(&hirs.iter().collect::<Vec<_>>()).expect("alphabet");
        let mut out = Transcoded::default();
        for text in [
            "",
            "a",
            "\u{43f}\u{440}\u{438}\u{432}\u{435}\u{442}, \u{43c}\u{438}\u{440} 42",
            "é αβγ ß ÿ\u{4ff}\u{500}\u{7ff}\u{800} 中文 😀 end",
            "\u{0}\t\n mixed \u{41f}\u{420}\u{418} \u{43c}\u{438}\u{440}\u{2028}",
            "\u{451}\u{436} \u{401}, 中, 😀😀, ǅ",
        ] {
            a.transcode(text, &mut out);
            let (bytes, offsets) = by_chars(&a, text);
            assert_eq!(out.bytes, bytes, "{text}");
            assert_eq!(out.offsets, offsets, "{text}");
        }
    }
}
