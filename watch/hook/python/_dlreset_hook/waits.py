# The hook's clock on the input wait: how long the program's next() on a DataLoader iterator
# waited for each batch, and how long its loop worked between two (docs/watch.md, "The input
# wait"). One "pass_waits" event a pass, sent when the pass ends; nothing is sent for a batch.
#
# Two attributes of torch's _BaseDataLoaderIter carry it, so that every iterator class torch
# derives from it is covered, and neither puts a frame of the hook in a traceback:
# - `__next__` becomes a property. CPython's tp_iternext slot (next(), a for loop) looks the
#   method up on the type and calls a descriptor's __get__ with the iterator, then calls what it
#   returns: the getter notes the call's start and returns the original method, bound, which then
#   runs on its own.
# - `_num_yielded` becomes a data descriptor with a __set__ and no __get__: a read finds the
#   instance's __dict__ as before, without a call; torch 1.13's __next__ assigns it `+= 1` right
#   before it returns a batch, which the setter sees, and `__init__` and `_reset` assign it 0 when
#   a pass begins. One difference is left: read before torch's __init__ first assigned it (an
#   __init__ that failed early), it gives the descriptor instead of raising AttributeError.
# A call costs cheap arithmetic only (docs/results.md has the figure): the per-iterator state is
# kept by id() with a weak reference whose callback ends the pass of an iterator the program let go.
# A wait of 2^10 us or more also reads the iterator's out-of-order batches (blocking.py): the
# test of the bucket against the histogram's cap, which every call made already, is made against
# 2^10 us first, so that a faster call makes no test more than before.

import os
import sys

from . import blocking
from .channel import builtin
from .state import HOOK

HIST_CAP = 40  # a wait's bucket is int(wait * 1e6).bit_length(), at most this
_NEVER = float("inf")

_monotonic = builtin("time").monotonic
_get_ident = builtin("_thread").get_ident
_PASSES = HOOK.passes
_ITERATORS = HOOK.iterators


class _Iterator(object):
    """What the hook keeps of one iterator from its first pass to its end."""
    __slots__ = ("ref", "key", "loader", "passes")


class _Pass(object):
    """One pass in progress: the thread of its first next() call times it; `called` is the start
    of that thread's call in progress (None once it returned a batch), `last` the return of its
    latest batch."""
    __slots__ = ("owner", "number", "pid", "begun", "thread", "thread_name", "main", "other", "called",
                 "batches", "first_batch", "first_wait", "wait", "step", "last", "max_wait", "hist",
                 "blocked", "blocked_wait", "worst", "beat")

    def __init__(self, owner, now):
        self.owner = owner
        self.number = owner.passes
        self.pid = os.getpid()
        self.begun = now
        self.thread = self.thread_name = self.called = None
        self.main = False
        self.other = self.batches = 0
        self.first_batch = self.first_wait = self.last = None
        self.wait = self.step = self.max_wait = 0.0
        self.hist = [0] * (HIST_CAP + 1)
        self.blocked = 0  # head-of-line blocked waits (blocking.py), their sum, the longest one
        self.blocked_wait = 0.0
        self.worst = None
        # when the pass next says that it hands out batches (--hang-timeout), else never
        beat = HOOK.beat_s
        self.beat = now + beat if beat is not None else _NEVER


def _fail(where, error):
    HOOK.hook_error(where, error)


# ---------------------------------------------------------------------------------------------
# A pass's begin and end.

def _loader_key(iterator):
    """The key of the loader whose _get_iterator made `iterator` on this thread, where known."""
    values = iterator.__dict__
    thread = _get_ident()
    made_for = HOOK.making.get(thread)
    if values.get("_num_workers") == 0:
        HOOK.making.pop(thread, None)  # no _reset of a multi-process iterator will take it
    loader = made_for() if made_for is not None else None
    if loader is None or loader.__dict__.get("dataset") is not values.get("_dataset"):
        return None
    return HOOK.key(loader, "L")


def _freed(ident):
    def callback(ref):
        try:
            owner = _ITERATORS.get(ident)
            if owner is not None and owner.ref is ref:
                end(ident, "freed", False)
                del _ITERATORS[ident]
        except Exception:
            pass  # a weakref callback's error would be printed into the program's stderr
    return callback


def _begin(iterator):
    ident = id(iterator)
    owner = _ITERATORS.get(ident)
    if owner is None or owner.ref() is not iterator:
        owner = _Iterator()
        owner.ref = builtin("_weakref").ref(iterator, _freed(ident))
        owner.key = HOOK.key(iterator, "I")
        owner.loader = _loader_key(iterator)
        owner.passes = 0
        _ITERATORS[ident] = owner
    owner.passes += 1
    _PASSES[ident] = _Pass(owner, _monotonic())
    if HOOK.beat_s is not None:
        HOOK.emit("pass_begun", {"iterator": owner.key, "loader": owner.loader, "pass": owner.passes})


def _beat(current, now):
    """--hang-timeout: the pass hands out batches; said once a beat at most."""
    current.beat = now + HOOK.beat_s
    HOOK.emit("pass_beat", {"iterator": current.owner.key, "pass": current.number, "batches": current.batches})


