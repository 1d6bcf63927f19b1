"""Which detectors exist: the built-in ones plus any registered under the `muxd.detectors`
entry-point group by other installed packages; and picking the one that fits a frame."""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the detectors themselves are imported at their loading, after a daemon's first reply
    from muxd.detectors.base import Detector, ScreenContext

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "muxd.detectors"
# module:attribute of each built-in detector class; the shell fallback is not in this list.
BUILTIN_DETECTORS = (
    "muxd.detectors.claude:ClaudeDetector",
    "muxd.detectors.codex:CodexDetector",
    "muxd.detectors.gemini:GeminiDetector",
    "muxd.detectors.aider:AiderDetector",
    "muxd.detectors.opencode:OpencodeDetector",
    "muxd.detectors.cline:ClineDetector",
    "muxd.detectors.kilo:KiloDetector",
)
# Below this confidence no agent is claimed and the shell detector speaks.
IDENTIFY_THRESHOLD = 0.5


def _load(spec: str) -> Detector | None:
    from muxd.detectors.base import Detector

    module_name, _, attribute = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
        detector = factory() if isinstance(factory, type) or callable(factory) else factory
    except Exception:  # a broken plug-in must not stop the others
        log.exception("cannot load detector %s", spec)
        return None
    if not isinstance(detector, Detector):
        log.error("detector %s does not implement the Detector protocol", spec)
        return None
    return detector


def load_detectors() -> list[Detector]:
    """Built-ins first, then plug-ins (a plug-in with a built-in's name replaces it)."""
    from muxd.detectors.plugin_entry_points import entry_points

    detectors: dict[str, Detector] = {}
    for spec in BUILTIN_DETECTORS:
        detector = _load(spec)
        if detector is not None:
            detectors[detector.name] = detector
    for _name, value in entry_points(ENTRY_POINT_GROUP):
        detector = _load(value)
        if detector is not None:
            detectors[detector.name] = detector
    return list(detectors.values())


def _import_quietly(module_name: str) -> None:
    try:
        importlib.import_module(module_name)
    except Exception:  # said once, by load()
        pass


class Detectors(Sequence["Detector"]):
    """`load_detectors()`'s list, looked up at its first reading or by `load()`: a daemon answers
    its first request before it pays the plug-in lookup (server.py loads it in steps right after)."""

    def __init__(self, load: Callable[[], list[Detector]] = load_detectors) -> None:
        self._load = load
        self._detectors: list[Detector] | None = None

    def load(self) -> list[Detector]:
        if self._detectors is None:
            self._detectors = self._load()
        return self._detectors

    def loading_steps(self) -> list[Callable[[], object]]:
        """load() as steps for a daemon to take between its requests: each built-in detector's
        module imported alone (a broken one is left to load() to report), then the lookup."""
        modules = [spec.partition(":")[0] for spec in BUILTIN_DETECTORS]
        return [functools.partial(_import_quietly, module) for module in modules] + [self.load]

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return self.load()[index]

    def __len__(self) -> int:
        return len(self.load())

    def __iter__(self) -> Iterator[Detector]:
        return iter(self.load())


def shell_detector() -> Detector:
    from muxd.detectors.shell import ShellDetector

    return ShellDetector()


def choose(detectors: Sequence[Detector], ctx: ScreenContext) -> tuple[Detector | None, float]:
    """The detector most confident about this frame, or (None, 0) below the threshold."""
    best: Detector | None = None
    best_score = 0.0
    for detector in detectors:
        try:
            score = float(detector.identify(ctx))
        except Exception:
            log.exception("detector %s failed to identify", getattr(detector, "name", detector))
            continue
        if score > best_score:
            best, best_score = detector, score
            if score >= 1.0:
                break  # certain (its process is in front): no later detector can beat it
    if best_score < IDENTIFY_THRESHOLD:
        return None, best_score
    return best, best_score
