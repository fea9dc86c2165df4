"""Runs the oracle's scenarios through the real torch.utils.data.DataLoader (Debian's python3-torch
1.13.1) and writes what happened as a dlreset.oracle trace; dlreset_oracle_tests runs the same
scenarios through dlreset's DataLoader and compares the two traces.

Run it with /usr/bin/python3, the interpreter Debian's python3-torch is installed for:

    /usr/bin/python3 tests/oracle/torch_trace.py --out torch.json [--only NAME-PREFIX]
    /usr/bin/python3 tests/oracle/torch_trace.py --out torch.json --errors
    /usr/bin/python3 tests/oracle/torch_trace.py --out torch.json --idle-death fork
"""

import argparse
import faulthandler
import gc
import json
import os
import signal
import sys
import tempfile
import time
import traceback

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info
from torch.utils.data._utils import signal_handling
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

SCHEMA = "dlreset.oracle"
SCHEMA_VERSION = 1

# The dataset and batch size leave a short last batch (37 = 7 x 5 + 2).
DATASET_SIZE = 37
BATCH_SIZE = 5
EPOCHS = 3
SEED = 7

# An error case takes a few seconds; one that has not ended after this long is hung (see
# run_isolated) and is run again, at most ERROR_CASE_ATTEMPTS times in all.
ERROR_CASE_WATCHDOG_S = 60
ERROR_CASE_ATTEMPTS = 3


def scenarios():
    """The grid. Every field is read by dlreset_oracle_tests too; it builds nothing of its own."""
    grid = []

    def add(**params):
        base = dict(num_workers=0, persistent_workers=False, start_method="fork", prefetch_factor=2,
                    drop_last=False, shuffle=True, variant="fixed", break_after=-1, epochs=EPOCHS)
        base.update(params)
        parts = [base["variant"], base["start_method"], "w%d" % base["num_workers"],
                 "persistent" if base["persistent_workers"] else "transient",
                 "pf%d" % base["prefetch_factor"], "droplast" if base["drop_last"] else "keeplast",
                 "shuffle" if base["shuffle"] else "sequential"]
        if base["break_after"] >= 0:
            parts.append("break%d" % base["break_after"])
        base["name"] = "-".join(parts)
        grid.append(base)

    for variant in ("buggy", "fixed"):
        for drop_last in (False, True):
            for shuffle in (False, True):
                add(variant=variant, drop_last=drop_last, shuffle=shuffle)
                for workers in (1, 2, 3):
                    for persistent in (False, True):
                        # prefetch_factor changes only how far ahead the workers are sent
                        # work, so its other values are crossed with the shuffled order alone.
                        for prefetch in ((1, 2, 4) if shuffle else (2,)):
                            add(variant=variant, num_workers=workers, persistent_workers=persistent,
                                prefetch_factor=prefetch, drop_last=drop_last, shuffle=shuffle)
        # Spawned workers re-import torch (over a second each here), so spawn gets a smaller
        # grid: what differs from fork is where the dataset comes from, not the protocol.
        add(variant=variant, start_method="spawn", num_workers=2, persistent_workers=True, epochs=2)
        add(variant=variant, start_method="spawn", num_workers=1, persistent_workers=False, epochs=2)
        # The middle epoch stops after two batches: the next iter() starts a new epoch at once
        # (a persistent iterator is reset with results still on the way).
        for workers in (0, 2):
            for persistent in ((False, True) if workers else (False,)):
                add(variant=variant, num_workers=workers, persistent_workers=persistent,
                    break_after=2)
    return grid


