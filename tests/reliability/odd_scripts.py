"""A corpus of scripts that do odd things to their own process, for ``flow-xray run``.

Each script first makes one traced call, then misbehaves: replaces or closes
its standard streams, points them at a full device, exits with odd objects,
breaks the functions a writer would use, leaves hooks, signals itself. Under
``flow-xray run`` each must end with plain ``python``'s exit status (128 + N
for a process killed by signal N, as the shell reports it; flow-xray exits
with that status itself) and leave its trace. ``STREAMS`` says where a
script's stdout and stderr point for a run: a pipe, or ``/dev/full`` (every
write fails with ENOSPC).
"""

from __future__ import annotations

from typing import Final

HEADER: Final = """\
import os, sys
from flow_xray import trace

@trace
def work(x):
    return x

work(1)
"""

_TEE: Final = """\
class Tee:  # what a logging proxy looks like: no isatty(), no fileno()
    def __init__(self):
        self.text = []
    def write(self, s):
        self.text.append(s)
        return len(s)
    def flush(self):
        pass
"""

#: name -> the script's body after `HEADER`.
SCRIPTS: Final[dict[str, str]] = {
    # the standard streams
    "stdout is a tee": _TEE + "sys.stdout = Tee()\nprint('hello')\n",
    "stderr is a tee": _TEE + "sys.stderr = Tee()\n",
    "both are tees, then it raises": _TEE
    + "sys.stdout = sys.stderr = Tee()\nraise ValueError('x')\n",
    "stderr without flush()": (
        "class W:\n    def write(self, s):\n        return len(s)\nsys.stderr = W()\n"
    ),
    "stdout without flush()": (
        "class W:\n    def write(self, s):\n        return len(s)\nsys.stdout = W()\n"
    ),
    "stderr whose every call fails": (
        "class W:\n    def write(self, s):\n        raise OSError(5, 'EIO')\n"
        "    def flush(self):\n        raise OSError(5, 'EIO')\n"
        "    def isatty(self):\n        raise RuntimeError\n"
        "    def fileno(self):\n        raise RuntimeError\nsys.stderr = W()\n"
    ),
    "streams set to None": "sys.stdout = None\nsys.stderr = None\n",
    "streams set to None, then it raises": "sys.stdout = sys.stderr = None\nraise ValueError(1)\n",
    "streams closed": "sys.stdout.close()\nsys.stderr.close()\n",
    "descriptors 1 and 2 closed": "os.close(1)\nos.close(2)\n",
    "descriptors closed, then it prints": "os.close(1)\nos.close(2)\nprint('lost')\n",
    "stdout detached": "sys.stdout.detach()\n",
    "stderr detached": "sys.stderr.detach()\n",
    "stdout reopened on /dev/full": "sys.stdout = open('/dev/full', 'w')\nprint('x')\n",
    "/dev/full over descriptor 2": "os.dup2(os.open('/dev/full', os.O_WRONLY), 2)\n",
    "/dev/full over descriptor 2, then it raises": (
        "os.dup2(os.open('/dev/full', os.O_WRONLY), 2)\nraise ValueError(1)\n"
    ),
    "/dev/full over descriptor 1, then it prints": (
        "os.dup2(os.open('/dev/full', os.O_WRONLY), 1)\nprint('x')\n"
    ),
    "stderr is a StringIO, then it raises": (
        "import io\nsys.stderr = io.StringIO()\nraise ValueError(1)\n"
    ),
    "stdout reconfigured to ASCII": "sys.stdout.reconfigure(encoding='ascii')\nprint('\\u00e9')\n",
    # sys.exit
    "sys.exit(obj) whose __str__ raises": (
        "class B:\n    def __str__(self):\n        raise RuntimeError('no')\nsys.exit(B())\n"
    ),
    "sys.exit(obj) whose __str__ raises KeyboardInterrupt": (
        "class B:\n    def __str__(self):\n        raise KeyboardInterrupt\nsys.exit(B())\n"
    ),
    "sys.exit(obj) whose __str__ returns an int": (
        "class B:\n    def __str__(self):\n        return 3\nsys.exit(B())\n"
    ),
    "sys.exit(int subclass with a failing __str__)": (
        "class I(int):\n    def __str__(self):\n        raise RuntimeError\nsys.exit(I(3))\n"
    ),
    "sys.exit(2**100)": "sys.exit(2**100)\n",
    "sys.exit(-1)": "sys.exit(-1)\n",
    "sys.exit(256)": "sys.exit(256)\n",
    "sys.exit(True)": "sys.exit(True)\n",
    "sys.exit(1.5)": "sys.exit(1.5)\n",
    "sys.exit('message')": "sys.exit('giving up')\n",
    "sys.exit() in a thread": (
        "import threading\nt = threading.Thread(target=lambda: sys.exit(3))\nt.start()\nt.join()\n"
    ),
    # exceptions and hooks
    "an excepthook that raises": (
        "def hook(*a):\n    raise RuntimeError('hook')\n"
        "sys.excepthook = hook\nraise ValueError(1)\n"
    ),
    "sys.excepthook set to None": "sys.excepthook = None\nraise ValueError(1)\n",
    "threading.excepthook set to None": "import threading\nthreading.excepthook = None\n",
    "an exception whose __str__ raises": (
        "class E(Exception):\n    def __str__(self):\n        raise RuntimeError\nraise E()\n"
    ),
    "a BaseException subclass": "class B(BaseException):\n    pass\nraise B('x')\n",
    "KeyboardInterrupt": "raise KeyboardInterrupt\n",
    "an atexit handler that raises": (
        "import atexit\ndef f():\n    raise RuntimeError('atexit')\natexit.register(f)\n"
    ),
    "an atexit handler that calls os._exit(5)": (
        "import atexit\natexit.register(lambda: os._exit(5))\n"
    ),
    # what a writer uses
    "os.replace, os.rename, os.open and open replaced": (
        "import builtins\nos.replace = os.rename = os.open = builtins.open = None\n"
    ),
    "io.open, os.write, os.fstat and os.stat replaced": (
        "import io\nio.open = os.fdopen = os.write = os.fstat = os.stat = None\n"
    ),
    "umask 0o777": "os.umask(0o777)\n",
    "a profile function left behind": "sys.setprofile(lambda *a: None)\n",
    "the working folder is /": "os.chdir('/')\n",
    "sys.path emptied": "sys.path[:] = []\n",
    "recursion limit 60": "sys.setrecursionlimit(60)\n",
    # signals
    "SIGTERM to itself": (
        "import signal, time\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(5)\n"
    ),
    "SIGINT to itself": "import signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n",
    "SIGTERM ignored": "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n",
    "its own SIGTERM handler, then SIGTERM": (
        "import signal, time\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
        "os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(5)\n"
    ),
}

#: Where stdout and stderr point: every script runs with pipes; these also on /dev/full.
STREAMS: Final[dict[str, tuple[str, ...]]] = {
    name: ("pipe", "full stdout", "full stderr") if ("std" in name or "tee" in name) else ("pipe",)
    for name in SCRIPTS
}
