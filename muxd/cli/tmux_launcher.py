"""The tmux shim launcher's entry: a tmux command line answered by the fast path
(tmux_fast_path.py) in an interpreter started without `site`, else by the full CLI.

Apart from the fast path so that the full CLI (cli/main.py, which takes the fast path too for
`muxd tmux`) and the fast path never import each other.
"""

from __future__ import annotations

import posix  # os's _exit without os (~1.4 ms of a call to import: muxd/_environ.py)
import sys

from muxd.cli.tmux_fast_path import answer_or_exit

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


class SiteOnDemand:
    """The last finder of sys.meta_path, while the interpreter runs without `site`: a module no
    other finder has (msgspec, when a format names an option) is looked for again after
    site-packages is added, as `site` would have at start. Not for the standard library's own
    tries of modules other systems have (`nt`, `_winapi`): site-packages holds none of them."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
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
