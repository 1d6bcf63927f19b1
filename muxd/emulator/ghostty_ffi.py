"""libghostty-vt's cffi `ffi` and `lib` without parsing its C declarations at every start.

pyghostty builds its `ffi` by parsing ~80 KB of C declarations (`pyghostty/_cdef.py`) when it is
imported: 120-180 ms and ~7 MiB, the largest part of a daemon's cold start. cffi can load
declarations it parsed before instead (its out-of-line ABI mode, `set_source(name, None)`: a
module holding the parsed type tables), in about a millisecond. This module keeps that module,
compiled, in the user's cache directory (paths.cache_dir), keyed by what it came from (pyghostty's
declaration files, cffi's and Python's versions): it is built on first use and again whenever the
key changes or the stored copy fails its checksum. pyghostty then gets it as its own
`pyghostty._ffi`, so `pyghostty.Terminal` runs on the same `ffi`.

Whatever goes wrong on the way (no usable cache directory, a pyghostty laid out differently, cffi
unable to emit) ends in pyghostty's own import: slower, never broken. A cache that cannot be
written costs the parse once per start and still gives the pre-parsed `ffi`. `FFI_SOURCE` says
which path was taken: "cache", "generated", "generated, not saved" or "pyghostty".
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import marshal
import os
import sys
import types
from pathlib import Path
from typing import Any

from muxd.paths import ensure_cache_dir

log = logging.getLogger(__name__)

CACHE_FORMAT = b"muxd ghostty ffi 1"  # part of the key: change it when what is stored changes
CACHE_PREFIX = "ghostty-ffi-"
CACHE_KEEP = 4  # stored copies kept for other keys' sake, newest first
MODULE_NAME = "_muxd_ghostty_ffi"
LIBRARY_ENV = "PYGHOSTTY_LIB"  # pyghostty's own override of where the shared library is
_DIGEST_BYTES = 32  # a sha256 of the stored code leads the file
_DECLARATION_FILES = ("__init__.py", "_cdef.py", "_ffi.py")  # __init__ holds the version
_LIBRARY_SUFFIXES = (".dylib", ".so", ".dll")
# pyghostty's layout-identical twins of the tagged unions the C API passes by value (libffi cannot
# pass unions): declared by its _ffi.py in code, so repeated here. muxd calls grid_ref through one.
TWIN_CDEF = """
typedef struct { uint16_t x; uint32_t y; uint64_t _pad; } GhosttyPointValueS;
typedef struct { GhosttyPointTag tag; GhosttyPointValueS value; } GhosttyPointS;
"""
_TWINS = (("GhosttyPointS", "GhosttyPoint"),)


def package_dir() -> Path:
    """pyghostty's directory, found without importing it (its import parses the declarations)."""
    spec = importlib.util.find_spec("pyghostty")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pyghostty is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def library_path(package: Path) -> str:
    """The libghostty-vt shared library pyghostty would load: $PYGHOSTTY_LIB, else its bundled one."""
    chosen = os.environ.get(LIBRARY_ENV)
    if chosen:
        return chosen
    for suffix in _LIBRARY_SUFFIXES:
        candidate = package / "_lib" / f"libghostty-vt{suffix}"
        if candidate.exists():
            return str(candidate)
    raise OSError(f"libghostty-vt not found in {package / '_lib'}")


def declarations_key(package: Path) -> str:
    """What a stored module is valid for: pyghostty's declaration files, cffi, Python."""
    import _cffi_backend

    digest = hashlib.sha256(CACHE_FORMAT)
    for part in (_cffi_backend.__version__, sys.implementation.cache_tag or "", TWIN_CDEF):
        digest.update(b"\0" + part.encode())
    for name in _DECLARATION_FILES:
        digest.update(b"\0" + name.encode() + b"\0" + (package / name).read_bytes())
    return digest.hexdigest()[:24]


def build_code(package: Path) -> types.CodeType:
    """Parse pyghostty's declarations (the slow part) and return cffi's pre-parsed module, compiled."""
    from cffi import FFI

    namespace: dict[str, Any] = {}
    cdef_file = package / "_cdef.py"
    exec(compile(cdef_file.read_bytes(), str(cdef_file), "exec"), namespace)  # not `import`: that runs pyghostty
    builder = FFI()
    builder.cdef(namespace["CDEF"])
    builder.cdef(TWIN_CDEF)
    builder.set_source(MODULE_NAME, None, compiler_verbose=False)  # verbose prints to stdout
    source = io.StringIO()
    builder.emit_python_code(source)
    return compile(source.getvalue(), f"<{MODULE_NAME}>", "exec")


