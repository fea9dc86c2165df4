# dlreset watch's hook in a watched Python program: reports what the program does with its
# DataLoaders' iterators, with the Python stack that did it, to the watcher's socket.
#
# How it gets here: `dlreset watch` puts this file's folder first on PYTHONPATH, so Python's
# `site` module imports it as `sitecustomize` when the interpreter starts. The hook then takes its
# folder off sys.path again, loads the sitecustomize it hides (Debian ships one), and waits for the
# program to import torch.utils.data, which it patches once that module has run.
#
# The rules this file keeps, because it runs inside somebody else's program:
# - It never changes what the program does: every patch calls the original unchanged, the hook's
#   own code catches every Exception it could raise, and an error inside it is reported to the
#   watcher and switches the hook off, never raised into the program.
# - It imports nothing the program did not. It uses modules that are loaded already (sys, os, and
#   once torch.utils.data has run, what torch loaded); for the hello it sends before that, it takes
#   the interpreter's built-in _socket module, which reads no file and runs no Python code, and
#   takes the name off sys.modules again.
# - It never blocks: the socket is non-blocking, and an event the socket cannot take is counted
#   as lost, and the count travels with the next event that gets through.
# - It adds nothing to a batch: the patches are properties on attributes the DataLoader reads once
#   an epoch (`_iterator`, `_get_iterator`, `_reset`, `_shutdown_workers`, a sampler's `epoch`),
#   never on the path of `__next__`. A property also leaves no frame of the hook in a traceback of
#   the program's own errors: its getter returns the original method, which then runs on its own.
#
# The protocol (one JSON object a datagram) is described in docs/watch.md, "The Python hook".

import os
import sys

_PROTOCOL = 1
_SOCKET_VARIABLE = "DLRESET_WATCH_SOCKET"
_THIS_FILE = __file__
_HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
_MAX_FRAMES = 64
_MAX_CODE_CHARS = 200
_MISSING = object()


def _builtin(name):
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


def _json(value):
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
        return "[" + ",".join(_json(item) for item in value) + "]"
    if kind is dict:
        return "{" + ",".join(_json(str(key)) + ":" + _json(item) for key, item in value.items()) + "}"
    return _json("<%s>" % kind.__name__)


# ---------------------------------------------------------------------------------------------
# The channel to the watcher.

class _Channel(object):
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
        socket_module = _builtin("_socket")
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
        data = _json(event).encode("utf-8", "replace")
        while self.pending and self._try(self.pending[0]):
            self.pending.pop(0)
        if not self.pending and self._try(data):
            return
        if len(self.pending) < self.PENDING:
            self.pending.append(data)
        else:
            self.lost += 1  # never wait for the watcher


_channel = None
_switched_off = False


def _now():
    clock = sys.modules.get("time")
    return clock.monotonic() if clock is not None else None


def _rank():
    environ = os.environ
    return {"rank": environ.get("RANK"), "local_rank": environ.get("LOCAL_RANK")}


def _emit(kind, fields):
    if _channel is None or _switched_off:
        return
    event = {"v": _PROTOCOL, "kind": kind, "pid": os.getpid(), "t": _now()}
    event.update(_rank())
    event.update(fields)
    _channel.send(event)


def _hook_error(where, error):
    """An error of the hook's own: tell the watcher, and patch nothing more."""
    global _switched_off
    try:
        _emit("hook_error", {"where": where, "error": "%s: %s" % (type(error).__name__, error)})
    except Exception:
        pass
    _switched_off = True


# ---------------------------------------------------------------------------------------------
# Stacks.

def _stack():
    """The Python stack of the caller, outermost first, without the hook's own frames."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename != _THIS_FILE:
            frames.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    omitted = max(0, len(frames) - _MAX_FRAMES)
    frames = frames[:_MAX_FRAMES]
    frames.reverse()
    lines = sys.modules.get("linecache")
    stack = []
    for filename, line, name in frames:
        code = ""
        if lines is not None:
            try:
                code = lines.getline(filename, line).strip()[:_MAX_CODE_CHARS]
            except Exception:
                code = ""
        stack.append([filename, line, name, code])
    return {"stack": stack, "frames_omitted": omitted}


def _caller_name():
    """The name of the function that called the patched attribute, e.g. '__del__'."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == _THIS_FILE:
        frame = frame.f_back
    return frame.f_code.co_name if frame is not None else ""


# ---------------------------------------------------------------------------------------------
# Names for the program's objects: a key a process keeps for each loader, iterator and sampler
# (never the object's repr: that would run the program's code).

_keys = {}
_counters = {}