def _boundary(iterator):
    """`_num_yielded` was set to 0: a pass begins; the one in progress, if any, ends."""
    ident = id(iterator)
    current = _PASSES.get(ident)
    if current is not None:
        if current.thread is None and "_send_idx" not in iterator.__dict__:
            return  # a multi-process __init__'s own first _reset: its first pass goes on
        end(ident, "reset", False)
    _begin(iterator)


def end(ident, how, stopped):
    """Ends the pass in progress of the iterator whose id() is `ident`, if any, and says so."""
    ended = _PASSES.pop(ident, None)
    if ended is None or ended.pid != os.getpid():
        return  # none, or a forked child's copy of its parent's pass
    owner = ended.owner
    batches = ended.batches
    fields = blocking.fields(ended)
    fields.update({
        "iterator": owner.key, "loader": owner.loader, "pass": ended.number,
        "thread": ended.thread_name, "main_thread": ended.main, "other_thread_calls": ended.other,
        "begun": ended.begun, "batches": batches, "first_batch_s": ended.first_batch,
        "first_wait_s": ended.first_wait, "wait_s": ended.wait, "step_s": ended.step,
        "last_batch": ended.last, "max_wait_s": ended.max_wait if batches > 1 else None,
        "hist": [[bucket, count] for bucket, count in enumerate(ended.hist) if count],
        "end": how, "stopped": stopped is True})
    HOOK.emit("pass_waits", fields)


def end_of(iterator, how, stopped=False):
    end(id(iterator), how, stopped)


def at_exit():
    """A pass still in progress when the program exits is sent with end "exit"."""
    try:
        for ident in list(_PASSES):
            end(ident, "exit", False)
    except Exception as error:
        _fail("pass_waits at exit", error)


# ---------------------------------------------------------------------------------------------
# The two descriptors, called for every next().

def _first_call(current, thread, now):
    current.thread = thread
    threading = sys.modules.get("threading")
    # Read from threading's table, never through current_thread(): that would register a thread
    # threading did not start.
    known = getattr(threading, "_active", {}).get(thread) if threading is not None else None
    name = getattr(known, "_name", None)
    current.thread_name = name if type(name) is str else "thread %d" % thread
    main = getattr(threading, "_main_thread", None) if threading is not None else None
    current.main = main is not None and getattr(main, "_ident", None) == thread
    current.called = now


def next_property(original):
    """`__next__` as a property: looking it up on a call notes the call's start."""
    bind = original.__get__

    def get(iterator):
        try:
            current = _PASSES.get(id(iterator))
            if current is not None:
                thread = _get_ident()
                if thread == current.thread:
                    now = _monotonic()
                    if current.called is None and current.last is not None:
                        current.step += now - current.last  # the previous call returned a batch
                    current.called = now
                elif current.thread is None:
                    _first_call(current, thread, _monotonic())
                else:
                    # Counted, not timed: its batch's return finds no call in progress.
                    current.other += 1
                    current.called = None
        except Exception as error:
            _fail("_BaseDataLoaderIter.__next__", error)
        return bind(iterator)

    return property(get, None, None, original.__doc__)


class YieldedDescriptor(object):
    """`_num_yielded`, kept in the iterator's __dict__ as the plain attribute was: its assignment
    `+= 1` marks a batch's return, an assignment of 0 a pass's begin. The return is timed where
    the getter timed the call: torch's iterators are used by one thread at a time. `multi` is
    torch's _MultiProcessingDataLoaderIter, whose waits blocking.py reads."""
    __slots__ = ("multi",)

    def __init__(self, multi=None):
        self.multi = multi

    def __set__(self, iterator, value):
        iterator.__dict__["_num_yielded"] = value
        try:
            if type(value) is not int:
                return  # not torch's count: never run the program's __bool__ or __eq__
            if not value:
                _boundary(iterator)
                return
            current = _PASSES.get(id(iterator))
            if current is None or current.called is None:
                return  # no pass, or a call the getter did not time (another thread's)
            now = _monotonic()
            wait = now - current.called
            current.called = None
            current.last = now
            current.wait += wait
            current.batches += 1
            if now >= current.beat:
                _beat(current, now)
            if current.batches == 1:
                current.first_batch = now - current.begun
                current.first_wait = wait
                return
            if wait > current.max_wait:
                current.max_wait = wait
            bucket = int(wait * 1e6).bit_length()
            if bucket <= 10:  # blocking.HOL_BUCKET: a fast call, within HIST_CAP; its one test, as before
                current.hist[bucket] += 1
                return
            current.hist[bucket if bucket < HIST_CAP else HIST_CAP] += 1
            blocking.note(current, iterator, value, wait, self.multi)
        except Exception as error:
            _fail("_BaseDataLoaderIter._num_yielded", error)

    def __delete__(self, iterator):
        values = iterator.__dict__
        if "_num_yielded" not in values:
            raise AttributeError("'%s' object has no attribute '_num_yielded'" % type(iterator).__name__)
        del values["_num_yielded"]
