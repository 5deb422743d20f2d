"""Fixture: a traced call raises and nothing catches it."""

from __future__ import annotations

from flow_xray import trace


@trace
def load_config(path: str) -> dict[str, str]:
    raise ValueError(f"config {path} is broken")


@trace
def main() -> None:
    load_config("settings.toml")


if __name__ == "__main__":
    main()
