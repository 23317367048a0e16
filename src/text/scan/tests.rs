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
            normalized: None,
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
        typo_first_letter_from: Some(6),
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
    // A wrong first letter, or one too many, is a slip like the others.
    for text in ["shedule of trains", "sschedule of trains"] {
        assert!(s.scan(text).get(0).is_some_and(|h| h.typo), "{text}");
    }
}

#[test]
fn a_known_word_is_not_a_typo_of_a_stem() {
    let opts = ListOptions {
        typos_from: Some(4),
        ..tolerant()
    };
    let s = scanner(&[(words(&["stop"]), opts)]);
    assert!(s.scan("please stpo").get(0).is_some_and(|h| h.typo));
    assert!(s.scan("a stoat").get(0).is_some_and(|h| h.typo));
    let s = s.with_known_words(["stoat"]);
    assert!(s.scan("a stoat").get(0).is_none(), "a real word");
    assert!(s.scan("please stpo").get(0).is_some(), "still a typo");
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
        normalized: None,
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
    // A pattern found anywhere, by the shortest of its prefixes (`ab`, not `ab 1`, `ab-`, …).
    let s = pattern_scanner(&[r"ab\s*-?\s*\d+"]);
    for (text, found) in [
        ("xab - 12", Some((1, 8))),
        ("ab", None),
        ("abab 3", Some((2, 6))),
    ] {
        let hit = s.scan(text).get(0).map(|h| (h.start, h.end));
        assert_eq!(hit, found, "{text}");
    }
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
