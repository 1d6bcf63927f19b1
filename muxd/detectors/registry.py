"""Which detectors exist: the built-in ones (Python classes, and the agent manifests packaged in
muxd/detectors/manifests/), any registered under the `muxd.detectors` entry-point group by other
installed packages, and the user's own manifests (paths.agents_dir()); and picking the one that
fits a frame. A later one with an earlier one's name replaces it."""

from __future__ import annotations

import functools
import importlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the detectors themselves are imported at their loading, after a daemon's first reply
    from muxd.detectors.base import Detector, ScreenContext
    from muxd.errors import BadManifest

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "muxd.detectors"
# module:attribute of each built-in detector class; the shell fallback is not in this list.
BUILTIN_DETECTORS = (
    "muxd.detectors.claude:ClaudeDetector",
    "muxd.detectors.codex:CodexDetector",
    "muxd.detectors.qwen:QwenDetector",  # before Gemini's: its fork draws Gemini's boxes
    "muxd.detectors.gemini:GeminiDetector",
    "muxd.detectors.aider:AiderDetector",
    "muxd.detectors.pi:PiDetector",
    "muxd.detectors.cline:ClineDetector",
)
# The manifests muxd ships (opencode's, Kilo's): agents read by patterns alone, no Python of their own.
PACKAGED_MANIFEST_DIR = os.path.join(os.path.dirname(__file__), "manifests")
MANIFEST_SUFFIX = ".toml"
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


def load_manifests(directory: str, *, quiet: bool = False) -> tuple[list[Detector], list[BadManifest]]:
    """A detector for each good manifest (`*.toml`) in `directory`, by file name, and the error
    of each bad one (naming its file and line; logged too, unless `quiet`): a bad one never
    stops the others."""
    from pathlib import Path

    from muxd.detectors.manifest import load
    from muxd.detectors.manifest_detector import ManifestDetector
    from muxd.errors import BadManifest

    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(MANIFEST_SUFFIX))
    except OSError:  # no such directory: no manifests
        return [], []
    detectors: list[Detector] = []
    errors: list[BadManifest] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            detectors.append(ManifestDetector(load(Path(path))))
        except BadManifest as exc:
            if not quiet:
                log.error("agent manifest skipped: %s", exc)
            errors.append(exc)
        except Exception as exc:  # a fault of muxd's own reading: still only this file's loss
            if not quiet:
                log.exception("agent manifest skipped: %s", path)
            errors.append(BadManifest(f"{path}:1: cannot be loaded: {exc}", path=path, line=1))
    return detectors, errors


def manifest_dirs() -> list[str]:
    """Where manifests are read from, in order: muxd's own, then the user's."""
    from muxd.paths import agents_dir

    return [PACKAGED_MANIFEST_DIR, str(agents_dir())]


def catalogue(*, quiet: bool = False) -> tuple[list[tuple[Detector, str]], list[BadManifest]]:
    """Every detector that counts, each with where it came from (a `module:Class` or a manifest's
    path), in load order: built-ins first (Python classes, then packaged manifests), then
    plug-ins, then the user's manifests, a later one with an earlier one's name replacing it;
    and the error of each manifest that could not be used."""
    from muxd.detectors.plugin_entry_points import entry_points

    packaged, user = manifest_dirs()
    ours, ours_bad = load_manifests(packaged, quiet=quiet)
    yours, yours_bad = load_manifests(user, quiet=quiet)
    found = [(_load(spec), spec) for spec in BUILTIN_DETECTORS] + [(d, _path_of(d)) for d in ours]
    found += [(_load(value), value) for _name, value in entry_points(ENTRY_POINT_GROUP)]
    found += [(d, _path_of(d)) for d in yours]
    detectors: dict[str, tuple[Detector, str]] = {}
    for detector, source in found:
        if detector is not None:
            detectors[detector.name] = (detector, source)  # a replacement takes the replaced one's place
    return list(detectors.values()), ours_bad + yours_bad


def _path_of(detector: Detector) -> str:
    return str(getattr(getattr(detector, "manifest", None), "path", ""))


def load_detectors() -> list[Detector]:
    """The detectors of `catalogue()`, in its order."""
    return [detector for detector, _source in catalogue()[0]]


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
        modules = [spec.partition(":")[0] for spec in BUILTIN_DETECTORS] + ["muxd.detectors.manifest_detector"]
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
