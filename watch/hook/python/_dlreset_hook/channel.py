# The hook's channel to the watcher: a non-blocking Unix datagram socket, and the JSON it sends.
#
# This module is loaded at the program's start, for the hello, before the program has imported
# anything: it uses only sys and the interpreter's built-in modules (compiled in, no file read, no
# Python code run), and takes the name of one it loaded itself off sys.modules again.

import sys


def builtin(name):
    """A built-in module (compiled into the interpreter): the loaded one, or a fresh one whose
    name is taken off sys.modules again, so that the program's modules are what they would be."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    if name not in sys.builtin_module_names:
        return None
    module = __import__(name)
    sys.modules.pop(name, None)
    return module


# ---------------------------------------------------------------------------------------------
# JSON, by hand: the json module is not loaded when the hello goes out.

_ESCAPES = {i: "\\u%04x" % i for i in range(32)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", 10: "\\n", 9: "\\t", 13: "\\r"})


def to_json(value):
    kind = type(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value) if value == value and value not in (float("inf"), float("-inf")) else "null"
    if kind is str:
        return '"' + value.translate(_ESCAPES) + '"'
    if kind is list or kind is tuple:
        return "[" + ",".join(to_json(item) for item in value) + "]"
    if kind is dict:
        return "{" + ",".join(to_json(str(key)) + ":" + to_json(item) for key, item in value.items()) + "}"
    return to_json("<%s>" % kind.__name__)


# ---------------------------------------------------------------------------------------------
# The channel.

class Channel(object):
    """A non-blocking Unix datagram socket to the watcher. The watcher's queue holds only a few
    datagrams (net.unix.max_dgram_qlen, 10 by default) until it reads them: what it cannot take
    now waits in a short list of this process's own, sent before the next event; past that, an
    event is dropped and counted. The sequence numbers let the watcher count the gaps."""

    PENDING = 256

    def __init__(self, path):
        self.path = path
        self.socket = None
        self.sequence = 0
        self.lost = 0
        self.pending = []
        self.broken = False

    def open(self):
        socket_module = builtin("_socket")
        if socket_module is None:
            self.broken = True
            return False
        channel = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_DGRAM | socket_module.SOCK_CLOEXEC)
        channel.setblocking(False)
        try:
            channel.connect(self.path)
        except OSError:
            channel.close()
            self.broken = True
            return False
        self.socket = channel
        return True

    def forked(self):
        """In a forked child: its own numbering from 1; what waited is the parent's to send."""
        self.sequence = 0
        self.lost = 0
        self.pending = []

    def _try(self, data):
        """Sends one datagram; False when the watcher's queue is full."""
        try:
            self.socket.send(data)
            return True
        except BlockingIOError:
            return False
        except OSError:
            self.broken = True  # the watcher is gone: stay quiet from now on
            return True

    def send(self, event):
        if self.broken or self.socket is None:
            return
        self.sequence += 1
        event["seq"] = self.sequence
        event["lost"] = self.lost
        data = to_json(event).encode("utf-8", "replace")
        while self.pending and self._try(self.pending[0]):
            self.pending.pop(0)
        if not self.pending and self._try(data):
            return
        if len(self.pending) < self.PENDING:
            self.pending.append(data)
        else:
            self.lost += 1  # never wait for the watcher