class Log:
    """Lines appended by every process of a scenario: 'start PID ID' and 'load PID'."""

    def __init__(self, path):
        self.path = path

    def write(self, line):
        with open(self.path, "a") as out:
            out.write(line + "\n")

    def lines(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as lines:
            return [line.split() for line in lines]

    def count(self, word):
        return sum(1 for line in self.lines() if line[0] == word)

    def loads_by_worker(self):
        """Dataset loads per worker id ("-1": the main process), over the whole scenario."""
        worker_of = {line[1]: line[2] for line in self.lines() if line[0] == "start"}
        loads = {}
        for line in self.lines():
            if line[0] == "load":
                worker = worker_of.get(line[1], "-1")
                loads[worker] = loads.get(worker, 0) + 1
        return loads


class ProbeDataset(Dataset):
    """Sample i says who made it: (i, worker id, num_workers, worker seed), -1 for the main
    process. Loads lazily, once per object, like the datasets of the bug; a pickled copy (a
    spawned worker's) has loaded nothing."""

    def __init__(self, size, log_path, fault=None):
        self.size = size
        self.log = Log(log_path)
        self.fault = fault or {}
        self.loaded = False

    def __getstate__(self):
        state = dict(self.__dict__)
        state["loaded"] = False
        return state

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if not self.loaded:
            self.loaded = True
            self.log.write("load %d" % os.getpid())
        if index == self.fault.get("throw_at"):
            raise ValueError("sample %d cannot be read" % index)
        if index == self.fault.get("crash_at"):
            os.kill(os.getpid(), signal.SIGKILL)
        if index == self.fault.get("hang_at"):
            time.sleep(2)
        info = get_worker_info()
        if info is None:
            return index, -1, 0, -1
        return index, info.id, info.num_workers, info.seed


class StartLog:
    """worker_init_fn: one 'start' line per worker started (a class, so spawn can pickle it)."""

    def __init__(self, log_path):
        self.log = Log(log_path)

    def __call__(self, worker_id):
        self.log.write("start %d %d" % (os.getpid(), worker_id))


class CountingLoader(DataLoader):
    """Counts what dlreset's LoaderCounters count: iterators built, and live -> None stores into
    `_iterator` (the property the bug's reporter used to find the reset)."""

    def __init__(self, *args, **kwargs):
        self.iterators_created = 0
        self.iterator_resets = 0
        self._watched_iterator = None
        super().__init__(*args, **kwargs)

    @property
    def _iterator(self):
        return self._watched_iterator

    @_iterator.setter
    def _iterator(self, value):
        if value is None and self._watched_iterator is not None:
            self.iterator_resets += 1
        self._watched_iterator = value

    def _get_iterator(self):
        self.iterators_created += 1
        return super()._get_iterator()


SHUTDOWN_CALLS = [0]
_original_shutdown = _MultiProcessingDataLoaderIter._shutdown_workers


def _counted_shutdown(self):
    SHUTDOWN_CALLS[0] += 1
    _original_shutdown(self)


_MultiProcessingDataLoaderIter._shutdown_workers = _counted_shutdown


def shutdown_workers_and_reset_iterator(loader):
    """What Lightning 1.5.0 did to every loader at the start of every epoch."""
    if isinstance(loader._iterator, _MultiProcessingDataLoaderIter):
        loader._iterator._shutdown_workers()
    loader._iterator = None


def make_loader(params, log_path, fault=None, timeout=0):
    generator = torch.Generator()
    generator.manual_seed(SEED)
    options = dict(batch_size=BATCH_SIZE, shuffle=params["shuffle"], drop_last=params["drop_last"],
                   num_workers=params["num_workers"], generator=generator,
                   persistent_workers=params["persistent_workers"], timeout=timeout)
    if params["num_workers"] > 0:
        options.update(prefetch_factor=params["prefetch_factor"], worker_init_fn=StartLog(log_path),
                       multiprocessing_context=params["start_method"])
    return CountingLoader(ProbeDataset(DATASET_SIZE, log_path, fault), **options)


def pending(iterator):
    """Index batches sent and not yet handed out: prefetch_factor x W after a reset."""
    if isinstance(iterator, _MultiProcessingDataLoaderIter):
        return iterator._send_idx - iterator._rcvd_idx
    return 0


def outstanding(iterator):
    if isinstance(iterator, _MultiProcessingDataLoaderIter):
        return iterator._tasks_outstanding
    return 0


def run_scenario(params, workdir):
    log_path = os.path.join(workdir, params["name"] + ".log")
    SHUTDOWN_CALLS[0] = 0
    loader = make_loader(params, log_path)
    epochs = []
    for epoch in range(params["epochs"]):
        if params["variant"] == "buggy":
            shutdown_workers_and_reset_iterator(loader)
        iterator = iter(loader)
        record = {"len": len(loader), "sent_before_first": pending(iterator), "batches": []}
        max_outstanding = outstanding(iterator)
        stop_after = params["break_after"] if epoch == 1 else -1
        while True:
            if len(record["batches"]) == stop_after:
                record["ended"] = "break"
                break
            try:
                indices, worker, num_workers, seed = next(iterator)
            except StopIteration:
                record["ended"] = "StopIteration"
                break
            record["batches"].append({
                "indices": indices.tolist(), "worker": sorted(set(worker.tolist())),
                "num_workers": sorted(set(num_workers.tolist())), "seed": sorted(set(seed.tolist())),
                "pending": pending(iterator)})
            max_outstanding = max(max_outstanding, outstanding(iterator))
        if record["ended"] == "StopIteration":
            try:
                next(iterator)
                record["next_after_end"] = "batch"
            except StopIteration:
                record["next_after_end"] = "StopIteration"
        record["max_outstanding"] = max_outstanding
        del iterator
        epochs.append(record)
    counts = {
        "worker_spawns": Log(log_path).count("start"),
        "dataset_loads": Log(log_path).count("load"),
        "dataset_loads_by_worker": Log(log_path).loads_by_worker(),
        "iterators_created": loader.iterators_created,
        "iterator_resets": loader.iterator_resets,
        "shutdown_calls": SHUTDOWN_CALLS[0],
    }
    del loader
    gc.collect()
    return {"name": params["name"], "params": params, "epochs": epochs, "counts": counts}


def error_text(error):
    """The first line of a message: a worker's error carries the worker's traceback after it."""
    return type(error).__name__, str(error).split("\n")[0]


def run_isolated(name, run, workdir):
    """Runs run() in a child process, in a process group of its own, and returns its result.

    Torch 1.13 raises a worker's death from its SIGCHLD handler, in whatever the main thread is
    doing. When that is a put() on a worker's index queue, the queue's lock is never released,
    and the shutdown's put(None) on the same queue then waits for it forever (torch's own
    _shutdown_workers warns of hangs after a worker is killed by a signal). So each case runs in
    a child with a faulthandler watchdog: a hung child prints every thread's stack and exits, its
    process group (the case's workers with it) is killed, and the case runs again. Each attempt
    runs the whole case, so torch's text is still torch's own.
    """
    result_path = os.path.join(workdir, name + ".result.json")
    for attempt in range(1, ERROR_CASE_ATTEMPTS + 1):
        if os.path.exists(result_path):
            os.remove(result_path)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.setpgid(0, 0)
                faulthandler.dump_traceback_later(ERROR_CASE_WATCHDOG_S, exit=True)
                result = run()
                with open(result_path, "w") as out:
                    json.dump(result, out)
                status = 0
            except BaseException:  # noqa: BLE001 - the parent says what happened
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        try:
            os.killpg(pid, signal.SIGKILL)  # workers a hung case left behind
        except ProcessLookupError:
            pass
        exit_code = os.waitstatus_to_exitcode(status)
        if exit_code == 0 and os.path.exists(result_path):
            with open(result_path) as result:
                return json.load(result)
        print("error case %s: attempt %d of %d ended with exit status %d without a result "
              "(a hang prints 'Timeout' and every thread's stack above)"
              % (name, attempt, ERROR_CASE_ATTEMPTS, exit_code), file=sys.stderr, flush=True)
    raise SystemExit("error case %s failed %d times; its output is above"
                     % (name, ERROR_CASE_ATTEMPTS))


def run_error_cases(workdir):
    """The errors whose texts dlreset's begin with, word for word (pids and the exception's
    type are what differ; dlreset_oracle_tests says how)."""
    params = dict(scenarios()[0], num_workers=2, persistent_workers=False, start_method="fork",
                  prefetch_factor=2, shuffle=False)
    log_path = os.path.join(workdir, "errors.log")

    def attempt(name, build, **fault):
        iterator = None
        try:
            iterator = iter(build(fault))
            for _ in iterator:
                pass
            return {"name": name, "type": None, "message": "no error"}
        except Exception as error:  # noqa: BLE001 - the oracle records whatever torch raises
            kind, text = error_text(error)
            return {"name": name, "type": kind, "message": text,
                    "original": str(error).rstrip().split("\n")[-1]}
        finally:
            # Left to the garbage collector, the failed iterator's queues may go before it does,
            # and its workers then wait out their status-check interval (5 s) before exiting.
            if isinstance(iterator, _MultiProcessingDataLoaderIter):
                iterator._shutdown_workers()
            del iterator
            gc.collect()

    cases = [
        ("worker_exception", lambda fault: make_loader(params, log_path, fault), {"throw_at": 3}),
        ("worker_killed", lambda fault: make_loader(params, log_path, fault), {"crash_at": 3}),
        ("timeout", lambda fault: make_loader(params, log_path, fault, timeout=0.5),
         {"hang_at": 3}),
        ("persistent_without_workers",
         lambda fault: make_loader(dict(params, num_workers=0, persistent_workers=True),
                                   log_path),
         {}),
    ]
    # run_isolated calls the lambda before the loop moves on, so it sees this case's values.
    return [run_isolated(name, lambda: attempt(name, build, **fault), workdir)
            for name, build, fault in cases]


# The loader read while another loader's idle worker is killed (--idle-death): an epoch of
# BUSY_SIZE / 2 batches, each sample BUSY_SAMPLE_S long, lasts long after the kill, so where the
# death is raised says which loop it stopped.
BUSY_SIZE = 400
BUSY_SAMPLE_S = 0.003


class BusyDataset(Dataset):
    """Sample i is i, after BUSY_SAMPLE_S of sleep."""

    def __len__(self):
        return BUSY_SIZE

    def __getitem__(self, index):
        time.sleep(BUSY_SAMPLE_S)
        return index


def run_idle_death(start_method, workdir):
    """Torch's SIGCHLD handler watches every live worker of every loader: a persistent loader
    ("idle") is read for 3 batches and left idle, a second one ("busy") is read, and worker 1
    of the idle one is SIGKILLed. Records where the error was raised, its first line, how many
    batches the busy loop got between the kill and the error, and where torch dropped a raise."""
    log_path = os.path.join(workdir, "idle-death.log")

    def run():
        idle = DataLoader(ProbeDataset(20, log_path), batch_size=2, num_workers=2,
                          persistent_workers=True, multiprocessing_context=start_method)
        idle_iterator = iter(idle)
        for _ in range(3):
            next(idle_iterator)
        pid = idle_iterator._workers[1].pid
        busy = DataLoader(BusyDataset(), batch_size=2, num_workers=2,
                          multiprocessing_context=start_method)
        busy_iterator = iter(busy)
        next(busy_iterator)
        result = {"start_method": start_method, "pid": pid, "busy_batches": len(busy),
                  "raised_in": None, "type": None, "message": "no error",
                  "busy_batches_after_kill": 0}
        # Torch's SIGCHLD handler raises a worker's death once (it forgets the loader's pids as
        # it raises), at whatever bytecode the main thread is at. Two places there drop it, and
        # the loop reads on: a finalizer (a received batch's connection closed in __del__:
        # Python prints the error as unraisable), and threading.Condition.notify, which
        # swallows a RuntimeError raised while it wakes a waiter (CPython gh-92530), as the
        # index queue's put() does. So the handler's check is wrapped to record what each of
        # its raises interrupted; one that does not reach this loop was dropped there.
        check = signal_handling._error_if_any_worker_fails
        raised_in_frames = []

        def recorded_check():
            try:
                check()
            except RuntimeError:
                # Frame 1 is torch's handler; frame 2 is what the signal interrupted.
                code = sys._getframe(2).f_code
                raised_in_frames.append(getattr(code, "co_qualname", code.co_name))
                raise

        signal_handling._error_if_any_worker_fails = recorded_check
        # The kill is inside the try: the handler may raise at the very next bytecode.
        where = "busy"
        try:
            os.kill(pid, signal.SIGKILL)
            for _ in busy_iterator:
                result["busy_batches_after_kill"] += 1
            # The epoch ran out: had the worker died by then? A machine under load may take
            # longer to end a process than this epoch lasts; then the death came too late to
            # say anything of where torch raises it.
            where = "after the loop"
            result["dead_at_loop_end"] = os.waitid(
                os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except RuntimeError as error:
            result["raised_in"] = where
            result["type"], result["message"] = error_text(error)
        # The raise caught above was the last; any other was dropped where it was raised.
        result["lost_in"] = raised_in_frames[:-1] if result["raised_in"] else raised_in_frames
        # No shutdown: torch's may hang after a death raised inside a put() (run_isolated); the
        # process group goes instead.
        return result

    # A death dropped where torch raised it, or one that came only after the busy epoch ran
    # out, says nothing of torch's rule: run the case again, and say so, only on that evidence.
    # A worker dead before the loop's end that torch never raised at all still fails.
    for attempt in range(1, ERROR_CASE_ATTEMPTS + 1):
        result = run_isolated("idle_death_" + start_method, run, workdir)
        if result["lost_in"]:
            why = "torch raised the death in %s, which dropped it" % ", ".join(result["lost_in"])
        elif result["raised_in"] == "after the loop" or result.get("dead_at_loop_end") is False:
            why = "the worker died only after the busy epoch ran out"
        else:
            return result
        print("idle death (%s): attempt %d of %d: %s; running the case again"
              % (start_method, attempt, ERROR_CASE_ATTEMPTS, why), file=sys.stderr, flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="where to write the trace (JSON)")
    parser.add_argument("--only", default="", help="run only the scenarios whose name starts so")
    parser.add_argument("--errors", action="store_true", help="run the error cases instead")
    parser.add_argument("--idle-death", choices=["fork", "spawn"],
                        help="run the idle loader's killed worker instead, with this start method")
    args = parser.parse_args()
    torch.set_num_threads(1)
    traces, errors, idle_death = [], [], None
    with tempfile.TemporaryDirectory(prefix="dlreset-oracle-") as workdir:
        if args.idle_death:
            idle_death = run_idle_death(args.idle_death, workdir)
        elif args.errors:
            errors = run_error_cases(workdir)
        else:
            grid = [params for params in scenarios() if params["name"].startswith(args.only)]
            for number, params in enumerate(grid, 1):
                traces.append(run_scenario(params, workdir))
                print("[%d/%d] %s" % (number, len(grid), params["name"]), file=sys.stderr,
                      flush=True)
    trace = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "torch": torch.__version__,
             "dataset_size": DATASET_SIZE, "batch_size": BATCH_SIZE, "seed": SEED,
             "scenarios": traces, "errors": errors, "idle_death": idle_death}
    with open(args.out, "w") as out:
        json.dump(trace, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
