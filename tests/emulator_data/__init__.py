"""Byte streams shared by the emulator tests (generated, deterministic)."""

from __future__ import annotations
