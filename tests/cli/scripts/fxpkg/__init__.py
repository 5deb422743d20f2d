"""Fixture package for ``flow-xray run -m fxpkg.tool``."""
