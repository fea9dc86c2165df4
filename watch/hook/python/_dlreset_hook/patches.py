# The hook's patches on torch.utils.data: properties, each of which reports and then does exactly
# what the original does. Most sit on attributes the DataLoader reads once an epoch (`_iterator`,
# `_get_iterator`, `_reset`, `_shutdown_workers`, a sampler's `epoch`) or a worker reads once
# (its fetcher's `__init__`); two, `__next__` and `_num_yielded` of every iterator, time the input
# wait within a budget of cheap arithmetic a batch and never send a batch's event (waits.py). A
# property leaves no frame of the hook in a traceback of the program's own errors: its getter
# returns the original method, which then runs on its own.
#
# Loaded by the bootstrap (watch/hook/python/sitecustomize.py) once torch.utils.data has run,
# which then calls patch_torch().

import os
import sys

from . import waits
from .channel import builtin
from .fields import (caller_name, class_name, int_or_none, iterator_state, loader_fields, old_iterator_fields,
                     other_threads, pending_pass, sampler_fields, sampler_of, stack)
from .state import HOOK

_MISSING = object()


def _thread_id():
    return builtin("_thread").get_ident()


def _report_own_iterator_attribute(loader):
    """A DataLoader subclass that defines `_iterator` itself hides it from the hook: say so once."""
    kind = type(loader)
    if kind in HOOK.reported_classes:
        return
    HOOK.reported_classes.add(kind)
    for base in kind.__mro__:
        if base.__name__ == "DataLoader" and base.__module__ == "torch.utils.data.dataloader":
            break
        if "_iterator" in base.__dict__:
            HOOK.emit("unseen", {"what": "_iterator", "loader_class": class_name(loader),
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
            HOOK.hook_error(where + " setter", error)

    def drop(self):
        values = self.__dict__
        if name not in values:
            raise missing(self)
        old = values.pop(name)
        try:
            on_delete(self, old)
        except Exception as error:
            HOOK.hook_error(where + " deleter", error)

    return property(get, put, drop if on_delete is not None else None, doc)


def _iterator_property():
    def set_(loader, old, value):
        if old is _MISSING:
            # DataLoader.__init__ ends by setting it: the loader is made, its settings are known.
            fields = loader_fields(loader)
            fields.update(stack())
            HOOK.emit("loader_made", fields)
        elif old is not None and old is not value:
            _iterator_dropped(loader, old, "None" if value is None else "replaced")

    def delete(loader, old):
        if old is not None:
            _iterator_dropped(loader, old, "deleted")

    return _watched_attribute("_iterator", "DataLoader._iterator",
                              "The loader's persistent iterator, watched by dlreset watch.", set_, delete)


def _iterator_dropped(loader, old, how):
    fields = loader_fields(loader)
    fields["how"] = how
    fields.update(old_iterator_fields(old))
    fields.update(stack())
    HOOK.emit("iterator_dropped", fields)


def _watched_method(original, where, on_lookup):
    """A property in place of the method `original`: looking it up calls on_lookup(self), then
    gives the method bound as before, so the call itself runs unchanged. What on_lookup raises is
    reported, never raised."""
    def get(self):
        try:
            on_lookup(self)
        except Exception as error:
            HOOK.hook_error(where, error)
        return original.__get__(self, type(self))

    return property(get, None, None, original.__doc__)


def _get_iterator_property(original):
    def looked_up(loader):
        _report_own_iterator_attribute(loader)
        # Weakly: the hook must not keep a loader alive that the program let go.
        HOOK.making[_thread_id()] = builtin("_weakref").ref(loader)
        if loader.__dict__.get("num_workers"):
            # Before the iterator forks its workers: the threads each worker is copied beside.
            HOOK.fork_threads[_thread_id()] = other_threads()
        else:
            fields = loader_fields(loader)
            fields.update({"iterator": None, "worker_pids": []})
            fields.update(sampler_fields(sampler_of(loader)))
            fields.update(stack())
            HOOK.emit("iterator_made", fields)

    return _watched_method(original, "DataLoader._get_iterator", looked_up)


def _reset_property(original):
    def looked_up(iterator):
        values = iterator.__dict__
        if "_send_idx" not in values:
            # The end of __init__: the workers have started, the first pass begins.
            made_for = HOOK.making.pop(_thread_id(), None)
            loader = made_for() if made_for is not None else None
            if loader is not None and loader.__dict__.get("dataset") is not values.get("_dataset"):
                loader = None
            fields = loader_fields(loader) if loader is not None else {"loader": None}
            fields.update(iterator_state(iterator))
            fields["threads"] = HOOK.fork_threads.pop(_thread_id(), [])
            HOOK.iterator_loader[fields["iterator"]] = fields["loader"]
            kind = "iterator_made"
        else:
            # iter() on a persistent loader: the pass in progress ends, a new one begins.
            waits.end_of(iterator, "reset")
            fields = iterator_state(iterator)
            fields["loader"] = HOOK.iterator_loader.get(fields["iterator"])
            kind = "iterator_reset"
        fields.update(sampler_fields(sampler_of(iterator), iterator))
        fields.update(stack())
        HOOK.emit(kind, fields)

    return _watched_method(original, "_MultiProcessingDataLoaderIter._reset", looked_up)


def _shutdown_property(original, utils):
    def looked_up(iterator):
        values = iterator.__dict__
        exiting = getattr(utils, "python_exit_status", None)
        if values.get("_shutdown") is False and exiting is False:
            caller = caller_name()
            # Only a pass's end in StopIteration shuts the workers down from _next_data.
            waits.end_of(iterator, "shutdown", caller == "_next_data")
            fields = iterator_state(iterator)
            fields["loader"] = HOOK.iterator_loader.get(fields["iterator"])
            fields["persistent"] = values.get("_persistent_workers") is True
            fields["caller"] = caller
            fields.update(stack())
            HOOK.emit("workers_shutdown", fields)

    return _watched_method(original, "_MultiProcessingDataLoaderIter._shutdown_workers", looked_up)


def _fetcher_init_property(original, worker):
    """A DataLoader worker makes its dataset fetcher once its dataset has arrived and its
    worker_init_fn ran (and again at each pass of a persistent one): it says it is ready, once."""
    def looked_up(fetcher):
        info = getattr(worker, "_worker_info", None)
        if info is None or HOOK.ready_pid == os.getpid():
            return  # the training process's own fetcher, or a worker that said so already
        HOOK.ready_pid = os.getpid()
        values = getattr(info, "__dict__", {})
        HOOK.emit("worker_ready", {"worker_id": int_or_none(values.get("id")), "parent": os.getppid()})

    return _watched_method(original, "_BaseDatasetFetcher.__init__", looked_up)


def _epoch_property():
    def set_(sampler, old, value):
        if old is _MISSING:
            return
        fields = {"sampler": HOOK.key(sampler, "S"), "sampler_class": class_name(sampler),
                  "epoch": int_or_none(value), "previous": int_or_none(old)}
        fields.update(pending_pass(sampler))
        fields.update(stack())
        HOOK.emit("set_epoch", fields)

    return _watched_attribute("epoch", "DistributedSampler.epoch", "The sampler's epoch, watched by dlreset watch.",
                              set_)


def patch_torch():
    """Once torch.utils.data has run: put the properties in place, or report what is missing."""
    dataloader = sys.modules.get("torch.utils.data.dataloader")
    distributed = sys.modules.get("torch.utils.data.distributed")
    utils = sys.modules.get("torch.utils.data._utils")
    worker = sys.modules.get("torch.utils.data._utils.worker")
    fetch = sys.modules.get("torch.utils.data._utils.fetch")
    seen, unseen = [], []
    loader_class = getattr(dataloader, "DataLoader", None)
    iterator_class = getattr(dataloader, "_MultiProcessingDataLoaderIter", None)
    base_iterator_class = getattr(dataloader, "_BaseDataLoaderIter", None)
    patches = [
        (base_iterator_class, "__next__", waits.next_property, True),
        (base_iterator_class, "_num_yielded", lambda original: waits.YieldedDescriptor(iterator_class), False),
        (getattr(fetch, "_BaseDatasetFetcher", None), "__init__",
         lambda original: _fetcher_init_property(original, worker), True),
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
    if "_BaseDataLoaderIter.__next__" in seen:
        # torch loaded atexit; a pass still in progress at the exit is sent then.
        builtin("atexit").register(waits.at_exit)
    version = getattr(sys.modules.get("torch.version"), "__version__", None)
    HOOK.emit("patched", {"torch": version if type(version) is str else None, "seen": seen, "unseen": unseen})
