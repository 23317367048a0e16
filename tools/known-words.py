"""Maintainer aid, not part of the build (needs `pip install wordfreq pymorphy3`): writes
`matching.typos.known_words`, real words that are never read as a typo: the most frequent word
forms of the language (top GENERAL, so that a stem added later, or a pack grown with many stems,
does not turn everyday words into its typos), and every frequent form (top N) that some list's
stem would read as a typo of itself («после» for `посте`, «почти» for `почта`, «делать» for
`сделать` without its first letter).

Evidence: the most frequent word forms of the language (wordfreq, top N), kept only when the
OpenCorpora dictionary (pymorphy3) knows them (so a common misspelling, «щас», «долара», stays a
typo). Matching as the engine does it: every list's first stems of `matching.typos.from` letters
or more (or the list's `typos_from`; none with `typos: false`), one edit (the first letter from
`first_letter_from` letters), followed by one of `matching.word_endings` or nothing (`$`:
nothing); a word that some entry matches exactly, or whose stem is a word of some entry, is known
already and not written.

Usage: python3 tools/known-words.py rules [N [GENERAL]]   (defaults 300000 and 10000)
Rewrites the `known_words:` list of rules/matching.yaml (one line of words a first letter);
prints what it decided on stderr."""
import collections, glob, re, sys
import yaml
import pymorphy3
from wordfreq import top_n_list, word_frequency

rules = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 300_000
general = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
norm = lambda s: s.lower().replace('ё', 'е')
lists, matching, matching_file = [], None, None
for f in sorted(glob.glob(rules + '/*.yaml')):
    d = yaml.safe_load(open(f, encoding='utf-8')) or {}
    lists += d.get('word_lists') or []
    if d.get('matching'):
        matching, matching_file = d['matching'], f
typos = matching.get('typos') or {}
FROM, FIRST = typos['from'], typos.get('first_letter_from', 6)
END = {norm(e) for e in matching.get('word_endings') or []}

def parse(word):
    if word.endswith('$'):
        return word[:-1], 'whole'
    if word.endswith('*'):
        return word[:-1], 'star'
    return word, 'forms'

tolerant = {}                         # stem -> set of kinds
entry_words, first_stems = set(), collections.defaultdict(set)
for l in lists:
    own = None if l.get('typos') is False else l.get('typos_from', FROM)
    for e in l.get('words') or []:
        words = [w for w in norm(e).split() if w not in ('…', '...', '&')]
        for i, w in enumerate(words):
            stem, kind = parse(w)
            entry_words.add(stem)
            if i == 0:
                first_stems[stem].add(kind)
                if own is not None and len(stem) >= own and stem.isalpha():
                    tolerant.setdefault(stem, set()).add(kind)

def ending_fits(kind, rest, typo):
    if rest == '':
        return True
    if kind == 'whole':
        return False
    return rest in END if (typo or kind == 'forms') else True

def edit_at(s, w):
    at = 0
    while at < len(s) and at < len(w) and s[at] == w[at]:
        at += 1
    a, b = s[at:], w[at:]
    if len(a) == len(b):
        ok = a != '' and (a[1:] == b[1:] or (len(a) >= 2 and a[:2] == b[1::-1] and a[2:] == b[2:]))
    elif len(a) == len(b) + 1:
        ok = a[1:] == b
    elif len(a) + 1 == len(b):
        ok = b[1:] == a
    else:
        ok = False
    return at if ok else None

index = collections.defaultdict(set)  # the stems' deletion neighbourhoods
for s in tolerant:
    index[s].add(s)
    for i in range(len(s)):
        index[s[:i] + s[i + 1:]].add(s)

def typo_of(w):
    """The tolerant stems `w` reads as with one typo."""
    found = set()
    for m in range(1, len(w) + 1):
        p = w[:m]
        for key in [p] + [p[:i] + p[i + 1:] for i in range(m)]:
            for s in index.get(key, ()):
                for n in (len(s) - 1, len(s), len(s) + 1):
                    if not 1 <= n <= len(w):
                        continue
                    at = edit_at(s, w[:n])
                    if at is None or (at == 0 and len(s) < FIRST):
                        continue
                    if any(ending_fits(k, w[n:], True) for k in tolerant[s]):
                        found.add(s)
    return found

def known_already(w):
    """Some entry matches it exactly, or its stem is a word of some entry."""
    for m in range(len(w), 0, -1):
        if w[:m] in entry_words and (m == len(w) or w[m:] in END):
            return True
        # As the engine decides it: an exact stem of typo length covering all but two letters.
        kinds = first_stems.get(w[:m])
        if kinds and m >= FROM and len(w) - m <= 2 and any(ending_fits(k, w[m:], False) for k in kinds):
            return True
    return False

morph = pymorphy3.MorphAnalyzer()
known, colliding, mass = set(), 0, 0.0
for rank, w in enumerate(top_n_list('ru', top)):
    w = norm(w)
    if not re.fullmatch(r'[а-я]+', w) or w in known or not morph.word_is_known(w):
        continue
    # A word some entry already knows (its stem and an ending) is left out: the engine knows
    # it anyway, and the rule files must fit a 1 MiB ConfigMap (deploy/kubernetes).
    if known_already(w):
        continue
    if rank < general:
        known.add(w)
        continue
    stems = typo_of(w)
    if stems:
        known.add(w)
        colliding += 1
        mass += word_frequency(w, 'ru')
        print(f"{w}: {' '.join(sorted(stems))}", file=sys.stderr)
print(f"{len(known)} known words: the top {general} forms the dictionary knows, and {colliding} "
      f"more of the top {top} that a stem would read as its typo ({mass * 1e6:.0f} per million "
      f"words of text)", file=sys.stderr)

# One line of words a first letter, in place of the old list.
by_letter = collections.defaultdict(list)
for w in sorted(known):
    by_letter[w[0]].append(w)
block = '    known_words:\n' + ''.join(f'      - {" ".join(ws)}\n' for _, ws in sorted(by_letter.items()))
text = open(matching_file, encoding='utf-8').read()
new, n = re.subn(r'    known_words:(?: \[\])?\n(?:      - .*\n)*', lambda _: block, text)
if n != 1:
    sys.exit(f"{matching_file}: no 'known_words:' list under matching.typos to rewrite")
open(matching_file, 'w', encoding='utf-8').write(new)
