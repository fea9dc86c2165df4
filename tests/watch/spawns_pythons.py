#!/usr/bin/python3
"""A program whose Python children cannot load dlreset watch's hook: one run with -I, one given
a PYTHONPATH of its own, one run with -S. The watcher must name each and say why."""

import os
import subprocess
import sys

for args, env in (([sys.executable, "-I", "-c", "print('isolated child')"], None),
                  ([sys.executable, "-c", "print('child with its own PYTHONPATH')"],
                   dict(os.environ, PYTHONPATH="/opt/elsewhere")),
                  ([sys.executable, "-S", "-c", "print('child without site')"], None)):
    subprocess.run(args, env=env, check=True)
