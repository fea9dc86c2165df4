# The hook's per-process state: one HookState, HOOK, that holds all a process's hook keeps between
# two events. A forked process (a DataLoader's fork worker) inherits it, socket and all.
#
# Loaded at the program's start with channel.py, for the hello: it imports nothing that is not
# loaded already (os, sys, the package's channel module).

import os
import sys

from .channel import Channel, builtin

PROTOCOL = 1


def _now():
    clock = sys.modules.get("time")
    return clock.monotonic() if clock is not None else None


class HookState(object):
    """The channel, whether the hook is switched off, and what it keeps of the program's objects
    to name them and to tell one pass from the next. Only weak references and ids: the hook must
    not keep alive what the program let go."""

    def __init__(self):
        self.channel = None
        # the process the channel's numbering belongs to: a forked child (a fork worker) numbers
        # its own events from 1, as the watcher counts each process's gaps
        self.pid = None
        self.switched_off = False
        # id(object) -> (a weak reference to it, or None where it takes none; its key, e.g. "L1")
        self.keys = {}
        # key prefix ("L", "I", "S") -> the last number given
        self.counters = {}
        # id(sampler) -> (its weak ref, the weak ref of the iterator of its latest pass, its epoch then)
        self.latest_pass = {}
        # thread id -> a weak ref to the loader whose _get_iterator is running in it
        self.making = {}
        # thread id -> the names of the other threads alive as that loader's iterator began
        # (fields.other_threads), sent with its iterator_made
        self.fork_threads = {}
        # iterator key -> the key of the loader it was made for
        self.iterator_loader = {}
        # the DataLoader subclasses already reported as defining _iterator themselves
        self.reported_classes = set()
        # id(iterator) -> its pass in progress, and id(iterator) -> what the hook keeps of it
        # between passes (its key, its loader's, a weak ref whose callback ends its pass): waits.py
        self.passes = {}
        self.iterators = {}
        # the pid of the DataLoader worker that said it was ready, so that it says so once
        self.ready_pid = None
        # with --hang-timeout: how often a pass that hands out batches says so (waits.py), in
        # seconds; None: never, and no pass says that it began
        self.beat_s = None

    def start(self, path):
        """Opens the channel to the watcher's socket at `path`; False when it cannot."""
        self.channel = Channel(path)
        self.pid = os.getpid()
        return self.channel.open()

    def arm_hang_watch(self, setting):
        """With --hang-timeout the watcher's `setting` is "BEAT_S,SIGNAL,PATH": passes say that
        they began and, every BEAT_S at most, that they hand out batches; and faulthandler, a
        module compiled into the interpreter, writes every thread's stack to the file at PATH
        when this process gets SIGNAL, a real-time signal the watcher sends only to a hung
        program. A handler the signal has already is called after the dump; the default one (which
        would end the process) never is. Nothing is written to the program's own streams."""
        try:
            beat, number, path = setting.split(",", 2)
            number = int(number)
            signals = builtin("_signal")
            handlers = builtin("faulthandler")
            if signals is not None and handlers is not None:
                chain = signals.getsignal(number) not in (signals.SIG_DFL, signals.SIG_IGN, None)
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
                handlers.register(number, file=fd, all_threads=True, chain=chain)
            self.beat_s = float(beat)
        except Exception as error:
            # The hang watch goes without this process's stacks; the rest of the hook stays on.
            self.emit("unseen", {"what": "stacks", "reason": "%s: %s" % (type(error).__name__, error)})

    def emit(self, kind, fields):
        if self.channel is None or self.switched_off:
            return
        environ = os.environ
        pid = os.getpid()
        if pid != self.pid:
            self.pid = pid
            self.channel.forked()
        event = {"v": PROTOCOL, "kind": kind, "pid": pid, "t": _now(),
                 "rank": environ.get("RANK"), "local_rank": environ.get("LOCAL_RANK")}
        event.update(fields)
        self.channel.send(event)

    def hook_error(self, where, error):
        """An error of the hook's own: tell the watcher, and patch nothing more."""
        try:
            self.emit("hook_error", {"where": where, "error": "%s: %s" % (type(error).__name__, error)})
        except Exception:
            pass
        self.switched_off = True

    def key(self, obj, prefix):
        """The name this process gives `obj`: the prefix and a count, e.g. "L1" (never the
        object's repr: that would run the program's code)."""
        entry = self.keys.get(id(obj))
        if entry is not None:
            ref, key = entry
            if ref is None or ref() is obj:
                return key
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        key = "%s%d" % (prefix, self.counters[prefix])
        try:
            ref = builtin("_weakref").ref(obj)
        except TypeError:
            ref = None
        self.keys[id(obj)] = (ref, key)
        return key


HOOK = HookState()
