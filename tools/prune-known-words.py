"""Maintainer aid, not part of the build: drops from `matching.typos.known_words` the long words
(LONG letters or more, default 9) that nothing in the rules could read as a typo, so the rule
files fit a ConfigMap (1 MiB). A known word only matters where it is one edit from a word of a
list entry (or of a pattern, or two words of an entry glued) or of an example, after taking off
one of `matching.word_endings`; a word that is not stays a real word without the list. Short
words are kept whatever: a stem added later is likeliest to take them for its typos.

After it, check that decisions did not move: route the eval requests and a corpus with the rules
before and after (`turnout route --jsonl`, both `--model embedded` and `--model none`).

Usage: python3 tools/prune-known-words.py rules [LONG]   (rewrites rules/matching.yaml)"""
import re, sys
import yaml

rules = sys.argv[1]
long_from = int(sys.argv[2]) if len(sys.argv) > 2 else 9
norm = lambda s: s.lower().replace('ё', 'е')
WORD = re.compile(r'[0-9a-zа-яё_]+')
path = rules + '/matching.yaml'
m = yaml.safe_load(open(path, encoding='utf-8'))['matching']
endings = {norm(e) for e in m.get('word_endings') or []} | {''}
table = (m.get('transliterate') or {}).get('table') or {}
keys = sorted(table, key=len, reverse=True)


def translit(w):
    out, i = '', 0
    while i < len(w):
        for k in keys:
            kk = k.rstrip('$')
            if w.startswith(kk, i) and (not k.endswith('$') or i + len(kk) == len(w)):
                out, i = out + table[k], i + len(kk)
                break
        else:
            out, i = out + w[i], i + 1
    return norm(out)


def words_of(text):
    ws = [norm(x) for x in WORD.findall(text.lower())]
    return ws + [translit(w) for w in ws if re.fullmatch(r"[a-z0-9']+", w)]


vocab, examples, glued = set(), set(), set()


def walk(x, key=None):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, k)
    elif isinstance(x, list):
        for v in x:
            walk(v, key)
    elif isinstance(x, str):
        if key in ('words', 'known_words'):
            ws = words_of(x)
            vocab.update(ws)
            glued.update(a + b for a, b in zip(ws, ws[1:]))
        elif key in ('examples', 'chat_examples'):
            examples.update(words_of(x))
        elif key in ('patterns', 'unless', 'drop_patterns'):
            vocab.update(norm(w) for w in re.findall(r'[а-яё]{3,}', x.lower()))


for f in ['words', 'tools', 'skills', 'router', 'search', 'guards', 'pre_rules']:
    walk(yaml.safe_load(open(f'{rules}/{f}.yaml', encoding='utf-8')))
for v in ((m.get('transliterate') or {}).get('words') or {}).values():
    examples.update(words_of(v))


def deletions(w):
    return {w} | {w[:i] + w[i + 1:] for i in range(len(w))}


index = set()
for v in vocab | examples | glued:
    index |= deletions(v)


def matters(w):
    for e in endings:
        if w.endswith(e) and len(w) - len(e) >= 2 and deletions(w[:len(w) - len(e)]) & index:
            return True
    return len(w) >= 7 and any(w[:k] in examples and w[k:] in examples for k in range(3, len(w) - 2))


text = open(path, encoding='utf-8').read()
lines = text.split('\n')
start = lines.index('    known_words:') + 1
end = start
while end < len(lines) and lines[end].startswith('      - '):
    end += 1
dropped, kept = [], []
for line in lines[start:end]:
    words = [w for w in line[8:].split() if len(w) < long_from or matters(norm(w)) or dropped.append(w)]
    if words:
        kept.append('      - ' + ' '.join(words))
lines[start:end] = kept
open(path, 'w', encoding='utf-8').write('\n'.join(lines))
print(f'dropped {len(dropped)} words of {long_from} letters or more', file=sys.stderr)
