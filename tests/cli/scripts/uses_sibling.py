"""Fixture: imports a module that sits next to it (the script's folder is on sys.path)."""

from __future__ import annotations

import sibling_helper

if __name__ == "__main__":
    print(sibling_helper.greet("flow-xray"))