def _key(obj, prefix):
    weak = _builtin("_weakref")
    entry = _keys.get(id(obj))
    if entry is not None:
        ref, key = entry
        if ref is None or ref() is obj:
            return key
    _counters[prefix] = _counters.get(prefix, 0) + 1
    key = "%s%d" % (prefix, _counters[prefix])
    try:
        ref = weak.ref(obj)
    except TypeError:
        ref = None
    _keys[id(obj)] = (ref, key)
    return key


def _class_name(obj):
    kind = type(obj)
    module = getattr(kind, "__module__", "")
    module = module if type(module) is str and module != "builtins" else ""
    return (module + "." if module else "") + kind.__qualname__


def _int_or_none(value):
    return value if type(value) is int else None


def _start_method(loader):
    context = loader.__dict__.get("_DataLoader__multiprocessing_context")
    if context is None:
        multiprocessing = sys.modules.get("multiprocessing")
        default = getattr(getattr(multiprocessing, "context", None), "_default_context", None)
        context = getattr(default, "_actual_context", None) or getattr(default, "_default_context", None)
    name = getattr(context, "_name", None)
    return name if type(name) is str else None


def _sampler_of(holder):
    """The sampler whose order a loader or iterator follows: a batch sampler's inner sampler,
    else the sampler itself."""
    sampler = holder.__dict__.get("sampler")
    batch_sampler = holder.__dict__.get("batch_sampler", holder.__dict__.get("_index_sampler"))
    if sampler is None and batch_sampler is not None:
        sampler = batch_sampler.__dict__.get("sampler", batch_sampler) if hasattr(batch_sampler, "__dict__") else None
    return sampler


_latest_pass = {}  # id(sampler) -> (its weak ref, the weak ref of the iterator of its latest pass, its epoch then)


def _sampler_fields(sampler, iterator=None):
    """The sampler a pass draws its order from, and its epoch now; with `iterator`, the pass is
    remembered, so that a set_epoch that comes too late for it can be told."""
    if sampler is None or not hasattr(sampler, "__dict__"):
        return {"sampler": None}
    epoch = _int_or_none(sampler.__dict__.get("epoch"))
    if iterator is not None:
        weak = _builtin("_weakref")
        try:
            _latest_pass[id(sampler)] = (weak.ref(sampler), weak.ref(iterator), epoch)
        except TypeError:
            pass
    return {"sampler": _key(sampler, "S"), "sampler_class": _class_name(sampler), "sampler_epoch": epoch}


def _pending_pass(sampler):
    """The latest pass of `sampler` that drew its order and handed out no batch yet, if any."""
    entry = _latest_pass.get(id(sampler))
    if entry is None or entry[0]() is not sampler:
        return {}
    iterator = entry[1]()
    if iterator is None:
        return {}
    state = _iterator_state(iterator)
    if state["shut_down"] or state["yielded"] != 0 or not state["in_flight"]:
        return {}
    return {"pending_iterator": state["iterator"], "pending_epoch": entry[2]}


def _loader_fields(loader):
    fields = {"loader": _key(loader, "L")}
    if loader is None:
        return fields
    values = loader.__dict__
    workers = _int_or_none(values.get("num_workers"))
    fields.update({
        "dataset": _class_name(values.get("dataset")),
        "batch_size": _int_or_none(values.get("batch_size")),
        "workers": workers,
        "persistent": values.get("persistent_workers") is True,
        "start_method": _start_method(loader) if workers else None,
        "loader_class": _class_name(loader),
    })
    return fields


def _iterator_state(iterator):
    """What a multi-process iterator holds now: its workers and the pass in progress."""
    values = iterator.__dict__
    workers = []
    for process in values.get("_workers", ()):
        pid = getattr(getattr(process, "_popen", None), "pid", None)
        if type(pid) is int:
            workers.append(pid)
    sent = _int_or_none(values.get("_send_idx"))
    received = _int_or_none(values.get("_rcvd_idx"))
    return {
        "iterator": _key(iterator, "I"),
        "worker_pids": workers,
        "yielded": _int_or_none(values.get("_num_yielded")),
        "in_flight": sent - received if sent is not None and received is not None else None,
        "ready": _ready(values, received),
        "shut_down": values.get("_shutdown") is True,
    }


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


# ---------------------------------------------------------------------------------------------
# The patches: properties, each of which reports and then does exactly what the original does.

_making = {}        # thread -> the loader whose _get_iterator is running
_iterator_loader = {}  # iterator key -> the loader fields it was made for
_reported_classes = set()


def _thread_id():
    return _builtin("_thread").get_ident()


def _report_own_iterator_attribute(loader):
    """A DataLoader subclass that defines `_iterator` itself hides it from the hook: say so once."""
    kind = type(loader)
    if kind in _reported_classes:
        return
    _reported_classes.add(kind)
    for base in kind.__mro__:
        if base.__name__ == "DataLoader" and base.__module__ == "torch.utils.data.dataloader":
            break
        if "_iterator" in base.__dict__:
            _emit("unseen", {"what": "_iterator", "loader_class": _class_name(loader),
                             "reason": "%s defines _iterator itself" % base.__qualname__})
            break


