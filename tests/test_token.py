"""Giving a token without putting the secret in the process list: --token-file and the environment."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from muxd.client.token import cli_token, read_token_file, token_from_env
from muxd.errors import BadRequest
from muxd.testing.mcp_http import stdio_session
from muxd.testing.mcp_stdio import call_ok
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer


def test_the_token_comes_from_the_file_then_the_flag_then_the_environment(tmp_path: Path) -> None:
    secret_file = tmp_path / "token"
    secret_file.write_text("muxd_from_file\n")
    env = {"MUXD_TOKEN": "muxd_from_env", "MUXD_CLI_TOKEN": "muxd_cli_env"}
    assert token_from_env("muxd_flag", env, file=str(secret_file)) == "muxd_from_file"
    assert token_from_env("muxd_flag", env) == "muxd_flag"
    assert token_from_env(None, env) == "muxd_from_env"
    assert cli_token(None, env) == "muxd_cli_env"
    assert cli_token(None, {}) is None
    with pytest.raises(BadRequest, match="cannot read --token-file .*/nope: No such file"):
        read_token_file(str(tmp_path / "nope"))
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(BadRequest, match="does not hold a token"):
        read_token_file(str(tmp_path / "empty"))


async def _mcp_with_token_file(server: MuxdTestServer, token_file: Path) -> None:
    async with stdio_session(server, "--token-file", str(token_file)) as session:
        assert [p["name"] for p in (await call_ok(session, "list_panes"))["panes"]] == ["work"]


def test_token_file_scopes_mcp_and_the_cli_and_token_in_argv_warns(muxd_server: MuxdTestServer,
                                                                   tmp_path: Path) -> None:
    work = muxd_server.cli("new-session", "-d", "-P", "--name", "work", "--", "sleep", "600",
                           check=True).stdout.strip()
    muxd_server.cli("new-session", "-d", "--name", "other", "--", "sleep", "600", check=True)
    secret = muxd_server.cli("token", "create", "--tier", "view_only", "--pane", work,
                             check=True).stdout.split()[0]
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    asyncio.run(patient_wait_for(_mcp_with_token_file(muxd_server, token_file), timeout=30))

    listed = muxd_server.cli("--token-file", str(token_file), "ls")
    assert listed.returncode == 0 and "work" in listed.stdout and "other" not in listed.stdout
    assert "warning" not in listed.stderr
    flagged = muxd_server.cli("--token", secret, "ls")
    assert "work" in flagged.stdout and "other" not in flagged.stdout
    assert "warning: --token shows the secret to every user of this machine (ps)" in flagged.stderr
    assert "--token-file FILE or $MUXD_CLI_TOKEN" in flagged.stderr
    out = muxd_server.cli("mcp", "--token", "muxd_nope", input="")
    assert "muxd mcp: warning: --token shows the secret" in out.stderr and "$MUXD_TOKEN" in out.stderr
    missing = muxd_server.cli("mcp", "--token-file", str(tmp_path / "nope"), input="")
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"muxd: cannot read --token-file {tmp_path / 'nope'}: No such file or directory"
