"""The tmux launcher's preload (cli/tmux_launcher.py): modules loaded from their cached bytecode
are the modules `import` gives (same attributes, spec and values, bound on their package); a
source changed since its bytecode stops the preload there and `import` loads the rest from the
sources as they are. Each case runs in an interpreter of its own, started without `site`, as
the launcher is."""

import compileall
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import muxd
from muxd.testing.patience import stretched

MUXD_ROOT = str(Path(muxd.__file__).parent.parent)
NAMES = ("prepkg", "prepkg.b", "prepkg.a")
# What a module looks like to its users, as JSON.
DESCRIBE = """
import json, sys
import prepkg.a
out = {}
for name in %r:
    m = sys.modules[name]
    spec = m.__spec__
    out[name] = [m.__name__, m.__file__, m.__cached__, m.__package__, getattr(m, "__path__", None),
                 type(m.__loader__).__name__, m.__loader__.path, m.__loader__.name,
                 spec.name, spec.origin, spec.cached, spec.parent, spec.has_location,
                 spec.submodule_search_locations, getattr(m, "VALUE", None)]
out["bound"] = prepkg.a is sys.modules["prepkg.a"] and prepkg.b is sys.modules["prepkg.b"]
print(json.dumps(out))
""" % (NAMES,)


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "root"
    (root / "prepkg").mkdir(parents=True)
    (root / "prepkg" / "__init__.py").write_text("VALUE = 'package'\n")
    (root / "prepkg" / "b.py").write_text("from __future__ import annotations\nVALUE = 2\n")
    (root / "prepkg" / "a.py").write_text("from prepkg.b import VALUE as B\nVALUE = B * 2\n")
    compileall.compile_dir(str(root), quiet=1)
    return root


def _run(root, preload):
    """DESCRIBE in `python -S`, after preload() of NAMES if `preload`; with the modules import loaded."""
    code = (f"import sys; sys.path.insert(0, {MUXD_ROOT!r}); sys.path.insert(0, {str(root)!r})\n"
            + (f"from muxd.cli.tmux_launcher import preload; preload({NAMES!r}, {str(root)!r})\n" if preload else "")
            + DESCRIBE)
    result = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", code], capture_output=True, text=True,
                            check=True, timeout=stretched(30), env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    return json.loads(result.stdout), imported & set(NAMES)


def test_preloaded_modules_are_the_ones_import_gives(package):
    preloaded, imported = _run(package, preload=True)
    assert imported == set()  # none went through import
    assert preloaded == _run(package, preload=False)[0]
    assert preloaded["prepkg.a"][-1] == 4 and preloaded["bound"]


def test_a_source_changed_since_its_bytecode_stops_the_preload_there(package):
    b = package / "prepkg" / "b.py"
    b.write_text("from __future__ import annotations\nVALUE = 21\n")
    stat = b.stat()
    os.utime(b, (stat.st_atime, stat.st_mtime + 5))
    preloaded, imported = _run(package, preload=True)
    assert imported == {"prepkg.b", "prepkg.a"}  # from the sources as they are now
    assert preloaded["prepkg.a"][-1] == 42
    assert preloaded == _run(package, preload=False)[0]


def test_without_bytecode_import_loads_all(package):
    for cached in package.rglob("*.pyc"):
        cached.unlink()
    preloaded, imported = _run(package, preload=True)
    assert imported == set(NAMES)
    assert preloaded["prepkg.a"][-1] == 4
