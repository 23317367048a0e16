//! Every word list of a ruleset, matched in one pass over the message.
//!
//! All first stems of all lists are in two automata: stems that start with a word character in
//! one anchored automaton walked at each word start, the others (and the literal prefixes of
//! every regular pattern) in one unanchored Aho-Corasick automaton run once over the text.
//! Each automaton hit points at the phrases that start with that stem (in any list), whose
//! other words are then checked by hand; a pattern is only run from where one of its prefixes
//! occurs. The result is the set of lists that matched, each with its first hit, so the cost of
//! a message depends on what it contains, not on how many lists there are.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use smallvec::SmallVec;

use super::fuzzy::FuzzyStems;
use super::pattern::{ListPattern, PatternStart};
use super::phrase::{self, Phrase};
use super::stems::WordStarts;
use super::{Hit, Normalizer, each_word_start, is_word};

/// How one list matches, beyond its entries.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// How many other words a `…` in an entry allows.
    pub gap: usize,
    /// Stems of at least this many letters also match with one typo.
    pub typos_from: Option<usize>,
    /// A match is ignored when a match of list `.0` ends at most `.1` words before it.
    pub negated_by: Option<(usize, usize)>,
}

/// One list to compile: its `words` entries (as written), its compiled patterns (`None` for
/// one that failed to compile: it never matches, and indices stay aligned), and options.
#[derive(Debug, Clone, Copy)]
pub struct ListSpec<'a> {
    pub words: &'a [String],
    pub patterns: &'a [Option<ListPattern>],
    pub options: &'a ListOptions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Phrase(u32),
    Pattern(u32),
}

#[derive(Debug, Clone)]
struct Pattern {
    re: ListPattern,
    list: u32,
    entry: u32,
}

/// The compiled word lists of a ruleset.
#[derive(Debug, Clone)]
pub struct Scanner {
    phrases: Vec<Phrase>,
    /// (list, entry) of each phrase.
    owner: Vec<(u32, u32)>,
    /// First stems starting with a word character, and the prefixes of patterns that start
    /// at a word boundary with a word character; the phrases and patterns each starts.
    at_word_starts: Option<WordStarts>,
    word_heads: Vec<Vec<Target>>,
    /// For each word-start stem: where its phrases whose first word is whole begin in
    /// `word_heads` (they come last: a word that goes on past the stem skips them all), and
    /// whether it starts any phrase (then it is a known word there).
    heads_whole_from: Vec<usize>,
    heads_phrase: Vec<bool>,
    /// Typo-tolerant first stems, and the phrases each starts.
    fuzzy: Option<FuzzyStems>,
    fuzzy_heads: Vec<Vec<u32>>,
    /// Other first stems and the patterns' prefixes.
    anywhere: Option<AhoCorasick>,
    any_heads: Vec<Vec<Target>>,
    patterns: Vec<Pattern>,
    /// Patterns with no literal prefix: run on every message.
    unanchored: Vec<u32>,
    /// Patterns that start with `^`: tried once, at the start.
    at_start: Vec<u32>,
    negations: Vec<Option<(u32, usize)>>,
    /// The language's endings, when it declares them.
    endings: Option<std::sync::Arc<super::Endings>>,
    lists: usize,
    error: Option<String>,
}

/// One match of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListHit {
    pub list: u32,
    pub hit: Hit,
}

/// A match ignored because a negation stands before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negated {
    pub list: u32,
    pub hit: Hit,
    /// The negation's list and its hit.
    pub by: ListHit,
}

/// What one message matched: the first hit of each list that matched (sorted by list), and the
/// first negated hit of lists that matched only negated.
#[derive(Debug, Clone, Default)]
pub struct Hits {
    /// Inline for the few lists a message usually matches.
    first: SmallVec<[ListHit; 8]>,
    negated: Vec<Negated>,
}

impl Hits {
    /// The first hit of list `list`, if it matched.
    pub fn get(&self, list: usize) -> Option<Hit> {
        let i = self
            .first
            .binary_search_by_key(&list, |h| h.list as usize)
            .ok()?;
        Some(self.first[i].hit)
    }