def read_cached(path: Path) -> types.CodeType | None:
    """The code stored at `path`, or None when there is none or it fails its checksum."""
    try:
        data = path.read_bytes()
    except OSError:  # none stored yet, or a directory that cannot hold one (written as it can)
        return None
    payload = data[_DIGEST_BYTES:]
    if len(data) <= _DIGEST_BYTES or hashlib.sha256(payload).digest() != data[:_DIGEST_BYTES]:
        log.warning("%s is damaged: building it again", path)
        return None
    code = marshal.loads(payload)
    return code if isinstance(code, types.CodeType) else None


def write_cached(path: Path, code: types.CodeType) -> None:
    """Store `code` at `path` whole or not at all (a temporary file renamed over it), and drop
    all but the CACHE_KEEP newest copies (other keys: other pyghostty versions, or another
    virtualenv's, which takes turns with this one without rebuilding)."""
    import tempfile  # only when something is stored: not on a start that finds it

    payload = marshal.dumps(code)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{CACHE_PREFIX}", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    stored = sorted(path.parent.glob(f"{CACHE_PREFIX}*.bin"), key=_modified, reverse=True)
    for stale in stored[CACHE_KEEP:]:
        if stale != path:
            stale.unlink(missing_ok=True)


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile by another daemon's clean-up
        return 0.0


def _run(code: types.CodeType) -> Any:
    namespace: dict[str, Any] = {"__name__": MODULE_NAME}
    exec(code, namespace)
    ffi = namespace["ffi"]
    for twin, real in _TWINS:  # pyghostty's own check that a twin passes as its union does
        if (ffi.sizeof(twin), ffi.alignof(twin)) != (ffi.sizeof(real), ffi.alignof(real)):
            raise ImportError(f"{twin} no longer matches {real}")
    return ffi


def preparsed_ffi(package: Path, directory: Path) -> tuple[Any, str]:
    """cffi's pre-parsed `ffi` for pyghostty's declarations, from `directory` when stored there
    for the current key, else built now and stored; and where it came from (see FFI_SOURCE)."""
    path = directory / f"{CACHE_PREFIX}{declarations_key(package)}.bin"
    try:
        code = read_cached(path)
        if code is not None:
            return _run(code), "cache"
    except Exception as exc:  # a stored copy that passed its checksum yet does not run: build it again
        log.warning("%s does not load (%s): building it again", path, exc)
    code = build_code(package)
    source = "generated"
    try:
        write_cached(path, code)
    except OSError as exc:
        log.info("cannot keep libghostty's parsed declarations in %s (%s): parsed again at each start",
                 directory, exc)
        source = "generated, not saved"
    return _run(code), source


def _as_pyghostty_layer0(ffi: Any, lib: Any) -> types.ModuleType:
    """A stand-in for `pyghostty._ffi` over `ffi` and `lib`: the names pyghostty's modules import."""
    module = types.ModuleType("pyghostty._ffi", "libghostty-vt's ffi and lib, pre-parsed (muxd)")

    class GhosttyError(RuntimeError):
        __module__ = "pyghostty"

    union_fns: dict[str, Any] = {}

    def check(result: int, what: str) -> None:
        if result:
            raise GhosttyError(f"{what} failed: {result}")

    def union_fn(name: str, signature: str) -> Any:
        if name not in union_fns:
            union_fns[name] = ffi.cast(signature, ffi.addressof(lib, name))
        return union_fns[name]

    module.__dict__.update(ffi=ffi, lib=lib, GhosttyError=GhosttyError, check=check, union_fn=union_fn)
    return module


def _forget_pyghostty() -> None:
    for name in [name for name in sys.modules if name == "pyghostty" or name.startswith("pyghostty.")]:
        del sys.modules[name]


def _load() -> tuple[types.ModuleType, str]:
    """pyghostty, imported over the pre-parsed `ffi` when that can be had, and where it came from."""
    if "pyghostty" in sys.modules:  # imported already, its own ffi parsed: share it (or its ImportError)
        import pyghostty

        return pyghostty, "pyghostty"
    try:
        package = package_dir()
        ffi, source = preparsed_ffi(package, ensure_cache_dir())
        sys.modules["pyghostty._ffi"] = _as_pyghostty_layer0(ffi, ffi.dlopen(library_path(package)))
        import pyghostty
    except Exception as exc:
        _forget_pyghostty()
        log.info("libghostty's declarations are not pre-parsed (%s): pyghostty parses them", exc)
        import pyghostty

        return pyghostty, "pyghostty"
    return pyghostty, source


pyghostty, FFI_SOURCE = _load()
ffi = pyghostty.ffi
lib = pyghostty.lib
GhosttyError = pyghostty.GhosttyError
Terminal = pyghostty.Terminal
init_sized = pyghostty.core.init_sized