def _watched_attribute(name, where, doc, on_set, on_delete=None):
    """A property that keeps `name` in the instance's __dict__, as the plain attribute did, and
    then calls on_set(self, old, value) after every assignment (`old` is _MISSING at the first)
    and on_delete(self, old) after a del. What they raise is reported, never raised: the program
    sees the attribute behave as before."""
    def missing(self):
        return AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def get(self):
        values = self.__dict__
        if name in values:
            return values[name]
        raise missing(self)

    def put(self, value):
        values = self.__dict__
        old = values.get(name, _MISSING)
        values[name] = value
        try:
            on_set(self, old, value)
        except Exception as error:
            _hook_error(where + " setter", error)

    def drop(self):
        values = self.__dict__
        if name not in values:
            raise missing(self)
        old = values.pop(name)
        try:
            on_delete(self, old)
        except Exception as error:
            _hook_error(where + " deleter", error)

    return property(get, put, drop if on_delete is not None else None, doc)


def _iterator_property():
    def set_(loader, old, value):
        if old is _MISSING:
            # DataLoader.__init__ ends by setting it: the loader is made, its settings are known.
            fields = _loader_fields(loader)
            fields.update(_stack())
            _emit("loader_made", fields)
        elif old is not None and old is not value:
            _iterator_dropped(loader, old, "None" if value is None else "replaced")

    def delete(loader, old):
        if old is not None:
            _iterator_dropped(loader, old, "deleted")

    return _watched_attribute("_iterator", "DataLoader._iterator",
                              "The loader's persistent iterator, watched by dlreset watch.", set_, delete)


def _iterator_dropped(loader, old, how):
    fields = _loader_fields(loader)
    fields["how"] = how
    fields.update(_old_iterator_fields(old))
    fields.update(_stack())
    _emit("iterator_dropped", fields)


def _old_iterator_fields(old):
    if hasattr(old, "__dict__") and "_workers" in old.__dict__:
        return _iterator_state(old)
    return {"iterator": _key(old, "I"), "worker_pids": []}


def _watched_method(original, where, on_lookup):
    """A property in place of the method `original`: looking it up calls on_lookup(self), then
    gives the method bound as before, so the call itself runs unchanged. What on_lookup raises is
    reported, never raised."""
    def get(self):
        try:
            on_lookup(self)
        except Exception as error:
            _hook_error(where, error)
        return original.__get__(self, type(self))

    return property(get, None, None, original.__doc__)


def _get_iterator_property(original):
    def looked_up(loader):
        _report_own_iterator_attribute(loader)
        workers = loader.__dict__.get("num_workers")
        if workers:
            # Weakly: the hook must not keep a loader alive that the program let go.
            _making[_thread_id()] = _builtin("_weakref").ref(loader)
        else:
            fields = _loader_fields(loader)
            fields.update({"iterator": None, "worker_pids": []})
            fields.update(_sampler_fields(_sampler_of(loader)))
            fields.update(_stack())
            _emit("iterator_made", fields)

    return _watched_method(original, "DataLoader._get_iterator", looked_up)


def _reset_property(original):
    def looked_up(iterator):
        values = iterator.__dict__
        if "_send_idx" not in values:
            # The end of __init__: the workers have started, the first pass begins.
            made_for = _making.pop(_thread_id(), None)
            loader = made_for() if made_for is not None else None
            if loader is not None and loader.__dict__.get("dataset") is not values.get("_dataset"):
                loader = None
            fields = _loader_fields(loader) if loader is not None else {"loader": None}
            fields.update(_iterator_state(iterator))
            _iterator_loader[fields["iterator"]] = fields["loader"]
            kind = "iterator_made"
        else:
            # iter() on a persistent loader: the pass in progress ends, a new one begins.
            fields = _iterator_state(iterator)
            fields["loader"] = _iterator_loader.get(fields["iterator"])
            kind = "iterator_reset"
        fields.update(_sampler_fields(_sampler_of(iterator), iterator))
        fields.update(_stack())
        _emit(kind, fields)

    return _watched_method(original, "_MultiProcessingDataLoaderIter._reset", looked_up)


def _shutdown_property(original, utils):
    def looked_up(iterator):
        values = iterator.__dict__
        exiting = getattr(utils, "python_exit_status", None)
        if values.get("_shutdown") is False and exiting is False:
            fields = _iterator_state(iterator)
            fields["loader"] = _iterator_loader.get(fields["iterator"])
            fields["persistent"] = values.get("_persistent_workers") is True
            fields["caller"] = _caller_name()
            fields.update(_stack())
            _emit("workers_shutdown", fields)

    return _watched_method(original, "_MultiProcessingDataLoaderIter._shutdown_workers", looked_up)