    /// Why list `list` did not match although one of its entries occurs.
    pub fn negated(&self, list: usize) -> Option<&Negated> {
        self.negated.iter().find(|n| n.list as usize == list)
    }

    /// Each list that matched only where a negation stood before it, with its first such hit.
    pub fn negations(&self) -> impl Iterator<Item = &Negated> {
        self.negated.iter()
    }

    /// The lists that matched, in list order.
    pub fn lists(&self) -> impl Iterator<Item = usize> + '_ {
        self.first.iter().map(|h| h.list as usize)
    }
}

impl Scanner {
    /// Compiles `lists` (entries normalised by `norm`, as messages are). Entries must have passed
    /// the compiler's checks; a bad one is skipped, never half-used.
    pub fn new(lists: &[ListSpec<'_>], norm: &Normalizer) -> Self {
        let mut s = Scanner {
            phrases: Vec::new(),
            owner: Vec::new(),
            at_word_starts: None,
            word_heads: Vec::new(),
            heads_whole_from: Vec::new(),
            heads_phrase: Vec::new(),
            fuzzy: None,
            fuzzy_heads: Vec::new(),
            anywhere: None,
            any_heads: Vec::new(),
            patterns: Vec::new(),
            unanchored: Vec::new(),
            at_start: Vec::new(),
            negations: Vec::new(),
            endings: norm.endings().cloned(),
            lists: lists.len(),
            error: None,
        };
        let forms = s.endings.is_some();
        let mut word_firsts: HashMap<String, usize> = HashMap::new();
        let mut fuzzy_firsts: HashMap<String, usize> = HashMap::new();
        let mut any_firsts: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut any_keys: Vec<Vec<u8>> = Vec::new();
        // Normalising and parsing the entries is most of the work, and each is on its own.
        // Each entry, with the variants it stands for: the orders of an `&` entry, and the
        // glued and wrongly split readings of a two-word phrase in a typo-tolerant list.
        let parsed: Vec<Vec<Vec<Phrase>>> = lists
            .par_iter()
            .map(|spec| {
                let parse = |entry: &String| {
                    let options = spec.options;
                    phrase::parse_variants(
                        &norm.normalize(entry.trim()),
                        options.gap,
                        options.typos_from,
                        forms,
                    )
                    .unwrap_or_default()
                };
                spec.words.iter().map(parse).collect()
            })
            .collect();
        for (l, (spec, phrases)) in lists.iter().zip(parsed).enumerate() {
            let list = u32::try_from(l).unwrap_or(u32::MAX);
            s.negations.push(
                spec.options
                    .negated_by
                    .map(|(n, w)| (u32::try_from(n).unwrap_or(u32::MAX), w)),
            );
            for (e, p) in phrases
                .into_iter()
                .enumerate()
                .flat_map(|(e, variants)| variants.into_iter().map(move |p| (e, p)))
            {
                let pid = u32::try_from(s.phrases.len()).unwrap_or(u32::MAX);
                let first = p.words[0].stem.clone();
                if first.chars().next().is_some_and(is_word) {
                    let next = word_firsts.len();
                    let k = *word_firsts.entry(first.clone()).or_insert(next);
                    push_at(&mut s.word_heads, k, Target::Phrase(pid));
                    if p.words[0].fuzzy {
                        let next = fuzzy_firsts.len();
                        let k = *fuzzy_firsts.entry(first).or_insert(next);
                        push_at(&mut s.fuzzy_heads, k, pid);
                    }
                } else {
                    let k = key_index(&mut any_firsts, &mut any_keys, first.into_bytes());
                    push_at(&mut s.any_heads, k, Target::Phrase(pid));
                }
                s.phrases.push(p);
                s.owner.push((list, u32::try_from(e).unwrap_or(u32::MAX)));
            }
            for (e, re) in spec.patterns.iter().enumerate() {
                let Some(re) = re else { continue };
                let k = u32::try_from(s.patterns.len()).unwrap_or(u32::MAX);
                match &re.start {
                    PatternStart::AtWords(prefixes) => {
                        for prefix in prefixes {
                            let next = word_firsts.len();
                            let i = *word_firsts.entry(prefix.clone()).or_insert(next);
                            push_at(&mut s.word_heads, i, Target::Pattern(k));
                        }
                    }
                    PatternStart::Prefixes(prefixes) => {
                        for prefix in prefixes {
                            let i = key_index(&mut any_firsts, &mut any_keys, prefix.clone());
                            push_at(&mut s.any_heads, i, Target::Pattern(k));
                        }
                    }
                    PatternStart::AtStart => s.at_start.push(k),
                    PatternStart::Anywhere => s.unanchored.push(k),
                }
                s.patterns.push(Pattern {
                    re: re.clone(),
                    list,
                    entry: u32::try_from(spec.words.len() + e).unwrap_or(u32::MAX),
                });
            }
        }
        let first_word = |t: &Target| match *t {
            Target::Phrase(pid) => Some(&s.phrases[pid as usize].words[0]),
            Target::Pattern(_) => None,
        };
        for heads in &mut s.word_heads {
            let whole = |t: &Target| first_word(t).is_some_and(|w| w.whole);
            heads.sort_by_key(whole);
            // Only a stem that ends with a word character can be followed by more of a word
            // (all phrases under one stem share it).
            let ends_in_word = heads
                .iter()
                .any(|t| first_word(t).is_some_and(|w| w.ends_in_word));
            s.heads_whole_from.push(if ends_in_word {
                heads.partition_point(|t| !whole(t))
            } else {
                heads.len()
            });
            s.heads_phrase
                .push(heads.iter().any(|t| first_word(t).is_some()));
        }
        let mut firsts: Vec<(String, usize)> = word_firsts.into_iter().collect();
        firsts.sort_unstable_by_key(|f| f.1);
        let stems: Vec<&str> = firsts.iter().map(|f| f.0.as_str()).collect();
        if !stems.is_empty() {
            match WordStarts::new(&stems) {
                Ok(a) => s.at_word_starts = Some(a),
                Err(e) => s.error = Some(e.to_string()),
            }
        }
        if !fuzzy_firsts.is_empty() {
            match FuzzyStems::new(fuzzy_firsts.into_iter().collect()) {
                Ok(f) => s.fuzzy = Some(f),
                Err(e) => s.error = Some(e.to_string()),
            }
        }
        if !any_keys.is_empty() {
            match AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&any_keys)
            {
                Ok(a) => s.anywhere = Some(a),
                Err(e) => s.error = Some(e.to_string()),
            }
        }
        s
    }

