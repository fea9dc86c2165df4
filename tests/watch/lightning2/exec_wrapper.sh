#!/bin/bash
# A launcher as real jobs have one: it finds its own folder with a command substitution, sets
# PYTHONPATH and then execs the training program in its own place. The substitution's subshell is
# a fork of this bash that never runs exec; by the time the job ends, this same process is python.
# That subshell is no DataLoader worker, though its parent is now the training process.
set -e
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
exec "$@"
