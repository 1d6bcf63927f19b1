"""Fixtures shared by the test files (the muxd pytest plugin gives `muxd_server`)."""

import pytest

from muxd.testing.fake_models.agent_pane import PANE_HEIGHT, PANE_WIDTH


@pytest.fixture
def pane_size() -> tuple[int, int]:
    """Columns and rows of a real agent's pane; tests that run at several sizes parametrize it."""
    return (PANE_WIDTH, PANE_HEIGHT)
