# Head-of-line blocking, read on the clock's slow path (docs/watch.md, "The input wait"): a wait
# for one worker's batch while the iterator held later batches of other workers, received out of
# order. waits.py calls note() only for a wait of 2^10 us or more (the histogram's bucket 11 and
# up, which it computed anyway): a call whose batch was ready runs none of this.
#
# What torch 1.13's _MultiProcessingDataLoaderIter shows when its __next__ assigns
# `_num_yielded += 1`, the setter that calls this: _next_data has returned the batch through
# _process_data, which had taken the batch's entry out of _task_info, moved _rcvd_idx past its
# task index (the batch's is _rcvd_idx - 1), and sent a next index to a worker (_try_put_index: an
# entry (worker,) at _send_idx - 1). So every entry left in _task_info is a later task: (worker,),
# still asked of its worker, or (worker, data), received out of order. A received one arrived
# before the batch returned, while the loop waited or earlier: _next_data returns the wanted batch
# as soon as it arrives, and receives nothing after it.
#
# The worker of the returned batch: _try_put_index deals task i to the next worker of
# _worker_queue_idx_cycle, a cycle over range(num_workers) made afresh at each _reset, passing
# over a worker whose _workers_status is False (an iterable dataset's worker that ran out, set
# within a pass and never back). While every status is True, then, each task went to the next
# worker in turn: task i to worker i % num_workers. Where one is False the worker is not named,
# and every received later batch counts.
#
# Tasks 0 to num_workers - 1 are each worker's first of the pass (while every status is True; a
# worker runs out only later): their waits are the workers' start, which a pass that starts new
# workers staggers, as the first batch's is, and are not read.
#
# A worker makes its batches in the order it was asked, so a later batch of the worker waited for
# cannot be received before the one waited for: one of the same worker means the returned batch
# was received already, and its call was slow for another reason (the process descheduled, say);
# it is not counted.

HOL_BUCKET = 10  # waits.py's slow path: a wait in a bucket above this, at least 2^10 us


def note(current, iterator, yielded, wait, multi):
    """A slow call of `current`'s pass returned its batch, the `yielded`-th of the pass, after
    `wait` s: counted where later batches of other workers were ready. `multi` is torch's
    _MultiProcessingDataLoaderIter: a subclass could deal its tasks otherwise."""
    if multi is None or type(iterator) is not multi:
        return
    values = iterator.__dict__
    tasks = values.get("_task_info")
    received = values.get("_rcvd_idx")
    workers = values.get("_num_workers")
    if type(tasks) is not dict or type(received) is not int or type(workers) is not int or workers < 2:
        return
    if values.get("_in_order", True) is not True:
        return  # a later torch's in_order=False hands batches out as they come: nothing waits in line
    if received <= workers:
        return  # tasks 0 to workers - 1: each worker's first of the pass, which waited for its start
    status = values.get("_workers_status")
    worker = None
    if type(status) is list and len(status) == workers and all(flag is True for flag in status):
        worker = (received - 1) % workers
    ready = 0
    for index, info in tasks.items():
        if type(info) is not tuple or len(info) != 2 or type(index) is not int or index < received:
            continue  # still asked of its worker
        if worker is not None and type(info[0]) is int and info[0] == worker:
            return  # the same worker's later batch was in: the returned one was not waited for
        ready += 1
    if not ready:
        return
    current.blocked += 1
    current.blocked_wait += wait
    worst = current.worst
    if worst is None or wait > worst[1]:
        current.worst = (yielded, wait, ready, worker)


def fields(current):
    """The pass's head-of-line blocking, for its pass_waits event."""
    worst = current.worst
    return {"blocked_waits": current.blocked, "blocked_wait_s": current.blocked_wait,
            "worst_blocked": None if worst is None else
            {"batch": worst[0], "wait_s": worst[1], "ready": worst[2], "worker": worst[3]}}