    /// Why the automata could not be built, if they could not (the lists then never match).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many lists were compiled.
    pub fn len(&self) -> usize {
        self.lists
    }

    /// Whether no list was compiled.
    pub fn is_empty(&self) -> bool {
        self.lists == 0
    }

    /// Calls `f` with every match of every entry in `text` (normalised by the same
    /// [`Normalizer`]), in no particular order; negation is not applied.
    pub(super) fn each_hit(&self, text: &str, words: &[(u32, u32)], mut f: impl FnMut(ListHit)) {
        let spans = phrase::Words::new(text, words).with_endings(self.endings.as_deref());
        let mut emit = |who: Target, start: usize, end: usize, typo: bool| {
            let (list, entry) = match who {
                Target::Phrase(pid) => self.owner[pid as usize],
                Target::Pattern(k) => {
                    let p = &self.patterns[k as usize];
                    (p.list, p.entry)
                }
            };
            f(ListHit {
                list,
                hit: Hit {
                    entry: entry as usize,
                    start,
                    end,
                    typo,
                },
            });
        };
        // Patterns, by where their first prefix occurs.
        let mut candidates: Vec<(u32, usize)> = Vec::new();
        // Patterns found at a word start (each is reported once, where it first matches).
        let mut matched: Vec<u32> = Vec::new();
        // Patterns tried at the current word start.
        let mut tried_here: Vec<u32> = Vec::new();
        let mut fuzzy_cache = None;
        if let Some(ac) = &self.anywhere {
            for m in ac.find_overlapping_iter(text) {
                for t in &self.any_heads[m.pattern().as_usize()] {
                    match *t {
                        Target::Phrase(pid) => {
                            let p = &self.phrases[pid as usize];
                            if let Some(end) =
                                phrase::match_rest(&spans, m.start(), p, 0, m.len(), false)
                            {
                                emit(Target::Phrase(pid), m.start(), end, p.slip);
                            }
                        }
                        Target::Pattern(k) => match candidates.iter_mut().find(|c| c.0 == k) {
                            Some(c) => c.1 = c.1.min(m.start()),
                            None => candidates.push((k, m.start())),
                        },
                    }
                }
            }
        }
        if self.at_word_starts.is_some() || self.fuzzy.is_some() {
            for &(i, word_end) in words {
                let (i, word_end) = (i as usize, word_end as usize);
                // The longest stem found exactly here: a word a list knows is not read as a typo
                // of another.
                let mut known = 0;
                tried_here.clear();
                if let Some(a) = &self.at_word_starts {
                    let mut found = |end: usize, stem: usize| {
                        // The rest of the word is the same for every phrase of this stem.
                        let rest = if end <= word_end {
                            word_end - end
                        } else {
                            phrase::word_len(&text[end..])
                        };
                        if self.heads_phrase[stem] {
                            known = known.max(end - i);
                        }
                        let mut heads = self.word_heads[stem].as_slice();
                        if rest > 0 && end <= word_end {
                            // The word goes on: no phrase that wants it whole can match.
                            heads = &heads[..self.heads_whole_from[stem]];
                        }
                        for &t in heads {
                            let pid = match t {
                                Target::Phrase(pid) => pid,
                                Target::Pattern(k) => {
                                    // Tried where its prefix starts a word, until it matches
                                    // (once here, though several of its prefixes end here).
                                    if !matched.contains(&k) && !tried_here.contains(&k) {
                                        tried_here.push(k);
                                        let p = &self.patterns[k as usize];
                                        if let Some((s, e)) = p.re.find_at(text, i) {
                                            matched.push(k);
                                            emit(Target::Pattern(k), s, e, false);
                                        }
                                    }
                                    continue;
                                }
                            };
                            let p = &self.phrases[pid as usize];
                            let w = &p.words[0];
                            if rest > 0 && !spans.ending_fits(w, &text[end..end + rest]) {
                                // A whole word, or a word in its forms, and this one goes on
                                // past what they allow.
                            } else if p.words.len() == 1 {
                                // One word, the common case: only its end is left to check.
                                let end = if w.ends_in_word { end + rest } else { end };
                                emit(Target::Phrase(pid), i, end, p.slip);
                            } else if let Some(e) =
                                phrase::match_rest(&spans, i, p, 0, end - i, p.slip)
                            {
                                emit(Target::Phrase(pid), i, e, p.slip);
                            }
                        }
                    };
                    a.walk(text, i, &mut found);
                }
                // Known: an exact stem of typo length covers all but an ending of two letters.
                let is_known = |fz: &super::fuzzy::FuzzyStems| {
                    i + known <= word_end
                        && super::char_len(&text[i..i + known]) >= fz.min_letters()
                        && super::char_len(&text[i + known..word_end]) <= 2
                };
                if let Some(fz) = &self.fuzzy
                    && !is_known(fz)
                {
                    fz.walk(&mut fuzzy_cache, &text[i..word_end], |h| {
                        for &pid in self.fuzzy_heads.get(h.stem).into_iter().flatten() {
                            let p = &self.phrases[pid as usize];
                            if let Some(e) = phrase::match_rest(&spans, i, p, 0, h.len, true) {
                                emit(Target::Phrase(pid), i, e, true);
                            }
                        }
                    });
                }
            }
        }
        for &k in &self.at_start {
            if let Some((s, e)) = self.patterns[k as usize].re.find_at(text, 0) {
                emit(Target::Pattern(k), s, e, false);
            }
        }
        let unanchored = self.unanchored.iter().map(|&k| (k, 0));
        for (k, mut from) in candidates.into_iter().chain(unanchored) {
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            let p = &self.patterns[k as usize];
            if let Some((s, e)) = p.re.find_from(text, from) {
                emit(Target::Pattern(k), s, e, false);
            }
        }
    }

