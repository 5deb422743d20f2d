"""``python -m flow_xray``: the command line."""

from flow_xray.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