def _epoch_property():
    def set_(sampler, old, value):
        if old is _MISSING:
            return
        fields = {"sampler": _key(sampler, "S"), "sampler_class": _class_name(sampler),
                  "epoch": _int_or_none(value), "previous": _int_or_none(old)}
        fields.update(_pending_pass(sampler))
        fields.update(_stack())
        _emit("set_epoch", fields)

    return _watched_attribute("epoch", "DistributedSampler.epoch", "The sampler's epoch, watched by dlreset watch.",
                              set_)


def _patch_torch():
    """Once torch.utils.data has run: put the properties in place, or report what is missing."""
    dataloader = sys.modules.get("torch.utils.data.dataloader")
    distributed = sys.modules.get("torch.utils.data.distributed")
    utils = sys.modules.get("torch.utils.data._utils")
    seen, unseen = [], []
    loader_class = getattr(dataloader, "DataLoader", None)
    iterator_class = getattr(dataloader, "_MultiProcessingDataLoaderIter", None)
    patches = [
        (loader_class, "_iterator", lambda original: _iterator_property(), False),
        (loader_class, "_get_iterator", _get_iterator_property, True),
        (iterator_class, "_reset", _reset_property, True),
        (iterator_class, "_shutdown_workers", lambda original: _shutdown_property(original, utils), True),
        (getattr(distributed, "DistributedSampler", None), "epoch", lambda original: _epoch_property(), False),
    ]
    for owner, name, make, needs_function in patches:
        where = "%s.%s" % (getattr(owner, "__name__", "?"), name)
        original = owner.__dict__.get(name) if owner is not None else None
        if owner is None or (needs_function and not callable(original)) or isinstance(original, property):
            unseen.append(where)
            continue
        setattr(owner, name, make(original))
        seen.append(where)
    version = getattr(sys.modules.get("torch.version"), "__version__", None)
    _emit("patched", {"torch": version if type(version) is str else None, "seen": seen, "unseen": unseen})


# ---------------------------------------------------------------------------------------------
# Waiting for torch.utils.data: a finder first on sys.meta_path that, when the program imports
# it, wraps its loader so that the patches follow its execution. It adds nothing else to any
# import, and leaves sys.meta_path once the patches are in.

class _TorchDataFinder(object):
    target = "torch.utils.data"

    def find_spec(self, name, path=None, target=None):
        if name != self.target or _switched_off:
            return None
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader)
                    return spec
                if spec is not None:
                    return None
        except Exception as error:
            _hook_error("finding torch.utils.data", error)
        return None


class _PatchingLoader(object):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        # The module's own code runs first and as it would unwatched; then the loader it reports
        # is the original again.
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        try:
            _leave_meta_path()
            _patch_torch()
        except Exception as error:
            _hook_error("patching torch.utils.data", error)

    def __getattr__(self, name):
        return getattr(self.loader, name)


_finder = _TorchDataFinder()


def _leave_meta_path():
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


# ---------------------------------------------------------------------------------------------
# Start-up.

def _load_hidden_sitecustomize():
    """Imports the sitecustomize this file hides, as `site` would have; returns its path."""
    ours = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _HOOK_DIR]
    hidden = None
    try:
        try:
            __import__("sitecustomize")
            hidden = sys.modules.get("sitecustomize")
        except ImportError as error:
            if getattr(error, "name", None) != "sitecustomize":
                raise
    finally:
        # What the hidden one did to sys.path stays; only this folder leaves it.
        sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _HOOK_DIR]
        if hidden is None:
            sys.modules.pop("sitecustomize", None)
    del ours
    return getattr(hidden, "__file__", None)


def _start():
    global _channel
    path = os.environ.get(_SOCKET_VARIABLE)
    if not path:
        return
    _channel = _Channel(path)
    if not _channel.open():
        return
    sys.meta_path.insert(0, _finder)
    if "torch.utils.data" in sys.modules:
        _leave_meta_path()
        _patch_torch()


try:
    _start()
except Exception as _error:
    _hook_error("start-up", _error)

# The hello goes out after the hidden sitecustomize ran (and whatever it raised is raised on, as
# `site` reports it for an unwatched program too).
_hidden = None
try:
    _hidden = _load_hidden_sitecustomize()
finally:
    try:
        _emit("hello", {"ppid": os.getppid(), "argv": [str(arg) for arg in getattr(sys, "argv", [])],
                        "executable": sys.executable, "python": sys.version.split()[0],
                        "hidden_sitecustomize": _hidden,
                        "pythonpath": os.environ.get("PYTHONPATH", "")})
    except Exception as _error:
        _hook_error("hello", _error)
