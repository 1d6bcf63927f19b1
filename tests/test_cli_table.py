"""The CLI's command table: every command it lists is implemented by the module it names."""

from __future__ import annotations

import pytest

from muxd.cli.table import CLI_COMMANDS, cli_command, implementation


@pytest.mark.parametrize("command", CLI_COMMANDS, ids=[c.name for c in CLI_COMMANDS])
def test_each_command_is_implemented_where_the_table_says(command):
    found = implementation(command)
    assert found.body.__module__ == f"muxd.cli.{command.module}"


def test_names_and_aliases_are_unique():
    names = [name for c in CLI_COMMANDS for name in (c.name, *c.aliases)]
    assert len(names) == len(set(names))


def test_a_command_missing_from_the_table_cannot_be_implemented():
    with pytest.raises(ValueError, match="not in CLI_COMMANDS"):
        cli_command("no-such-command")
