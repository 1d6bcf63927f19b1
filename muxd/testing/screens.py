"""Writing small screens in tests: one row per line after a `|` margin."""

from __future__ import annotations

RULE_MARK = "──"


def margin_rows(text: str, rule_columns: int | None = None) -> list[str]:
    """Rows written after a `|` margin, one per line (a line without a margin is a blank row,
    trailing blanks dropped); with `rule_columns`, a row that is just `──` is a full-width rule."""
    rows = []
    for line in text.strip("\n").split("\n"):
        stripped = line.lstrip()
        row = stripped[1:].rstrip() if stripped.startswith("|") else ""
        rows.append("─" * rule_columns if rule_columns and row == RULE_MARK else row)
    return rows


GARBAGE_FRAMES = 300


def assert_survives_garbage(detector: object, alphabet: str, *, seed: int,
                            widths: tuple[int, ...] = (1, 20, 80, 120)) -> None:
    """Random screens drawn from `alphabet`: `identify` stays within 0..1, `detect` never raises."""
    import random

    from muxd.detectors.base import ScreenContext

    rng = random.Random(seed)
    for _ in range(GARBAGE_FRAMES):
        rows = ["".join(rng.choices(alphabet, k=rng.randrange(0, 120))) for _ in range(rng.randrange(0, 30))]
        context = ScreenContext(lines=rows, columns=rng.choice(widths))
        assert 0.0 <= detector.identify(context) <= 1.0  # type: ignore[attr-defined]
        detector.detect(context, None)  # type: ignore[attr-defined]