    /// What `text` (normalised by the same [`Normalizer`]) matches: each list's first hit, a
    /// hit preceded by its list's negation left out.
    pub fn scan(&self, text: &str) -> Hits {
        self.scan_words(text, &super::word_spans(text))
    }

    /// [`scan`](Self::scan) of a normalised message, whose words were found as it was
    /// normalised.
    pub fn scan_normalized(&self, normalized: &super::Normalized) -> Hits {
        self.scan_words(&normalized.text, normalized.words())
    }

    fn scan_words(&self, text: &str, words: &[(u32, u32)]) -> Hits {
        let mut all: SmallVec<[ListHit; 16]> = SmallVec::new();
        self.each_hit(text, words, |h| all.push(h));
        if all.is_empty() {
            return Hits::default();
        }
        // Each list's hits in the order they occur (exact before typo at the same place).
        all.sort_unstable_by_key(|h| (h.list, h.hit.start, h.hit.typo, h.hit.entry, h.hit.end));
        let mut hits = Hits::default();
        let mut i = 0;
        while i < all.len() {
            let list = all[i].list;
            let end = i + all[i..].iter().take_while(|h| h.list == list).count();
            let negation = self.negations.get(list as usize).copied().flatten();
            let mut first_negated = None;
            let found = all[i..end].iter().find(|h| match negation {
                None => true,
                Some((by, within)) => match negating_hit(&all, by, within, text, h.hit.start) {
                    Some(n) => {
                        first_negated.get_or_insert(Negated {
                            list,
                            hit: h.hit,
                            by: n,
                        });
                        false
                    }
                    None => true,
                },
            });
            match found {
                Some(h) => hits.first.push(*h),
                None => hits.negated.extend(first_negated),
            }
            i = end;
        }
        hits
    }

