"""relevance.py: the key terms of a text, the FTS5 query made of them, and the score formula."""

from __future__ import annotations

import pytest

from muxd.tasks.relevance import fts_query, key_terms, score


def test_key_terms_are_distinct_content_words_in_order() -> None:
    assert key_terms("Fix the flaky retry in the HTTP client; the retry is flaky!") == \
        ["fix", "flaky", "retry", "http", "client"]
    assert key_terms("a an of to is it be") == []
    assert key_terms("snake_case and kebab-case, éclair 42x") == ["snake", "case", "kebab", "éclair", "42x"]
    assert key_terms(" ".join(f"word{n}" for n in range(50)), limit=3) == ["word0", "word1", "word2"]


def test_the_fts_query_quotes_every_term() -> None:
    assert fts_query(["retry", "near"]) == '"retry" OR "near"'
    assert fts_query(['say"hi']) == '"say""hi"'


@pytest.mark.parametrize(("args", "expected"), [
    ((-4.0, -4.0, 3, 3), 1.0),        # the best hit with every term
    ((-2.0, -4.0, 3, 10), 0.5),       # half the best bm25; three terms count as all
    ((-2.0, -4.0, 1, 10), 0.167),     # ... and one of the three
    ((-1e-6, -1e-6, 2, 2), 1.0),      # a tiny corpus: bm25 is near 0, relative it still ranks
    ((0.0, 0.0, 1, 2), 0.5),          # bm25 0 everywhere: relative counts as 1
    ((-3.0, -1.0, 9, 3), 1.0),        # never above 1
    ((-1.0, -2.0, 0, 3), 0.0),
])
def test_score_is_relative_bm25_times_the_share_of_terms(args: tuple[float, float, int, int], expected: float) -> None:
    assert score(*args) == expected
