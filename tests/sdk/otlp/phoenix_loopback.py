"""Start Arize Phoenix with its OTLP gRPC receiver bound to loopback only.

Phoenix binds its gRPC receiver to every interface (``[::]:PORT``) whatever
``PHOENIX_HOST`` says. Test servers must listen on 127.0.0.1 only, so this
wrapper rewrites the bind address of every gRPC aio server before Phoenix's
own entry point runs. Run it with Phoenix's interpreter::

    <phoenix-python> phoenix_loopback.py serve

Configuration comes from the usual ``PHOENIX_*`` environment variables.
"""

from __future__ import annotations

import sys
from typing import Any

import grpc.aio


def _loopback(address: str) -> str:
    port = address.rsplit(":", 1)[-1]
    return f"127.0.0.1:{port}"


def _install_loopback_bind() -> None:
    make_server = grpc.aio.server

    def loopback_server(*args: Any, **kwargs: Any) -> Any:
        server = make_server(*args, **kwargs)
        add_insecure = server.add_insecure_port
        add_secure = server.add_secure_port
        server.add_insecure_port = lambda address: add_insecure(_loopback(address))
        server.add_secure_port = lambda address, creds: add_secure(_loopback(address), creds)
        return server

    grpc.aio.server = loopback_server


def main() -> None:
    """Patch the gRPC bind address, then hand over to ``phoenix`` with our argv."""
    _install_loopback_bind()
    from phoenix.server.main import main as phoenix_main

    sys.argv = ["phoenix", *sys.argv[1:]]
    phoenix_main()


if __name__ == "__main__":
    main()