    /// Calls `seen(list, entry)` for every entry that occurs anywhere in `text`, negated or
    /// not (test coverage; the decision path uses [`scan`](Self::scan)).
    pub fn each_entry_in(&self, text: &str, mut seen: impl FnMut(usize, usize)) {
        self.each_hit(text, &super::word_spans(text), |h| {
            seen(h.list as usize, h.hit.entry)
        });
    }
}

/// A hit of list `by` ending at most `within` words before `start`.
fn negating_hit(
    all: &[ListHit],
    by: u32,
    within: usize,
    text: &str,
    start: usize,
) -> Option<ListHit> {
    let from = all.partition_point(|h| h.list < by);
    all[from..]
        .iter()
        .take_while(|h| h.list == by)
        .filter(|h| h.hit.end <= start)
        .find(|h| words_between(&text[h.hit.end..start]) <= within)
        .copied()
}

/// How many words stand in `s`; a clause break (`,` `.` `;` `:` `!` `?`) ends a negation's
/// reach, so it counts as too many.
fn words_between(s: &str) -> usize {
    if s.contains([',', '.', ';', ':', '!', '?']) {
        return usize::MAX;
    }
    let mut n = 0;
    each_word_start(s, |_| {
        n += 1;
        false
    });
    n
}

/// Adds `v` to what key `k` starts (once: two prefixes of a pattern may end the same).
fn push_at<T: PartialEq>(heads: &mut Vec<Vec<T>>, k: usize, v: T) {
    if heads.len() <= k {
        heads.resize_with(k + 1, Vec::new);
    }
    if !heads[k].contains(&v) {
        heads[k].push(v);
    }
}

