# What the hook's events say: the Python stack that did it, and the loader, iterator and sampler
# it was done to, read from their __dict__ (never through a property or a repr: that would run the
# program's code).

import os
import sys

from .channel import builtin
from .state import HOOK

MAX_FRAMES = 64
MAX_CODE_CHARS = 200

# The hook's own files, whose frames no stack shows: this package's modules and the bootstrap
# beside it (watch/hook/python/sitecustomize.py), as the interpreter names them in code objects.
_PACKAGE_DIR = os.path.dirname(__file__)
_OWN_FILES = (_PACKAGE_DIR + os.sep, os.path.join(os.path.dirname(_PACKAGE_DIR), "sitecustomize.py"))


def stack():
    """The Python stack of the caller, outermost first, without the hook's own frames."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_OWN_FILES):
            frames.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    omitted = max(0, len(frames) - MAX_FRAMES)
    frames = frames[:MAX_FRAMES]
    frames.reverse()
    lines = sys.modules.get("linecache")
    found = []
    for filename, line, name in frames:
        code = ""
        if lines is not None:
            try:
                code = lines.getline(filename, line).strip()[:MAX_CODE_CHARS]
            except Exception:
                code = ""
        found.append([filename, line, name, code])
    return {"stack": found, "frames_omitted": omitted}


def caller_name():
    """The name of the function that called the patched attribute, e.g. '__del__'."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_FILES):
        frame = frame.f_back
    return frame.f_code.co_name if frame is not None else ""


def class_name(obj):
    kind = type(obj)
    module = getattr(kind, "__module__", "")
    module = module if type(module) is str and module != "builtins" else ""
    return (module + "." if module else "") + kind.__qualname__


def int_or_none(value):
    return value if type(value) is int else None


def _start_method(loader):
    context = loader.__dict__.get("_DataLoader__multiprocessing_context")
    if context is None:
        multiprocessing = sys.modules.get("multiprocessing")
        default = getattr(getattr(multiprocessing, "context", None), "_default_context", None)
        context = getattr(default, "_actual_context", None) or getattr(default, "_default_context", None)
    name = getattr(context, "_name", None)
    return name if type(name) is str else None


def sampler_of(holder):
    """The sampler whose order a loader or iterator follows: a batch sampler's inner sampler,
    else the sampler itself."""
    sampler = holder.__dict__.get("sampler")
    batch_sampler = holder.__dict__.get("batch_sampler", holder.__dict__.get("_index_sampler"))
    if sampler is None and batch_sampler is not None:
        sampler = batch_sampler.__dict__.get("sampler", batch_sampler) if hasattr(batch_sampler, "__dict__") else None
    return sampler


def sampler_fields(sampler, iterator=None):
    """The sampler a pass draws its order from, and its epoch now; with `iterator`, the pass is
    remembered, so that a set_epoch that comes too late for it can be told."""
    if sampler is None or not hasattr(sampler, "__dict__"):
        return {"sampler": None}
    epoch = int_or_none(sampler.__dict__.get("epoch"))
    if iterator is not None:
        weak = builtin("_weakref")
        try:
            HOOK.latest_pass[id(sampler)] = (weak.ref(sampler), weak.ref(iterator), epoch)
        except TypeError:
            pass
    return {"sampler": HOOK.key(sampler, "S"), "sampler_class": class_name(sampler), "sampler_epoch": epoch}


def pending_pass(sampler):
    """The latest pass of `sampler` that drew its order and handed out no batch yet, if any."""
    entry = HOOK.latest_pass.get(id(sampler))
    if entry is None or entry[0]() is not sampler:
        return {}
    iterator = entry[1]()
    if iterator is None:
        return {}
    state = iterator_state(iterator)
    if state["shut_down"] or state["yielded"] != 0 or not state["in_flight"]:
        return {}
    return {"pending_iterator": state["iterator"], "pending_epoch": entry[2]}


def loader_fields(loader):
    fields = {"loader": HOOK.key(loader, "L")}
    if loader is None:
        return fields
    values = loader.__dict__
    workers = int_or_none(values.get("num_workers"))
    fields.update({
        "dataset": class_name(values.get("dataset")),
        "batch_size": int_or_none(values.get("batch_size")),
        "workers": workers,
        "persistent": values.get("persistent_workers") is True,
        "start_method": _start_method(loader) if workers else None,
        "loader_class": class_name(loader),
    })
    return fields


def iterator_state(iterator):
    """What a multi-process iterator holds now: its workers and the pass in progress."""
    values = iterator.__dict__
    workers = []
    for process in values.get("_workers", ()):
        pid = getattr(getattr(process, "_popen", None), "pid", None)
        if type(pid) is int:
            workers.append(pid)
    sent = int_or_none(values.get("_send_idx"))
    received = int_or_none(values.get("_rcvd_idx"))
    return {
        "iterator": HOOK.key(iterator, "I"),
        "worker_pids": workers,
        "yielded": int_or_none(values.get("_num_yielded")),
        "in_flight": sent - received if sent is not None and received is not None else None,
        "ready": _ready(values, received),
        "shut_down": values.get("_shutdown") is True,
    }


def old_iterator_fields(old):
    """An iterator the loader let go: a multi-process one's state, else its key alone."""
    if hasattr(old, "__dict__") and "_workers" in old.__dict__:
        return iterator_state(old)
    return {"iterator": HOOK.key(old, "I"), "worker_pids": []}


def _queued(queue):
    """How many results wait in a queue, read without taking a lock: a multiprocessing queue's
    count from its semaphore (a worker's put() takes it before the batch goes down the pipe), a
    thread queue's from its deque. None where neither is there."""
    semaphore = getattr(getattr(queue, "_sem", None), "_semlock", None)
    maximum = getattr(queue, "_maxsize", None)
    if semaphore is not None and type(maximum) is int:
        return maximum - semaphore._get_value()
    items = getattr(queue, "queue", None)
    return len(items) if hasattr(items, "__len__") else None


def _ready(values, received):
    """Batches of the pass in progress that the workers had finished and it had not handed out:
    those it received out of order and holds in _task_info, and those waiting in its result
    queues. None where it cannot know: the rest of in_flight was asked of the workers and may or
    may not have been made."""
    try:
        held = 0
        for index, info in values.get("_task_info", {}).items():
            if type(index) is int and received is not None and index >= received and len(info) == 2:
                held += 1
        queues = [values.get("_worker_result_queue")]
        if values.get("_data_queue") is not queues[0]:
            queues.append(values.get("_data_queue"))
        for queue in queues:
            waiting = _queued(queue) if queue is not None else 0
            if waiting is None:
                return None
            held += waiting
        return held
    except Exception:
        return None


# The threads that start themselves beside the loop and hold no lock of the program's: a
# multiprocessing queue's feeder (an iterator's index queues, one a worker) and torch's pin-memory
# thread, each found by the function it runs.
_LIBRARY_THREADS = (("multiprocessing.queues", "_feed"), ("torch.utils.data._utils.pin_memory", "_pin_memory_loop"))


def other_threads():
    """The names of the Python threads alive beside the calling one, but the library's own
    (_LIBRARY_THREADS): the threads a worker forked now is copied from mid-step. Read from what
    the program loaded (threading), without importing it."""
    threading = sys.modules.get("threading")
    if threading is None:
        return []
    current = threading.current_thread()
    names = []
    for thread in threading.enumerate():
        target = getattr(thread, "_target", None)
        where = (getattr(target, "__module__", None), getattr(target, "__name__", None))
        if thread is not current and where not in _LIBRARY_THREADS:
            names.append(str(thread.name))
    return names
