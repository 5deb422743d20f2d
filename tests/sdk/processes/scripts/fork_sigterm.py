"""Fixture: the parent SIGTERMs a forked child at once and reports how the child ended.

Prints {"signal": N or null, "exit": N or null} for the child.
"""

from __future__ import annotations

import json
import os
import signal
import time

if __name__ == "__main__":
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(child, signal.SIGTERM)
    _, status = os.waitpid(child, 0)
    ended = {
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    }
    print(json.dumps(ended))
