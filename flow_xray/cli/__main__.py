"""``python -m flow_xray.cli ...``: the command line, as in 0.2.0."""

from flow_xray.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
