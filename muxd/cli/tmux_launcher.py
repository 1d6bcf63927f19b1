"""The tmux shim launcher's entry: a tmux command line answered by the fast path
(tmux_fast_path.py) in an interpreter started without `site`, its modules preloaded from their
bytecode, else by the full CLI.

Apart from the fast path so that the full CLI (cli/main.py, which takes the fast path too for
`muxd tmux`) and the fast path never import each other.
"""

# No `from __future__ import annotations` here: this module is imported before preload(), which
# then loads __future__ for the fast path's modules at a fifth of import's cost.
import marshal
import posix  # os's _exit without os (~1.4 ms of a call to import: muxd/_environ.py)
import sys

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

# What the lines of the fast path import, each after what it imports: loaded by preload().
PRELOADED = (
    "__future__", "muxd._environ", "muxd.cli.tmux_defaults", "muxd.config", "muxd.errors",
    "muxd.socket_names", "muxd.tmux_line", "muxd.cli.tmux_fast_path", "muxd.client", "muxd.protocol",
    "muxd.protocol.framing", "muxd.protocol.os_bytes", "muxd.protocol.msgpack_lite", "muxd.client.dial",
    "muxd.client.blocking", "muxd.client.token", "muxd.cli.format_lines", "muxd.cli._line_number",
)
# The directory holding this muxd (the one the launcher put first on sys.path).
_ROOT = __file__.rpartition("/muxd/cli/")[0]


def preload(names: tuple[str, ...] = PRELOADED, root: str = _ROOT) -> None:
    """Load the modules `names` (the standard library's, or under `root`) from the bytecode
    `import` caches for them, as it would load them, without its search of sys.path and its
    per-module locks and steps (~80 us a module: a tenth of a call). Stops at the first without
    fresh bytecode (never compiled, its source changed since, hash-checked, another Python's):
    `import` then loads the rest as ever."""
    if sys.flags.optimize:  # import would take the .opt-N bytecode
        return
    bootstrap, external = sys.modules["_frozen_importlib"], sys.modules["_frozen_importlib_external"]
    for name in names:
        parent, _, leaf = name.rpartition(".")
        if name in sys.modules:
            continue
        if parent and parent not in sys.modules:
            return
        base = f"{sys._stdlib_dir if name in sys.stdlib_module_names else root}/{name.replace('.', '/')}"
        is_package = not _exists(f"{base}.py")
        source = f"{base}/__init__.py" if is_package else f"{base}.py"
        directory, _, file = source.rpartition("/")
        cached = f"{directory}/__pycache__/{file[:-3]}.{sys.implementation.cache_tag}.pyc"
        code = _fresh_code(source, cached, external.MAGIC_NUMBER)
        if code is None:
            return
        spec = bootstrap.ModuleSpec(name, external.SourceFileLoader(name, source), origin=source,
                                    is_package=is_package)
        spec.has_location, spec.cached = True, cached
        module = type(sys)(name)
        module.__spec__, module.__loader__, module.__file__, module.__cached__ = spec, spec.loader, source, cached
        module.__package__ = name if is_package else parent
        if is_package:
            module.__path__ = spec.submodule_search_locations = [directory]
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)
        except BaseException:
            del sys.modules[name]
            raise
        if parent:
            setattr(sys.modules[parent], leaf, module)


def _exists(path: str) -> bool:
    try:
        posix.stat(path)
    except OSError:
        return False
    return True


def _fresh_code(source: str, cached: str, magic: bytes) -> "Any":
    """The code in `cached` if it is the bytecode of `source` as it is now (a timestamp pyc whose
    recorded mtime and size are the source's, as import checks them); None otherwise."""
    try:
        info = posix.stat(source)
        fd = posix.open(cached, posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            data = posix.read(fd, posix.fstat(fd).st_size)
        finally:
            posix.close(fd)
    except OSError:
        return None
    header = magic + bytes(4) + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") \
        + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    if not data.startswith(header):
        return None
    try:
        return marshal.loads(memoryview(data)[16:])
    except (EOFError, ValueError, TypeError):
        return None


class SiteOnDemand:
    """The last finder of sys.meta_path, while the interpreter runs without `site`: a module no
    other finder has (msgspec, when a format names an option) is looked for again after
    site-packages is added, as `site` would have at start. Not for the standard library's own
    tries of modules other systems have (`nt`, `_winapi`): site-packages holds none of them."""

    @classmethod
    def find_spec(cls, name: str, path: "Any" = None, target: "Any" = None) -> "Any":
        if name.partition(".")[0] in sys.stdlib_module_names:
            return None
        add_site()
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                return spec
        return None


def add_site() -> None:
    """site-packages, its .pth files and sitecustomize, as a start with `site` has them (once)."""
    if SiteOnDemand in sys.meta_path:
        sys.meta_path.remove(SiteOnDemand)
        import site

        site.main()


def exit_now(status: int) -> None:
    """Exit with `status`, its output written, without the interpreter's teardown (freeing every
    module it imported: ~15 % of a call). Only while `site` has not run: then no sitecustomize
    has left an atexit handler waiting. Returns if the output cannot be written (the usual exit
    then says so)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        return
    posix._exit(status)


def main(package_root: str | None = None) -> None:
    """The shim launcher's entry: `python -S -P -c '…main()' ARGS` (a tmux command line), or its
    `#!` script's main(`package_root`: the muxd it put first on sys.path, and on PYTHONPATH for
    what the full CLI starts, as the sh launcher does)."""
    words = sys.argv[1:]
    if sys.flags.no_site:
        sys.meta_path.append(SiteOnDemand)
        preload()
    from muxd.cli.tmux_fast_path import answer_or_exit

    status = answer_or_exit(words)
    if status is not None and SiteOnDemand in sys.meta_path:
        exit_now(status)
    if status is None:
        if package_root is not None:
            import os

            pythonpath = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = package_root + (os.pathsep + pythonpath if pythonpath else "")
        add_site()
        from muxd.cli.main import main as cli_main

        status = cli_main(["tmux", *words])
    raise SystemExit(status)
