"""Where the fixture package lives (a module of its own: test modules importing
``conftest`` by name may get another folder's ``conftest``)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHOP = FIXTURES / "shop"
