#!/bin/sh
# A wrapper script as many training jobs have: it forks subshells of its own (a pipeline, a
# command substitution, a subshell) before it runs the training program, none of which is a
# DataLoader worker.
set -e
started=$(date +%s)
( echo "wrapper: starting at $started" ) | cat
"$@"
echo "wrapper: done"
