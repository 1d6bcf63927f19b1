"""The shape of muxd's imports, read from the source: no import circle anywhere in muxd/, the
daemon's wiring (server.py) imported only by its entry point and its commands, the services
never importing the commands, and the packages in layers, each importing only those below it.

Every `import` counts wherever it stands: under `if TYPE_CHECKING:` or inside a function, a
module still depends on what it names, and a circle a type checker or a late import closes is
still a circle. An import names the deepest module of muxd it reaches (`from muxd.store import
audit` is muxd.store.audit; `from muxd.errors import BadRequest` is muxd.errors).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

from muxd.client.daemon_fork import DAEMON_START_ENV
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "muxd"
DAEMON_TOP_LEVEL_MAX_MODULES = 15
# muxd's packages from the bottom up: each imports only those before it here (and itself). Below
# them all, the modules directly in muxd/ (config, errors, formats, tmux_line, …): pieces every
# layer shares, which import no package. muxd/__main__.py, the entry point, stands above all.
LAYERS = ("muxd.emulator", "muxd.detectors", "muxd.executions", "muxd.tasks", "muxd.telemetry", "muxd.store", "muxd.protocol",
          "muxd.attach", "muxd.client", "muxd.daemon", "muxd.mcp_server", "muxd.cli", "muxd.web", "muxd.testing")
ENTRY_POINT = "muxd.__main__"
# Imports up the layers, each with its reason.
UPWARD_IMPORTS = {
    # The command prompt and the hooks run the CLI's own commands, from the daemon; set-hook
    # checks a hook's commands against the CLI's table.
    ("muxd.daemon.core.cli_lines", "muxd.cli.table"),
    # A client that finds no server forks it, as tmux does: the child runs the daemon's main.
    ("muxd.client.daemon_fork", "muxd.daemon.main"),
    # `muxd web` runs the web view, which draws `muxd top`'s board (cli/top_board.py) in a browser.
    ("muxd.cli.web_commands", "muxd.web.server"),
}

Graph = dict[str, set[str]]  # module -> the modules of muxd it imports


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The modules of muxd an import statement in module `name` names (none for other packages)."""
    if isinstance(node, ast.Import):
        dotted_names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: `.` is this module's package, each more dot one package up
            package = name.split(".") if is_package else name.split(".")[:-1]
            package = package[:len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        # `from package import module` names the module; `from module import thing`, the module
        dotted_names = [f"{base}.{alias.name}" for alias in node.names]
    for dotted in dotted_names:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        if dotted and dotted != name:
            yield dotted


@cache
def import_graph() -> Graph:
    paths = {_module_name(path): path for path in (ROOT / PACKAGE).rglob("*.py")}
    known = set(paths)
    graph: Graph = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = {target for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                       for target in _imported(node, name, path.name == "__init__.py", known)}
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """Every set of modules that import each other round (Tarjan's strongly connected
    components, iterative), each sorted; single modules are not circles."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif target not in order:
                order[target] = low[target] = len(order)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(graph.get(target, ())))))
            elif target in on_stack:
                low[node] = min(low[node], order[target])
    return found


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _refused(where: str, allowed: Callable[[str, str], bool]) -> str:
    """`importer -> imported`, a line each, for every import of a module in `where` (a package)
    that `allowed(importer, imported)` refuses; "" when there is none."""
    return "\n".join(sorted(f"{source} -> {target}" for source, targets in import_graph().items()
                            if _under(source, where) for target in targets if not allowed(source, target)))


def test_the_walker_sees_relative_type_checking_and_function_level_imports():
    graph = import_graph()
    assert "muxd.attach.selection" in graph["muxd.attach.compose"]  # `from .selection import …`
    assert "muxd.daemon.panes.format_variables" in graph["muxd.cli.new_pane"]  # inside a function
    assert "muxd.protocol.pane_messages" in graph["muxd.cli.render"]  # under TYPE_CHECKING


def test_no_import_circle_in_muxd():
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(f"{len(c)} modules: {', '.join(c)}" for c in found)


def test_only_the_entry_point_and_the_commands_import_the_daemon_wiring():
    def allowed(source: str, target: str) -> bool:
        return (target != "muxd.daemon.server" or source == "muxd.daemon.main"
                or _under(source, "muxd.daemon.commands"))

    refused = _refused("muxd.daemon", allowed)
    assert not refused, "muxd.daemon.server imported by:\n" + refused


def test_the_services_do_not_import_the_commands():
    # The server takes the Command type from the table; main.py hands it the loaded table.
    def allowed(source: str, target: str) -> bool:
        return (not _under(target, "muxd.daemon.commands") or _under(source, "muxd.daemon.commands")
                or source == "muxd.daemon.main"
                or (source, target) == ("muxd.daemon.server", "muxd.daemon.commands.table"))

    refused = _refused("muxd.daemon", allowed)
    assert not refused, "services importing the commands:\n" + refused


def test_the_daemon_folder_keeps_its_concerns_in_subpackages():
    top_level = sorted(path.name for path in (ROOT / PACKAGE / "daemon").glob("*.py"))
    assert len(top_level) <= DAEMON_TOP_LEVEL_MAX_MODULES, top_level


def _layer(module: str) -> int | None:
    """Where `module` stands in LAYERS, counted from 1; 0 for a module directly in muxd/, None
    for one in a package LAYERS does not name."""
    for number, package in enumerate(LAYERS, 1):
        if _under(module, package):
            return number
    directly_in_muxd = module.count(".") == 1 and (ROOT / f"{module.replace('.', '/')}.py").is_file()
    return 0 if module == PACKAGE or directly_in_muxd else None


def test_each_package_imports_only_the_layers_below_it():
    unplaced = sorted(module for module in import_graph() if _layer(module) is None)
    assert not unplaced, "modules of a package missing from LAYERS:\n" + "\n".join(unplaced)

    def allowed(source: str, target: str) -> bool:
        source_layer, target_layer = _layer(source), _layer(target)
        assert source_layer is not None and target_layer is not None
        return (source == ENTRY_POINT or target_layer <= source_layer
                or (source, target) in UPWARD_IMPORTS)

    refused = _refused(PACKAGE, allowed)
    assert not refused, f"imports up the layers (bottom up: muxd/*.py, {', '.join(LAYERS)}):\n" + refused


# What only a pane uses (daemon/server.py's _pane_steps): a daemon with none has neither imported
# the modules nor mapped the libraries (libghostty; RE2 and the libstdc++ it needs: ~9 MiB of the
# base in all, benchmarks/README.md's bench_cold_start). Its first pane brings them in.
PANE_ONLY_MODULES = ("muxd.emulator.ghostty_backend", "pyghostty", "wcwidth", "muxd.detectors.runner",
                     "muxd.detectors.claude", "muxd.detectors.manifest_detector", "re2", "tomllib")
PANE_ONLY_LIBRARIES = ("/libghostty-vt.so", "/_re2.", "/libstdc++.so")
# What no daemon imports, pane or not: the MCP server and its SDK, the web view and its stack, the
# PostgreSQL driver (a SQLite daemon), html (emulator/screen_html.py escapes for itself).
NEVER_IN_A_DAEMON = ("mcp", "muxd.mcp_server", "muxd.web", "starlette", "uvicorn", "leather", "pydantic", "rich",
                     "psycopg", "html")


def _held(server: MuxdTestServer, names: tuple[str, ...]) -> list[str]:
    """The modules the daemon process has imported of `names` or under them, asked of the daemon
    itself (`muxd server modules`)."""
    imported = server.cli("server", "modules", check=True).stdout.split()
    assert "muxd.daemon.server" in imported  # the daemon's own list, not this process's
    return sorted(name for name in imported if any(_under(name, package) for package in names))


def _mapped(server: MuxdTestServer, libraries: tuple[str, ...]) -> list[str]:
    """Those of `libraries` the daemon process has mapped (/proc/PID/maps)."""
    assert server.pid is not None
    with open(f"/proc/{server.pid}/maps") as maps:
        text = maps.read()
    return [library for library in libraries if library in text]


def test_a_daemon_imports_what_only_a_pane_uses_at_its_first_pane_and_never_the_mcp_or_web_stacks():
    # A fresh interpreter, not a fork of its client, which holds modules of its own.
    server = MuxdTestServer(env={DAEMON_START_ENV: "exec"}).start()
    try:
        wait_until(lambda: "settled in" in server.log_path.read_text(), timeout=20,
                   message="the start's deferred work done")
        assert _held(server, PANE_ONLY_MODULES + NEVER_IN_A_DAEMON) == []
        assert _mapped(server, PANE_ONLY_LIBRARIES) == []
        server.cli("new-session", "-d", check=True)
        wait_until(lambda: "emulator " in server.log_path.read_text(), timeout=20, message="the first pane's warm-up")
        assert set(PANE_ONLY_MODULES) <= set(_held(server, PANE_ONLY_MODULES))
        assert _mapped(server, PANE_ONLY_LIBRARIES) == list(PANE_ONLY_LIBRARIES)
        assert _held(server, NEVER_IN_A_DAEMON) == []
    finally:
        server.stop()
