"""``flow-xray-viewer DOTFILE [-p PORT] [--no-browser]``: serve a DOT file's viewer on loopback.

0.2.0's command, kept: it binds 127.0.0.1 only, prints the URL, opens a
browser tab unless ``--no-browser``, and serves until Ctrl+C. The page is the
package's offline viewer (`standalone_viewer_html`), built from the file at
each request, so reloading the tab shows the file as it is now. As in 0.2.0,
``/graph.dot`` serves the DOT text itself. Standard library only.
"""

from __future__ import annotations

import argparse
import http.server
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from flow_xray.autodiff.viewer import standalone_viewer_html

HOST = "127.0.0.1"


class _Parser(argparse.ArgumentParser):
    """argparse with the package's CLI convention: one ``error:`` line, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see 'flow-xray-viewer --help')\n")


def _handler(dot_path: Path) -> type[http.server.BaseHTTPRequestHandler]:
    """A request handler serving the viewer page and the DOT text of ``dot_path``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # stdlib name
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                dot = dot_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.send_error(500, f"cannot read {dot_path.name}: {exc}")
                return
            if path in ("/", "/viewer.html", "/index.html"):
                body = standalone_viewer_html(dot, title=dot_path.name).encode("utf-8")
                kind = "text/html; charset=utf-8"
            elif path == "/graph.dot":
                body, kind = dot.encode("utf-8"), "text/plain; charset=utf-8"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the viewer of a DOT file on 127.0.0.1 until interrupted; returns the exit status."""
    parser = _Parser(
        prog="flow-xray-viewer",
        description="Serve a DOT file's offline viewer on 127.0.0.1 (Ctrl+C to stop).",
    )
    parser.add_argument("dotfile", type=Path, help="path to a .dot file")
    parser.add_argument("-p", "--port", type=int, default=0, help="port (0 = any free port)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    args = parser.parse_args(argv)
    dot_path: Path = args.dotfile
    if not dot_path.is_file():
        print(f"error: not a file: {dot_path}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"error: --port {args.port}: not a port number", file=sys.stderr)
        return 2
    try:
        server = http.server.ThreadingHTTPServer((HOST, args.port), _handler(dot_path))
    except OSError as exc:
        print(f"error: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    with server:
        url = f"http://{HOST}:{server.server_address[1]}/viewer.html"
        print(url, file=sys.stderr, flush=True)
        if not args.no_browser:
            webbrowser.open(url)
        print("Serving... Ctrl+C to stop", file=sys.stderr, flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0
