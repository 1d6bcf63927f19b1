"""How well a knowledge entry answers a text: key terms, the full-text query made of them, and
a score from 0 to 1. Pure: the SQL lives in muxd/store/knowledge.py.

score = (bm25 / best bm25) × min(1, matched terms / min(query terms, 3))

the entry's bm25 relative to the best hit's, times the share of the query's key terms the entry
contains (three count as all: a long task text names more terms than any one entry holds).
FTS5's bm25 is close to 0 on a small corpus (its idf is clamped for terms in most rows), so
alone it says nothing; relative to the best hit it ranks, and the term share says whether the
best hit is any good.
"""

from __future__ import annotations

import re

KEY_TERMS_MAX = 32
TERMS_FOR_FULL_MATCH = 3
_WORD = re.compile(r"[^\W_]+")  # letters and digits: the tokens of FTS5's unicode61 tokenizer
_STOPWORDS = frozenset("""
    about above after again against all also and any are because been before being below between
    both but can could did does doing down during each few for from further had has have having her
    here hers herself him himself his how into its itself just more most must not now off once only
    other our ours out over own same she should some such than that the their theirs them then there
    these they this those through too under until very was were what when where which while who
    whom why will with would you your yours yourself
""".split())


def key_terms(text: str, limit: int = KEY_TERMS_MAX) -> list[str]:
    """The distinct lowercase words of `text` of three characters or more that are not common
    English words, in the order they first appear, at most `limit`."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) >= 3 and word not in _STOPWORDS:
            terms.setdefault(word, None)
            if len(terms) == limit:
                break
    return list(terms)


def fts_query(terms: list[str]) -> str:
    """An FTS5 MATCH expression for any of `terms`. Each is a quoted string (quotes doubled), so
    no text can become an operator, a column filter or a prefix query."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def score(bm25: float, best_bm25: float, matched_terms: int, total_terms: int) -> float:
    """The relevance of a hit, 0..1, rounded to 3 places (the formula is the module's docstring).
    bm25 values are FTS5's: negative, the best the most negative."""
    relative = bm25 / best_bm25 if best_bm25 != 0 else 1.0
    needed = min(total_terms, TERMS_FOR_FULL_MATCH)
    share = min(1.0, matched_terms / needed) if needed > 0 else 0.0
    return round(min(1.0, max(0.0, relative)) * share, 3)
