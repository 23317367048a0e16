"""Maintainer aid, not part of the build (needs `pip install pymorphy3`): writes the Russian
endings table for `matching.word_endings` (`--endings`) and marks with `*` the stems of the pack that word-aware matching (matching.word_endings) would
cut off: a stem that is no word form plus an ending (a truncated root such as `редактир`), or
one cut inside a word's paradigm (some forms of a word are stem + ending, others go on past
it). Evidence: the OpenCorpora dictionary (pymorphy3). Idempotent; prints what it decided and why on stderr.

Usage: python3 tools/mark-stems.py rules 2> decisions.txt"""
import re, sys, glob
import pymorphy3

# Reviewed by hand: stems whose lost longer words are the ones the list means (a comment is
# «комментарий», a tone «ироничный», «уникальный», «анонсировать», «формулировка», «доступен»,
# «итоговый», «один/одна»): they keep starting a word.
STARTS_WITH = {'коммент', 'ирони', 'уник', 'анонс', 'формул', 'доступ', 'итого', 'одн'}

m = pymorphy3.MorphAnalyzer()
# The endings: inflection of nouns, adjectives and verbs, and the common diminutives (no other
# derivation: «товаровед» is not a form of «товар»).
noun = "а я о е ё ы и у ю ь й ой ей ою ею ом ем ём ам ям ами ями ах ях ов ев ёв ью ьи ье ьё ьям ьями ьях ьев ий ия ию ием ии ие ье".split()
adj = "ый ий ой ая яя ое ее ые ие ого его ому ему ым им ую юю ых их ыми ими ом ем ей ою ею".split()
verb = ("ть ти ться тись ю у ешь ет ем ете ут ют ишь ит им ите ат ят юсь усь ешься ется емся етесь утся ются "
        "ишься ится имся итесь атся ятся ёшь ёт ём ёте ёшься ётся ёмся ётесь л ла ло ли лся лась лось лись "
        "й йте и ите ь ьте йся йтесь ись итесь ься ьтесь те ся сь").split()
vowels = "аяиеоуы"
vv = []
for v in vowels:
    for e in "ть ться л ла ло ли лся лась лось лись й йте йся йтесь ю ют ет ешь ем ете ем юсь ется ются ешься емся етесь".split():
        vv.append(v + e)
dim = "ка ки ку ке кой кою ок ек очка очки очку очке очкой ечка ечки ечку ечке ечкой ик ика ику ике иком ики иков ишка ишки ишку".split()
out = sorted(set(noun + adj + verb + vv + dim), key=lambda e: (len(e), e))
END = set(out)
ENDINGS = out
cache = {}
def norm(w): return w.lower().replace('ё', 'е')
def decide(stem):
    """True: mark `*`."""
    if stem in cache: return cache[stem]
    s = norm(stem)
    if s in STARTS_WITH:
        cache[stem] = (True, 'reviewed: the longer words are meant'); return cache[stem]
    if not re.fullmatch(r'[а-я]+', s) or len(s) < 2:
        cache[stem] = (True, 'not a Cyrillic word'); return cache[stem]
    found = {}
    for prefix in {s, s.replace('е', 'ё')}:
        for word, tag, normal, para, idx in m.dictionary.iter_known_words(prefix):
            found.setdefault(norm(word), set()).add(norm(normal))
    F = {w: l for w, l in found.items() if w[len(s):] in END or w == s}
    lost = {w: l for w, l in found.items() if w not in F}
    if not F:
        cache[stem] = (True, f'no word form is the stem + an ending ({len(found)} words start with it)'); return cache[stem]
    lemmas = set().union(*F.values())
    cut = sorted(w for w, l in lost.items() if l & lemmas)
    if cut:
        cache[stem] = (True, f'cut inside a paradigm: {", ".join(cut[:4])}'); return cache[stem]
    cache[stem] = (False, f'forms: {", ".join(sorted(F)[:4])}; no longer: {", ".join(sorted(lost)[:4])}')
    return cache[stem]

def mark_entry(entry):
    toks = entry.split(' ')
    out = []
    for t in toks:
        if not t or t in ('…', '...') or t.endswith('$') or t.endswith('*'):
            out.append(t); continue
        star, why = decide(t)
        out.append(t + '*' if star else t)
        print(('*  ' if star else 'ok ') + t + '  — ' + why, file=sys.stderr)
    return ' '.join(out)

def rewrite(path):
    lines = open(path).read().split('\n')
    in_words = None  # indent of a `words:`/`drop:` block
    for i, line in enumerate(lines):
        mkey = re.match(r'^(\s*)(?:- )?(?:\{.*)?\b(words|drop): *(&\w+)?\s*$', line)
        if mkey:
            in_words = len(mkey.group(1)); continue
        if in_words is not None:
            mitem = re.match(r'^(\s*)- (.*?)\s*$', line)
            if mitem and len(mitem.group(1)) >= in_words:
                val = mitem.group(2)
                q = ''
                if len(val) > 1 and val[0] in '"\'' and val[-1] == val[0]:
                    q, val = val[0], val[1:-1]
                if val.startswith('#'): continue
                lines[i] = f'{mitem.group(1)}- {q}{mark_entry(val)}{q}'
                continue
            if line.strip() == '' or line.strip().startswith('#'):
                continue
            in_words = None
        # flow sequences: words: [a, b, "c d"]
        for mflow in re.finditer(r'\b(words|drop): \[([^\]]*)\]', line):
            items = [x.strip() for x in mflow.group(2).split(',')]
            new = []
            for it in items:
                q = ''
                if len(it) > 1 and it[0] in '"\'' and it[-1] == it[0]:
                    q, it = it[0], it[1:-1]
                new.append(f'{q}{mark_entry(it)}{q}')
            line = line[:mflow.start(2)] + ', '.join(new) + line[mflow.end(2):]
        lines[i] = line
    open(path, 'w').write('\n'.join(lines))

def endings_yaml():
    return '[' + ', '.join(ENDINGS) + ']'

if __name__ == '__main__':
    if sys.argv[1:2] == ['--endings']:
        print(endings_yaml())
    else:
        for f in sorted(glob.glob(sys.argv[1] + '/*.yaml')):
            rewrite(f)
