#!/usr/bin/python3
"""The Python hook of `dlreset watch` (watch/hook/python/sitecustomize.py, the bootstrap, and its
package watch/hook/python/_dlreset_hook/), inside real programs.

Each test runs a small program twice, as the watcher runs it (the hook's folder first on
PYTHONPATH, its socket in DLRESET_WATCH_SOCKET, here a socket this test reads) and as it runs
unwatched, and holds the hook to its rules: the program prints the same, exits the same, imports
the same modules and draws the same samples; the hook never blocks, never raises into the
program, and says what it could not see.

    hook_test.py --hook-dir build/share/dlreset/python [--shard I/N] [unittest options]

--shard I/N runs the I-th of N equal shares of the tests (from 0), so that ctest can run them
side by side.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

PYTHON = "/usr/bin/python3"
HOOK_DIR = None
# The hook's private package, beside its sitecustomize.py in HOOK_DIR.
HOOK_PACKAGE = "_dlreset_hook"
# A program of these tests imports torch: a second or two each on a small machine.
TIMEOUT_S = 120


class Listener:
    """The watcher's end of the socket: collects the hook's events."""

    def __init__(self, directory, read=True):
        self.path = os.path.join(directory, "events")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)
        self.socket.setblocking(False)
        self.received = []

    def _waiting(self):
        found = []
        while True:
            try:
                found.append(json.loads(self.socket.recv(1 << 20)))
            except OSError:  # nothing waits, or the test closed the socket
                return found

    def events(self):
        """What was received while reading() and what waits on the socket now; then forgets them."""
        found, self.received = self.received + self._waiting(), []
        return found

    def reading(self, action):
        """Returns action(), while a thread reads the socket as the watcher does: its queue holds
        only a few datagrams (net.unix.max_dgram_qlen), and what the hook still held back when
        its process ended would be lost."""
        done = threading.Event()

        def read():
            while not done.is_set():
                found = self._waiting()
                self.received += found
                if not found:
                    time.sleep(0.0005)

        reader = threading.Thread(target=read, name="listener")
        reader.start()
        try:
            return action()
        finally:
            done.set()
            reader.join()

    def close(self):
        self.socket.close()


class HookTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.dir = self.directory.name
        self.listener = Listener(self.dir)

    def tearDown(self):
        self.listener.close()
        self.directory.cleanup()

    def program(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def run_program(self, argv, watched, env=None, **kwargs):
        environment = dict(os.environ if env is None else env)
        environment.pop("DLRESET_WATCH_SOCKET", None)
        def run():
            return subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=TIMEOUT_S, **kwargs)

        if not watched:
            return run()
        own = environment.get("PYTHONPATH")
        environment["PYTHONPATH"] = HOOK_DIR + (":" + own if own else "")
        environment["DLRESET_WATCH_SOCKET"] = self.listener.path
        return self.listener.reading(run)

    def assert_same_run(self, argv, env=None):
        """Runs `argv` unwatched and watched: same output, same status. Returns the watched events."""
        plain = self.run_program(argv, watched=False, env=env)
        self.listener.events()
        watched = self.run_program(argv, watched=True, env=env)
        self.assertEqual(watched.returncode, plain.returncode, watched.stderr)
        self.assertEqual(watched.stdout, plain.stdout)
        self.assertEqual(watched.stderr, plain.stderr)
        return self.listener.events()

    def kinds(self, events):
        return [event["kind"] for event in events]

    def test_a_program_without_torch_imports_the_same_modules(self):
        program = self.program("plain.py", """\
            import sys
            print(sorted(sys.modules))
            print(sys.path[1:])
            """)
        events = self.assert_same_run([PYTHON, program])
        self.assertEqual(self.kinds(events), ["hello"])
        self.assertEqual(events[0]["hidden_sitecustomize"], "/usr/lib/python3.11/sitecustomize.py")

    def test_a_torch_program_imports_the_same_modules_and_draws_the_same_samples(self):
        program = self.program("order.py", """\
            import sys
            import torch
            from torch.utils.data import DataLoader, Dataset

            class Indices(Dataset):
                def __len__(self):
                    return 48
                def __getitem__(self, index):
                    return index

            loader = DataLoader(Indices(), batch_size=8, shuffle=True, num_workers=2, persistent_workers=True,
                                generator=torch.Generator().manual_seed(5))
            for epoch in range(3):
                print(epoch, [batch.tolist() for batch in loader])
            print(sorted(name for name in sys.modules))
            """)
        events = self.assert_same_run([PYTHON, program])
        self.assertEqual(self.kinds(events).count("iterator_made"), 1)
        self.assertEqual(self.kinds(events).count("iterator_reset"), 2)
        patched = [event for event in events if event["kind"] == "patched"]
        self.assertEqual(len(patched), 1)
        self.assertEqual(patched[0]["unseen"], [])

    def test_the_programs_own_sitecustomize_still_runs(self):
        own = os.path.join(self.dir, "own")
        os.mkdir(own)
        with open(os.path.join(own, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.OWN_SITECUSTOMIZE = 'ran'\n")
        program = self.program("uses_own.py", "print(OWN_SITECUSTOMIZE)\n")
        env = dict(os.environ, PYTHONPATH=own)
        events = self.assert_same_run([PYTHON, program], env=env)
        self.assertEqual(events[0]["kind"], "hello")
        self.assertEqual(events[0]["hidden_sitecustomize"], os.path.join(own, "sitecustomize.py"))
        # The program's own PYTHONPATH entries stay on its path.
        self.assertEqual(self.run_program([PYTHON, "-c", "import sys; print(%r in sys.path)" % own],
                                          watched=True, env=env).stdout, "True\n")

    def test_a_program_that_replaces_pythonpath_or_runs_isolated_runs_as_it_would(self):
        program = self.program("children.py", """\
            import os, subprocess, sys
            env = dict(os.environ, PYTHONPATH="/nonexistent")
            print(subprocess.run([sys.executable, "-c", "print('child', 1 + 1)"], env=env,
                                 capture_output=True, text=True).stdout, end="")
            print(subprocess.run([sys.executable, "-I", "-c", "import sys; print('isolated', sys.flags.isolated)"],
                                 capture_output=True, text=True).stdout, end="")
            """)
        events = self.assert_same_run([PYTHON, program])
        # Only the parent loaded the hook: the two children could not, and said nothing.
        self.assertEqual(self.kinds(events), ["hello"])

    def test_a_loader_class_with_its_own_iterator_attribute_is_named_as_unseen(self):
        program = self.program("own_iterator.py", """\
            import torch
            from torch.utils.data import DataLoader

            class Reporting(DataLoader):
                @property
                def _iterator(self):
                    return self.__dict__.get("_it")
                @_iterator.setter
                def _iterator(self, value):
                    if value is None and self.__dict__.get("_it") is not None:
                        print("set to None")
                    self.__dict__["_it"] = value

            loader = Reporting(list(range(16)), batch_size=4, num_workers=1, persistent_workers=True)
            for epoch in range(2):
                print(sum(int(batch.sum()) for batch in loader))
            loader._iterator = None
            """)
        events = self.assert_same_run([PYTHON, program])
        unseen = [event for event in events if event["kind"] == "unseen"]
        self.assertEqual(len(unseen), 1)
        self.assertIn("Reporting defines _iterator itself", unseen[0]["reason"])
        self.assertEqual(self.kinds(events).count("iterator_dropped"), 0)

    def test_an_error_inside_the_hook_is_reported_and_the_program_goes_on(self):
        # The program breaks the hook's channel from outside, as a bug in the hook would: every
        # send now raises. The reset below goes through the hook's property all the same.
        program = self.program("broken_hook.py", """\
            import torch
            from torch.utils.data import DataLoader
            from torch.utils.data.dataloader import DataLoader as Base

            import sys
            hook = Base.__dict__["_iterator"].fset.__globals__ if isinstance(Base.__dict__.get("_iterator"), property) else None
            if hook is not None:
                class Broken:
                    def send(self, event):
                        raise RuntimeError("the hook's own bug")
                hook["HOOK"].channel = Broken()
                open(sys.argv[1], "w").close()  # the test's proof that the hook was broken
            loader = DataLoader(list(range(8)), batch_size=4, num_workers=1, persistent_workers=True)
            print([batch.tolist() for batch in loader])
            loader._iterator = None
            print([batch.tolist() for batch in loader])
            """)
        broken = os.path.join(self.dir, "broken")
        self.assert_same_run([PYTHON, program, broken])
        self.assertTrue(os.path.exists(broken), "the watched run did not reach the hook to break it")

    def test_a_full_socket_never_blocks_the_program_and_the_loss_is_counted(self):
        # Nothing reads the socket while the program makes 3000 loaders (an event each): the
        # watcher's queue fills, then the hook's own short list, and the program goes on. Then
        # the socket is read as a watcher reads it, while the program makes 300 more, slowly:
        # what waited goes out first, in order, and every event is received or counted lost.
        go = os.path.join(self.dir, "go")
        program = self.program("many.py", """\
            import os, sys, time
            from torch.utils.data import DataLoader
            for _ in range(3000):
                DataLoader([0])
            print("made", flush=True)
            while not os.path.exists(sys.argv[1]):
                time.sleep(0.01)
            for _ in range(300):
                DataLoader([0])
                time.sleep(0.002)
            """)
        environment = dict(os.environ, PYTHONPATH=HOOK_DIR, DLRESET_WATCH_SOCKET=self.listener.path)
        child = subprocess.Popen([PYTHON, program, go], env=environment, stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline(), "made\n")
        child.stdout.close()
        received = self.listener.events()
        self.assertLessEqual(len(received), 20)  # the queue's few, nothing more
        open(go, "w").close()
        while child.poll() is None:
            received += self.listener.events()
            time.sleep(0.001)
        received += self.listener.events()
        self.assertEqual(child.returncode, 0)
        sequence = [event["seq"] for event in received]
        self.assertEqual(sequence, sorted(sequence))
        last = received[-1]
        self.assertEqual(last["seq"], 2 + 3000 + 300)  # the hello, "patched", the loaders
        self.assertGreater(last["lost"], 2000)
        self.assertEqual(len(received) + last["lost"], last["seq"])

    def test_a_watcher_that_is_gone_leaves_the_program_alone(self):
        program = self.program("alone.py", """\
            from torch.utils.data import DataLoader
            loader = DataLoader(list(range(8)), batch_size=4, num_workers=1, persistent_workers=True)
            print([batch.tolist() for batch in loader])
            """)
        self.listener.close()
        os.unlink(self.listener.path)
        plain = self.run_program([PYTHON, program], watched=False)
        watched = self.run_program([PYTHON, program], watched=True)
        self.listener = Listener(self.dir)
        self.assertEqual((watched.returncode, watched.stdout, watched.stderr),
                         (plain.returncode, plain.stdout, plain.stderr))

    def test_each_event_carries_the_loader_the_stack_the_pid_and_the_rank(self):
        program = self.program("reset.py", """\
            from torch.utils.data import DataLoader

            def reset(loader):
                loader._iterator._shutdown_workers()
                loader._iterator = None

            loader = DataLoader(list(range(16)), batch_size=4, num_workers=2, persistent_workers=True)
            for epoch in range(2):
                reset(loader) if epoch else None
                for batch in loader:
                    pass
            del loader._iterator
            """)
        env = dict(os.environ, RANK="1", LOCAL_RANK="0")
        events = self.assert_same_run([PYTHON, program], env=env)
        dropped = [event for event in events if event["kind"] == "iterator_dropped"]
        self.assertEqual([event["how"] for event in dropped], ["None", "deleted"])
        shutdown = [event for event in events if event["kind"] == "workers_shutdown"]
        self.assertEqual(shutdown[0]["caller"], "reset")
        self.assertEqual(shutdown[0]["stack"][-1][2:], ["reset", "loader._iterator._shutdown_workers()"])
        made = [event for event in events if event["kind"] == "iterator_made"]
        self.assertEqual(len(made), 2)
        for event in made:
            self.assertEqual((event["dataset"], event["batch_size"], event["workers"], event["persistent"]),
                             ("list", 4, 2, True))
            self.assertEqual(len(event["worker_pids"]), 2)
            self.assertEqual((event["rank"], event["local_rank"]), ("1", "0"))
        # No frame of the hook's own.
        for event in events:
            for frame in event.get("stack", []):
                self.assertNotIn("sitecustomize", frame[0])
                self.assertNotIn(HOOK_PACKAGE, frame[0])

    def test_the_hooks_package_is_hidden_from_the_program_before_and_after_torch(self):
        # The program looks for the package by name, in sys.modules, on its path and in the path
        # finders' cache, before it imports torch and after: unwatched and watched alike, it
        # finds nothing, while the watched run's hook did load the package's patches.
        program = self.program("looks.py", """\
            import importlib.util, sys

            def look(when):
                found = importlib.util.find_spec("%s")
                print(when, found.origin if found else None,
                      sorted(name for name in sys.modules if "%s" in name),
                      sorted(entry for entry in sys.path_importer_cache if "%s" in entry))
                try:
                    import %s
                    print(when, "imported", %s.__file__)
                except ImportError as error:
                    print(when, type(error).__name__, error.name)

            look("before")
            from torch.utils.data import DataLoader
            print([batch.tolist() for batch in DataLoader(list(range(4)), batch_size=2)])
            look("after")
            """ % ((HOOK_PACKAGE,) * 5))
        events = self.assert_same_run([PYTHON, program])
        patched = [event for event in events if event["kind"] == "patched"]
        self.assertEqual(len(patched), 1)
        self.assertEqual(self.kinds(events).count("hook_error"), 0)
        self.assertEqual(self.kinds(events).count("iterator_made"), 1)

    def test_a_start_imports_only_the_hooks_own_modules_beside_the_programs(self):
        # -X importtime names every module a start imports, also those taken off sys.modules
        # again: watched, a start imports the program's, the bootstrap and the package's channel
        # and state (for the hello), and the built-in _socket, nothing more; the patches wait.
        def imported(watched):
            run = self.run_program([PYTHON, "-X", "importtime", "-c", "pass"], watched=watched)
            self.assertEqual(run.returncode, 0, run.stderr)
            lines = [line.split("|")[-1] for line in run.stderr.splitlines() if line.startswith("import time:")]
            return [line.strip() for line in lines[1:]]  # the first line is the header

        plain = imported(watched=False)
        hooked = imported(watched=True)
        self.assertEqual(len(self.listener.events()), 1)  # the hello
        own = ["_dlreset_hook", "_dlreset_hook.channel", "_dlreset_hook.state", "_socket"]
        self.assertEqual(sorted(name for name in hooked if name in own), own)
        self.assertEqual(hooked.count("sitecustomize"), plain.count("sitecustomize") + 1)
        self.assertEqual(sorted(name for name in hooked if name not in own + ["sitecustomize"]),
                         sorted(name for name in plain if name != "sitecustomize"))

    def test_a_program_module_named_like_the_hooks_package_stays_the_programs(self):
        # The hook's folder is first on PYTHONPATH while Python starts: the package must shadow
        # nothing the program imports later, and a clash switches the hook off, never the program.
        own = os.path.join(self.dir, "own")
        os.mkdir(own)
        with open(os.path.join(own, HOOK_PACKAGE + ".py"), "w") as f:
            f.write("WHOSE = 'the program'\n")
        program = self.program("clash.py", """\
            import %s
            print(%s.WHOSE, %s.__file__)
            from torch.utils.data import DataLoader
            print([batch.tolist() for batch in DataLoader(list(range(4)), batch_size=2)])
            """ % ((HOOK_PACKAGE,) * 3))
        env = dict(os.environ, PYTHONPATH=own)
        events = self.assert_same_run([PYTHON, program], env=env)
        errors = [event for event in events if event["kind"] == "hook_error"]
        self.assertEqual(len(errors), 1)
        self.assertIn("a module of its own named %s" % HOOK_PACKAGE, errors[0]["error"])
        self.assertEqual(self.kinds(events).count("patched"), 0)

    # -----------------------------------------------------------------------------------------
    # The clock on the input wait (watch/hook/python/_dlreset_hook/waits.py): two descriptors on
    # every next(), held to the same rules, and one pass_waits event a pass.

    PASS_WAITS_FIELDS = {"iterator", "loader", "pass", "thread", "main_thread", "other_thread_calls", "begun",
                         "batches", "first_batch_s", "first_wait_s", "wait_s", "step_s", "last_batch", "max_wait_s",
                         "hist", "blocked_waits", "blocked_wait_s", "worst_blocked", "end", "stopped"}
    COMMON_FIELDS = {"v", "kind", "pid", "t", "rank", "local_rank", "seq", "lost"}

    def of_kind(self, events, kind):
        return [event for event in events if event["kind"] == kind]

    def test_a_workers_error_raised_through_next_keeps_its_traceback(self):
        # The program prints the formatted traceback of a worker's error it catches, and lets a
        # second one (single-process) end it: both read the same, frame for frame, watched. One
        # worker, so that the batch that fails arrives in order, through the same lines of torch.
        program = self.program("worker_error.py", """\
            import traceback
            from torch.utils.data import DataLoader, Dataset

            class Failing(Dataset):
                def __len__(self):
                    return 16
                def __getitem__(self, index):
                    if index == 9:
                        raise ValueError("sample %d is broken" % index)
                    return index

            try:
                for batch in DataLoader(Failing(), batch_size=4, num_workers=1):
                    print(batch.tolist())
            except ValueError:
                print(traceback.format_exc())
            for batch in DataLoader(Failing(), batch_size=4):
                print(batch.tolist())
            """)
        events = self.assert_same_run([PYTHON, program])
        self.assertEqual(self.kinds(events).count("hook_error"), 0)
        self.assertEqual(self.kinds(events).count("pass_waits"), 2)

    def test_the_iterator_protocol_reads_the_same(self):
        # StopIteration, len(), isinstance (collections.abc.Iterator too), pickling (torch refuses
        # it: the same error), an explicit __next__(), the samples: printed, the same both ways.
        program = self.program("protocol.py", """\
            import collections.abc, pickle
            from torch.utils.data import DataLoader

            for workers, persistent in ((0, False), (2, False), (2, True)):
                loader = DataLoader(list(range(10)), batch_size=4, shuffle=False, num_workers=workers,
                                    persistent_workers=persistent)
                it = iter(loader)
                print(workers, persistent, len(it), isinstance(it, collections.abc.Iterator),
                      isinstance(it, collections.abc.Iterable), type(it).__name__, iter(it) is it)
                try:
                    pickle.dumps(it)
                except Exception as error:
                    print("pickle:", type(error).__name__, error)
                print(it.__next__().tolist(), [batch.tolist() for batch in it])
                try:
                    next(it)
                except StopIteration as stop:
                    print("StopIteration", stop.args)
                except Exception as error:
                    print("after the end:", type(error).__name__, error)
                print(it._num_yielded, hasattr(it, "_num_yielded"))
            """)
        events = self.assert_same_run([PYTHON, program])
        self.assertEqual(self.kinds(events).count("hook_error"), 0)
        self.assertEqual(self.kinds(events).count("pass_waits"), 3)

    def test_each_pass_sends_one_pass_waits_event_with_its_counts(self):
        # A persistent loader's 3 epochs are 3 passes of one iterator (ended by the next iter(),
        # then by the shutdown of its workers when the program lets it go); a non-persistent
        # multi-process pass ends in StopIteration, which shuts its workers down; a
        # single-process iterator's pass ends when it is freed.
        program = self.program("passes.py", """\
            from torch.utils.data import DataLoader

            loader = DataLoader(list(range(48)), batch_size=8, num_workers=2, persistent_workers=True)
            for epoch in range(3):
                print(epoch, [batch.tolist() for batch in loader])
            del loader
            print([batch.tolist() for batch in DataLoader(list(range(20)), batch_size=8, num_workers=1)])
            print([batch.tolist() for batch in DataLoader(list(range(20)), batch_size=8)])
            """)
        events = self.assert_same_run([PYTHON, program])
        waits = self.of_kind(events, "pass_waits")
        made = self.of_kind(events, "iterator_made")
        self.assertEqual(len(waits), 5)
        for event in waits:
            self.assertEqual(set(event), self.PASS_WAITS_FIELDS | self.COMMON_FIELDS)
            self.assertEqual(event["thread"], "MainThread")
            self.assertEqual(event["main_thread"], True)
            self.assertEqual(event["other_thread_calls"], 0)
            self.assertEqual(sum(count for _, count in event["hist"]), event["batches"] - 1)
            self.assertEqual([bucket for bucket, _ in event["hist"]], sorted({bucket for bucket, _ in event["hist"]}))
            self.assertLessEqual(event["first_wait_s"], event["first_batch_s"])
            self.assertLessEqual(event["first_wait_s"], event["wait_s"])
            self.assertLessEqual(event["max_wait_s"], event["wait_s"])
            self.assertLessEqual(event["begun"], event["last_batch"])
            self.assertLessEqual(event["last_batch"], event["t"])
        persistent = waits[:3]
        self.assertEqual([event["pass"] for event in persistent], [1, 2, 3])
        self.assertEqual([event["batches"] for event in persistent], [6, 6, 6])
        self.assertEqual([event["end"] for event in persistent], ["reset", "reset", "shutdown"])
        self.assertEqual([event["iterator"] for event in persistent], [made[0]["iterator"]] * 3)
        self.assertEqual([event["loader"] for event in persistent], [made[0]["loader"]] * 3)
        self.assertEqual([(event["pass"], event["batches"], event["end"], event["stopped"]) for event in waits[3:]],
                         [(1, 3, "shutdown", True), (1, 3, "freed", False)])
        self.assertEqual([event["loader"] for event in waits[3:]], [event["loader"] for event in made[1:]])
        self.assertEqual(len({event["iterator"] for event in waits}), 3)
        # Each persistent pass's event comes before the reset that begins the next.
        kinds = [event["kind"] for event in events if event["kind"] in ("pass_waits", "iterator_reset")]
        self.assertEqual(kinds[:4], ["pass_waits", "iterator_reset", "pass_waits", "iterator_reset"])

    def test_a_wait_for_one_worker_while_the_others_batch_was_ready_is_counted_as_blocked(self):
        # tests/watch/head_of_line.py: worker 0's batch 2k finishes 100 ms after worker 1's batch
        # 2k+1, which the loop has received, out of order, while it waits for batch 2k: each even
        # batch but a pass's first (whose wait is the workers' start) is a blocked wait for worker
        # 0 with 1 later batch ready, 7 a pass of 16. The odd batches were held already: never
        # counted, however long their call took. The balanced twin's batches arrive in order, 50
        # ms apart: none blocked, of 15 waits a pass of 50 ms less the loop's own time (most of
        # them over 2^10 us, read; all but where a busy machine held the loop up that long). The
        # same output and status both ways.
        program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "head_of_line.py")
        for balanced in (False, True):
            events = self.assert_same_run([PYTHON, program] + (["--balanced"] if balanced else []))
            self.assertEqual(self.kinds(events).count("hook_error"), 0)
            waits = self.of_kind(events, "pass_waits")
            self.assertEqual([(event["pass"], event["batches"]) for event in waits], [(1, 16), (2, 16)])
            for event in waits:
                slow = sum(count for bucket, count in event["hist"] if bucket > 10)
                worst = event["worst_blocked"]
                if balanced:
                    self.assertGreaterEqual(slow, 8)
                    self.assertEqual((event["blocked_waits"], event["blocked_wait_s"], worst), (0, 0.0, None))
                    continue
                self.assertEqual(event["blocked_waits"], 7)
                self.assertLessEqual(event["blocked_waits"], slow)
                self.assertEqual((worst["ready"], worst["worker"], worst["batch"] % 2), (1, 0, 1))
                self.assertLessEqual(worst["wait_s"], event["blocked_wait_s"])
                self.assertLessEqual(event["blocked_wait_s"], event["wait_s"] - event["first_wait_s"])

    def test_a_loader_consumed_on_another_thread_is_timed_on_that_thread(self):
        # A prefetch thread takes the first 2 of 5 batches; the main thread's 4 next() calls
        # after it (3 batches and the StopIteration) are counted, not timed.
        program = self.program("prefetch.py", """\
            import threading
            from torch.utils.data import DataLoader

            for workers in (0, 1):
                it = iter(DataLoader(list(range(20)), batch_size=4, num_workers=workers))
                early = []
                thread = threading.Thread(target=lambda: early.extend(next(it).tolist() for _ in range(2)),
                                          name="prefetch")
                thread.start()
                thread.join()
                print(workers, early, [batch.tolist() for batch in it])
                del it
            """)
        events = self.assert_same_run([PYTHON, program])
        waits = self.of_kind(events, "pass_waits")
        self.assertEqual([(event["thread"], event["main_thread"], event["batches"], event["other_thread_calls"])
                          for event in waits], [("prefetch", False, 2, 4)] * 2)

    def test_an_iterator_names_the_programs_threads_alive_as_its_workers_start(self):
        # A thread of the program's beside the first iterator; the second starts beside the
        # first's queue feeders and a persistent loader's pin-memory thread, which are the
        # library's own and not named.
        program = self.program("threads.py", """\
            import threading
            from torch.utils.data import DataLoader

            done = threading.Event()
            holder = threading.Thread(target=done.wait, name="holder")
            holder.start()
            first = iter(DataLoader(list(range(16)), batch_size=4, num_workers=2))
            print(next(first).tolist())
            done.set()
            holder.join()
            kept = iter(DataLoader(list(range(16)), batch_size=4, num_workers=1, pin_memory=True,
                                   persistent_workers=True))
            print([batch.tolist() for batch in kept])
            print([batch.tolist() for batch in DataLoader(list(range(8)), batch_size=4, num_workers=1)])
            del first
            """)
        events = self.assert_same_run([PYTHON, program])
        made = self.of_kind(events, "iterator_made")
        self.assertEqual([event["threads"] for event in made], [["holder"], [], []])

    def test_a_pass_still_open_at_exit_is_sent_then(self):
        program = self.program("open_pass.py", """\
            from torch.utils.data import DataLoader

            single = iter(DataLoader(list(range(40)), batch_size=4))
            print(next(single).tolist(), next(single).tolist())
            loader = DataLoader(list(range(40)), batch_size=4, num_workers=2, persistent_workers=True)
            persistent = iter(loader)
            print([next(persistent).tolist() for _ in range(3)])
            """)
        events = self.assert_same_run([PYTHON, program])
        waits = self.of_kind(events, "pass_waits")
        self.assertEqual(sorted((event["batches"], event["end"]) for event in waits), [(2, "exit"), (3, "exit")])

    def test_a_hang_watch_changes_nothing_the_program_sees_and_its_stacks_go_to_the_watchers_file(self):
        # What `dlreset watch --hang-timeout` gives the program: beats every 50 ms at most, and
        # faulthandler on SIGRTMIN+11 writing to a file of the watcher's.
        stacks = os.path.join(self.dir, "stacks")
        environment = dict(os.environ, DLRESET_WATCH_HANG="0.05,%d,%s" % (signal.SIGRTMIN + 11, stacks))
        program = self.program("hang_watch.py", """\
            import signal
            import sys
            import time
            from torch.utils.data import DataLoader, Dataset

            class Slow(Dataset):
                def __len__(self):
                    return 8
                def __getitem__(self, index):
                    time.sleep(0.03)
                    return index

            loader = DataLoader(Slow(), batch_size=2, num_workers=2)
            for epoch in range(3):
                print(epoch, [batch.tolist() for batch in loader])
            print(signal.getsignal(signal.SIGRTMIN + 11), sorted(sys.modules))
            """)
        events = self.assert_same_run([PYTHON, program], env=environment)
        begun = self.of_kind(events, "pass_begun")
        self.assertEqual(sorted(event["pass"] for event in begun), [1, 1, 1])
        for beat in self.of_kind(events, "pass_beat"):
            self.assertIn(beat["batches"], range(1, 5))
        self.assertFalse(os.path.exists(stacks) and os.path.getsize(stacks))

        # Signalled, a watched process writes every thread's stack to the file, and nothing to its
        # own streams, and goes on.
        signalled = self.program("signalled.py", """\
            import os
            import signal
            import torch.utils.data
            os.kill(os.getpid(), signal.SIGRTMIN + 11)
            print("alive")
            """)
        run = self.run_program([PYTHON, signalled], watched=True, env=environment)
        self.assertEqual((run.returncode, run.stdout, run.stderr), (0, "alive\n", ""))
        with open(stacks) as written:
            dump = written.read()
        self.assertEqual(dump.count("Current thread 0x"), 1, dump)
        self.assertIn('signalled.py", line 4 in <module>', dump)

    def test_each_worker_says_it_is_ready_once_fork_and_spawn(self):
        program = self.program("ready.py", """\
            from torch.utils.data import DataLoader

            def main():
                for method, workers in (("fork", 3), ("spawn", 2)):
                    loader = DataLoader(list(range(24)), batch_size=4, num_workers=workers, persistent_workers=True,
                                        multiprocessing_context=method)
                    for epoch in range(2):
                        print(method, epoch, [batch.tolist() for batch in loader])

            if __name__ == "__main__":
                main()
            """)
        events = self.assert_same_run([PYTHON, program])
        made = self.of_kind(events, "iterator_made")
        ready = self.of_kind(events, "worker_ready")
        self.assertEqual(len(made), 2)
        main_pid = made[0]["pid"]
        for event, workers in zip(made, (3, 2)):
            pids = event["worker_pids"]
            self.assertEqual(len(pids), workers)
            mine = [entry for entry in ready if entry["pid"] in pids]
            self.assertEqual(sorted(entry["worker_id"] for entry in mine), list(range(workers)))
            self.assertEqual({entry["parent"] for entry in mine}, {main_pid})
        self.assertEqual(len(ready), 5)
        for entry in ready:
            self.assertEqual(set(entry), {"worker_id", "parent"} | self.COMMON_FIELDS)
        # Each worker numbers its own events: a fork worker's first is its worker_ready; a spawn
        # worker, a Python of its own, said hello and patched torch first.
        for event, first in zip(made, (["worker_ready"], ["hello", "patched", "worker_ready"])):
            for pid in event["worker_pids"]:
                own = [entry for entry in events if entry["pid"] == pid]
                self.assertEqual(self.kinds(own), first)
                self.assertEqual([entry["seq"] for entry in own], list(range(1, len(first) + 1)))


def main():
    global HOOK_DIR
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hook-dir", required=True, help="the folder of the hook's sitecustomize.py")
    parser.add_argument("--shard", default="0/1", help="I/N: run the I-th of N shares of the tests")
    args, rest = parser.parse_known_args()
    HOOK_DIR = os.path.abspath(args.hook_dir)
    index, count = (int(part) for part in args.shard.split("/"))
    names = sorted(name for name in dir(HookTest) if name.startswith("test_"))
    if count > 1 and not any(arg.startswith("-k") for arg in rest):
        rest += [f"HookTest.{name}" for position, name in enumerate(names) if position % count == index]
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
