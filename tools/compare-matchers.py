"""Maintainer aid, not part of the build (needs `pip install pymorphy3 snowballstemmer pyyaml`):
measures the three ways a word-list entry could match a word in its forms, on the pack's own
entries, against the OpenCorpora dictionary (pymorphy3) as the judge.

For every unmarked one-word Cyrillic entry of `rules/*.yaml` word lists that is itself a
dictionary word, every dictionary word that starts with it is either one of its forms (some
reading of it has the entry's lemma) or another word («товаровед» for «товар»). Each way is
scored on both: the forms it matches (higher is better) and the other words it matches (lower
is better).

- prefix:   the word starts with the entry (the matcher before `word_endings`);
- endings:  the word is the entry plus one ending of `matching.word_endings` (what ships);
- snowball: the word and the entry have the same Snowball stem (Russian Snowball, as in the
            `rust-stemmers` crate).

Usage: python3 tools/compare-matchers.py rules"""
import glob
import sys

import pymorphy3
import snowballstemmer
import yaml

rules = sys.argv[1] if len(sys.argv) > 1 else "rules"
m = pymorphy3.MorphAnalyzer()
snow = snowballstemmer.stemmer("russian")


def norm(w):
    return w.lower().replace("ё", "е")


endings = set()
entries = set()
for path in glob.glob(f"{rules}/*.yaml"):
    doc = yaml.safe_load(open(path, encoding="utf-8")) or {}
    endings |= {norm(e) for e in (doc.get("matching") or {}).get("word_endings") or []}
    for wl in doc.get("word_lists") or []:
        for e in wl.get("words") or []:
            e = norm(e.strip())
            if " " not in e and e.isalpha() and all("а" <= c <= "я" for c in e):
                entries.add(e)

totals = {k: [0, 0] for k in ("prefix", "endings", "snowball")}
forms_total = others_total = judged = 0
examples = {k: [] for k in totals}
for entry in sorted(entries):
    if not m.word_is_known(entry):
        continue
    lemmas = {p.normal_form for p in m.parse(entry)}
    words = {}
    for prefix in {entry, entry.replace("е", "ё")}:
        for word, _tag, normal, _para, _idx in m.dictionary.iter_known_words(prefix):
            words.setdefault(norm(word), set()).add(norm(normal))
    if not words:
        continue
    judged += 1
    stem = snow.stemWord(entry)
    for word, normals in words.items():
        is_form = bool(normals & lemmas) or word == entry
        matched = {
            "prefix": True,
            "endings": word == entry or word[len(entry):] in endings,
            "snowball": snow.stemWord(word) == stem,
        }
        if is_form:
            forms_total += 1
        else:
            others_total += 1
        for way, hit in matched.items():
            if hit:
                totals[way][0 if is_form else 1] += 1
                if not is_form and len(examples[way]) < 6:
                    examples[way].append(f"{entry}→{word}")

print(f"{judged} entries judged; {forms_total} forms of them, {others_total} other words that start with them")
for way, (forms, others) in totals.items():
    print(
        f"{way:9} forms matched {forms:6} ({100 * forms / max(forms_total, 1):5.1f} %)   "
        f"other words matched {others:6} ({100 * others / max(others_total, 1):5.1f} %)   "
        f"e.g. {', '.join(examples[way][:4])}"
    )
