# dlreset watch's hook in a watched Python program: reports what the program does with its
# DataLoaders' iterators, with the Python stack that did it, to the watcher's socket. This file is
# the hook's bootstrap; the channel, the per-process state and the patches are the private
# package beside it (watch/hook/python/_dlreset_hook/__init__.py names its modules).
#
# How it gets here: `dlreset watch` puts this file's folder first on PYTHONPATH, so Python's
# `site` module imports it as `sitecustomize` when the interpreter starts. The bootstrap then
# - hides itself: takes its folder off sys.path again, and its own name and the package's off
#   sys.modules, so that the program finds and imports what it would unwatched;
# - chains the sitecustomize it hides (Debian ships one), as `site` would have imported it;
# - arms a finder that waits for the program to import torch.utils.data and, once that module has
#   run, loads the package's patches and puts them on it.
#
# The rules the hook keeps, because it runs inside somebody else's program:
# - It never changes what the program does: every patch calls the original unchanged, the hook's
#   own code catches every Exception it could raise, and an error inside it is reported to the
#   watcher and switches the hook off, never raised into the program.
# - It imports nothing the program did not. At start-up it loads the package's channel and state
#   only, for the hello; they use what is loaded already (sys, os) and the interpreter's built-in
#   _socket module, which reads no file and runs no Python code, and takes the name off
#   sys.modules again. The rest waits until torch.utils.data has run, and uses what torch loaded.
# - It never blocks: the socket is non-blocking, and an event the socket cannot take is counted
#   as lost, and the count travels with the next event that gets through.
# - It keeps to a budget a batch: the clock on the input wait costs at most a microsecond a next()
#   call, cheap arithmetic, and no event (watch/hook/python/_dlreset_hook/waits.py); the rest
#   runs once an epoch. watch/hook/python/_dlreset_hook/patches.py says where it patches.
#
# The protocol (one JSON object a datagram) is described in docs/watch.md, "The Python hook".

import os
import sys

_SOCKET_VARIABLE = "DLRESET_WATCH_SOCKET"
_HANG_VARIABLE = "DLRESET_WATCH_HANG"
_HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = "_dlreset_hook"
# Every module of the package: none of them is left in sys.modules for the program to see
# (tests/watch/hook_test.py looks for them there).
_MODULES = (_PACKAGE,) + tuple(_PACKAGE + "." + name
                               for name in ("channel", "state", "fields", "blocking", "waits", "patches"))


class _Package(object):
    """The hook's package, imported a module at a time and hidden again after each. While one is
    imported, those imported before are back in sys.modules, so that it shares their objects (the
    process's one HookState) instead of importing them afresh; the package's __path__ finds it
    once this folder has left sys.path."""

    def __init__(self):
        self.modules = {}

    def load(self, name):
        foreign = [known for known in _MODULES
                   if known in sys.modules and sys.modules[known] is not self.modules.get(known)]
        if foreign:
            raise ImportError("the program has a module of its own named %s; the hook stays off" % foreign[0])
        sys.modules.update(self.modules)
        try:
            __import__(name)
            return sys.modules[name]
        finally:
            for known in _MODULES:
                module = sys.modules.pop(known, None)
                if module is not None:
                    self.modules[known] = module
            # The finder the import made for the package's folder goes too.
            for folder in getattr(self.modules.get(_PACKAGE), "__path__", ()):
                sys.path_importer_cache.pop(folder, None)


# ---------------------------------------------------------------------------------------------
# Waiting for torch.utils.data: a finder first on sys.meta_path that, when the program imports
# it, wraps its loader so that the patches follow its execution. It adds nothing else to any
# import, and leaves sys.meta_path once the patches are in.

class _TorchDataFinder(object):
    target = "torch.utils.data"

    def __init__(self, package, hook):
        self.package = package
        self.hook = hook

    def find_spec(self, name, path=None, target=None):
        if name != self.target or self.hook.switched_off:
            return None
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader, self)
                    return spec
                if spec is not None:
                    return None
        except Exception as error:
            self.hook.hook_error("finding torch.utils.data", error)
        return None

    def patch(self):
        """Leaves sys.meta_path, loads the package's patches and puts them on torch.utils.data."""
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        self.package.load(_PACKAGE + ".patches").patch_torch()


class _PatchingLoader(object):
    def __init__(self, loader, finder):
        self.loader = loader
        self.finder = finder

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
            self.finder.patch()
        except Exception as error:
            self.finder.hook.hook_error("patching torch.utils.data", error)

    def __getattr__(self, name):
        return getattr(self.loader, name)


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
    """Where the program is watched: loads the channel and the state (while this folder is still
    on sys.path), opens the channel and arms the finder. Returns the process's HookState, or None
    where the program is not watched."""
    path = os.environ.get(_SOCKET_VARIABLE)
    if not path:
        return None
    package = _Package()
    hook = package.load(_PACKAGE + ".state").HOOK
    try:
        if hook.start(path):
            hang = os.environ.get(_HANG_VARIABLE)
            if hang:
                hook.arm_hang_watch(hang)
            finder = _TorchDataFinder(package, hook)
            sys.meta_path.insert(0, finder)
            if "torch.utils.data" in sys.modules:
                finder.patch()
    except Exception as error:
        hook.hook_error("start-up", error)
    return hook


def _main():
    try:
        hook = _start()
    except Exception:
        hook = None  # the package would not load: there is no channel to say so, the hook stays off
    # The hello goes out after the hidden sitecustomize ran (and whatever it raised is raised on, as
    # `site` reports it for an unwatched program too).
    hidden = None
    try:
        hidden = _load_hidden_sitecustomize()
    finally:
        if hook is not None:
            try:
                hook.emit("hello", {"ppid": os.getppid(), "argv": [str(arg) for arg in getattr(sys, "argv", [])],
                                    "executable": sys.executable, "python": sys.version.split()[0],
                                    "hidden_sitecustomize": hidden,
                                    "pythonpath": os.environ.get("PYTHONPATH", "")})
            except Exception as error:
                hook.hook_error("hello", error)


_main()