fn key_index(index: &mut HashMap<Vec<u8>, usize>, keys: &mut Vec<Vec<u8>>, key: Vec<u8>) -> usize {
    if let Some(&k) = index.get(&key) {
        return k;
    }
    keys.push(key.clone());
    index.insert(key, keys.len() - 1);
    keys.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Lists of words only: (words, options).
    fn scanner(lists: &[(Vec<String>, ListOptions)]) -> Scanner {
        scanner_with(&Normalizer::default(), lists)
    }

    fn scanner_with(norm: &Normalizer, lists: &[(Vec<String>, ListOptions)]) -> Scanner {
        let specs: Vec<ListSpec<'_>> = lists
            .iter()
            .map(|(w, o)| ListSpec {
                words: w,
                patterns: &[],
                options: o,
            })
            .collect();
        Scanner::new(&specs, norm)
    }

    /// A list that tolerates typos in stems of five letters and more, with a gap of two.
    fn tolerant() -> ListOptions {
        ListOptions {
            gap: 2,
            typos_from: Some(5),
            negated_by: None,
        }
    }

    /// A scanner whose language declares `endings`, over lists of words only.
    fn with_endings(endings: &[&str], lists: &[(Vec<String>, ListOptions)]) -> Scanner {
        let norm = Normalizer::with_options(
            [],
            super::super::NormalizerOptions {
                word_endings: Some(words(endings)),
                ..super::super::NormalizerOptions::default()
            },
        );
        scanner_with(&norm, lists)
    }

    #[test]
    fn with_endings_a_stem_matches_its_word_in_its_forms_only() {
        let typos = tolerant();
        let s = with_endings(
            &["s", "es", "ed", "ing"],
            &[
                (words(&["book", "mark*", "call$"]), ListOptions::default()),
                (words(&["price … list"]), typos.clone()),
                (words(&["dollar"]), typos),
            ],
        );
        let found = |text: &str, list: usize| -> Option<String> {
            s.scan(text)
                .get(list)
                .map(|h| text[h.start..h.end].to_owned())
        };
        // The word in its forms.
        for (text, word) in [
            ("a book", "book"),
            ("two books", "books"),
            ("booked it", "booked"),
        ] {
            assert_eq!(found(text, 0).as_deref(), Some(word), "{text}");
        }
        // Not a longer, unrelated word.
        assert_eq!(found("ask the bookkeeper", 0), None);
        assert_eq!(found("a booklet", 0), None);
        // `*` still starts a word; `$` is the word itself.
        assert_eq!(found("the marketing plan", 0).as_deref(), Some("marketing"));
        assert_eq!(found("calls", 0), None);
        // Every word of a phrase, and a typo, keep the rule.
        assert_eq!(
            found("prices of the lists", 1).as_deref(),
            Some("prices of the lists")
        );
        assert_eq!(found("priceless lists", 1), None);
        assert_eq!(found("the dolar rate", 2).as_deref(), Some("dolar"));
        assert_eq!(found("dolars", 2).as_deref(), Some("dolars"));
        assert_eq!(found("dollarization", 2), None);
    }

    #[test]
    fn an_any_order_entry_matches_its_words_either_way_with_a_gap() {
        let s = scanner(&[(
            words(&["rate & dollar"]),
            ListOptions {
                gap: 2,
                ..ListOptions::default()
            },
        )]);
        for text in [
            "the rate of the dollar",
            "dollar rate",
            "dollar, what rate today",
        ] {
            assert!(s.scan(text).get(0).is_some(), "{text}");
        }
        assert!(
            s.scan("the dollar is up, and the exchange office has a good rate")
                .get(0)
                .is_none()
        );
        assert!(parse_variants("rate & & dollar").is_err());
        assert!(parse_variants("& rate").is_err());
        assert!(parse_variants("&").is_err(), "no words at all");
        assert!(parse_variants("& &").is_err());
        assert!(parse_variants("a & b & c & d").is_err());
        assert_eq!(parse_variants("a & b & c").map(|v| v.len()), Ok(6));
    }

    fn parse_variants(entry: &str) -> Result<Vec<Phrase>, super::super::EntryError> {
        phrase::parse_variants(entry, 2, None, false)
    }

    #[test]
    fn a_tolerant_list_reads_two_words_glued_or_split_one_letter_off() {
        let tolerant = tolerant();
        let s = scanner(&[
            (words(&["what price"]), tolerant.clone()),
            (words(&["what price"]), ListOptions::default()),
        ]);
        for text in [
            "whatprice now",
            "wha tprice now",
            "whatp rice now",
            "what price now",
        ] {
            let hits = s.scan(text);
            assert!(hits.get(0).is_some(), "{text}");
            assert_eq!(
                hits.get(1).is_some(),
                text.starts_with("what price"),
                "{text}"
            );
        }
        // A moved boundary is the one slip: no typo on top of it, and short words keep theirs.
        assert!(s.scan("wha tprise now").get(0).is_none());
        let short = scanner(&[(words(&["to go"]), tolerant)]);
        assert!(short.scan("togo").get(0).is_none());
    }

    #[test]
    fn a_tolerant_list_forgives_a_missing_or_swapped_first_letter_in_long_words() {
        let tolerant = tolerant();
        let s = scanner(&[
            (words(&["schedule", "price"]), tolerant),
            (words(&["schedule"]), ListOptions::default()),
        ]);
        for text in ["chedule of trains", "cshedule of trains"] {
            let hits = s.scan(text);
            let h = hits.get(0).unwrap_or_else(|| panic!("{text}"));
            assert!(h.typo, "{text}: read as a typo");
            assert!(
                hits.get(1).is_none(),
                "{text}: only a tolerant list forgives it"
            );
        }
        // Short stems keep their first letter, and the slip is the one typo.
        assert!(s.scan("rice of bread").get(0).is_none());
        assert!(s.scan("chedulle of trains").get(0).is_none());
    }

    #[test]
    fn without_endings_a_stem_starts_a_word_as_before() {
        let s = scanner(&[(words(&["book"]), ListOptions::default())]);
        assert!(s.scan("ask the bookkeeper").get(0).is_some());
    }

    #[test]
    fn one_scan_finds_every_list_with_its_first_hit() {
        let s = scanner(&[
            (words(&["lett", "mail$"]), ListOptions::default()),
            (words(&["how much"]), ListOptions::default()),
            (words(&["mail"]), ListOptions::default()),
        ]);
        let text = "how much is a mailbox stamp for letters";
        let hits = s.scan(text);
        assert_eq!(hits.lists().collect::<Vec<_>>(), vec![0, 1, 2]);
        let h = hits.get(0).expect("list 0");
        assert_eq!(
            &text[h.start..h.end],
            "letters",
            "'mail$' must not match 'mailbox'"
        );
        assert_eq!(
            &text[hits.get(2).expect("list 2").start..],
            "mailbox stamp for letters"
        );
    }

    #[test]
    fn a_stem_is_found_only_where_a_word_starts_with_it() {
        // "pit" ends where "kupit" ends: it is in the word, but the word does not start with it.
        let s = scanner(&[
            (words(&["kupit"]), ListOptions::default()),
            (words(&["pit", "upi"]), ListOptions::default()),
        ]);
        assert_eq!(s.scan("kupit this").lists().collect::<Vec<_>>(), vec![0]);
        assert_eq!(
            s.scan("kupit a pitcher").lists().collect::<Vec<_>>(),
            vec![0, 1]
        );
    }

    #[test]
    fn a_negation_just_before_a_match_cancels_it() {
        let opts = ListOptions {
            negated_by: Some((1, 1)),
            ..ListOptions::default()
        };
        let s = scanner(&[
            (words(&["delet", "remov"]), opts),
            (words(&["not$", "never$"]), ListOptions::default()),
        ]);
        assert!(
            s.scan("please do not delete the goal, just rename it")
                .get(0)
                .is_none()
        );
        assert!(s.scan("never ever remove it").get(0).is_none());
        let negated = s.scan("do not delete it").negated(0).copied();
        assert_eq!(negated.map(|n| n.by.list), Some(1));
        assert!(s.scan("delete the goal").get(0).is_some());
        // Far from the negation, or a later match without one, counts.
        assert!(s.scan("not sure, but delete it").get(0).is_some());
        assert!(s.scan("do not delete this, remove that").get(0).is_some());
        assert!(
            s.scan("it does not count, delete it").get(0).is_some(),
            "a comma ends it"
        );
    }

    #[test]
    fn typo_tolerant_stems_match_one_letter_off() {
        let opts = ListOptions {
            typos_from: Some(5),
            ..ListOptions::default()
        };
        // `é` and `ü` take two bytes: edits are counted in letters.
        let s = scanner(&[(words(&["dollar", "rate$", "café", "müller"]), opts)]);
        for text in [
            "dolar", "dollra", "dollars", "dorllar", "muller", "müllre", "müler",
        ] {
            let h = s.scan(text).get(0);
            assert!(h.is_some_and(|h| h.end == text.len()), "{text}");
        }
        assert!(s.scan("dolar").get(0).is_some_and(|h| h.typo));
        assert!(s.scan("rtae").get(0).is_none(), "short stems stay exact");
        assert!(
            s.scan("tollar").get(0).is_none(),
            "the first letter must be right"
        );
        assert!(s.scan("cafe").get(0).is_none(), "four letters: exact only");
    }

    #[test]
    fn a_word_a_list_knows_is_not_a_typo_of_another() {
        let typos = ListOptions {
            typos_from: Some(5),
            ..ListOptions::default()
        };
        let s = scanner(&[
            (words(&["dollar"]), typos),
            (words(&["dollas"]), ListOptions::default()),
        ]);
        // One letter off "dollar", but "dollas" is a word the second list knows.
        assert!(s.scan("dollor").get(0).is_some());
        let hits = s.scan("dollas");
        assert!(hits.get(1).is_some() && hits.get(0).is_none());
    }

    /// One list of patterns only.
    fn pattern_scanner(sources: &[&str]) -> Scanner {
        let patterns: Vec<Option<ListPattern>> = sources
            .iter()
            .map(|p| Some(super::super::compile_list_pattern(p).expect("valid")))
            .collect();
        let spec = ListSpec {
            words: &[],
            patterns: &patterns,
            options: &ListOptions::default(),
        };
        Scanner::new(&[spec], &Normalizer::default())
    }

    #[test]
    fn patterns_run_only_from_their_prefix_and_keep_word_boundaries() {
        let s = pattern_scanner(&[r"\btop\s*\d+", r"\d+\s*k\b", r"\bto\s+\d+\s*m\b"]);
        let text = "stop 5, or rather top 10";
        let h = s.scan(text).get(0).expect("a hit");
        assert_eq!(&text[h.start..h.end], "top 10");
        assert!(s.scan("desktop 5").get(0).is_none());
        assert_eq!(s.scan("up to 30 k").get(0).map(|h| h.entry), Some(1));
        // A pattern that starts a word is tried at every start of its prefix until it matches.
        let text = "to be paid up to 30 m";
        let h = s.scan(text).get(0).expect("a hit");
        assert_eq!((&text[h.start..h.end], h.entry), ("to 30 m", 2));
        // Anchored at the start: tried there only; a prefix cut inside a letter still counts.
        let s = pattern_scanner(&[r"^(?:so\s+)?what\b", r"\b\u{3BA}\u{3B1}(\u{3BB}|\u{3BC})"]);
        assert_eq!(s.scan("so what is it").get(0).map(|h| h.entry), Some(0));
        assert!(s.scan("and so what").get(0).is_none());
        assert_eq!(
            s.scan("so \u{3BA}\u{3B1}\u{3BB}\u{3B7}")
                .get(0)
                .map(|h| h.start),
            Some("so ".len())
        );
    }
}
