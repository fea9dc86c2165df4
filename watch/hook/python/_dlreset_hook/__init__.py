# dlreset watch's hook in a watched Python program, the part its bootstrap
# (watch/hook/python/sitecustomize.py) loads a module at a time and hides from the program:
#   channel.py  the socket to the watcher and the JSON it sends (loaded at start-up, for the hello)
#   state.py    the process's one HookState (loaded at start-up, with the channel)
#   fields.py   what an event says: the stack, the loader, the iterator, the sampler
#   waits.py    the clock on the input wait: next()'s wait and the loop's step, one event a pass
#   blocking.py the clock's slow path: a long wait for one worker's batch while others' were ready
#   patches.py  the properties put on torch.utils.data once the program has imported it
# The name has a leading underscore and the project's: the bootstrap's folder is on the
# program's PYTHONPATH while Python starts, and this package must shadow nothing there.
