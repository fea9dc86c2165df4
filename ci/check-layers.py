#!/usr/bin/python3
"""Holds the code's layers to their order: an include never runs back up a layer, and no files
include each other in a circle.

The layers, each a folder that may include only itself and the folders before it in its list:
- watch/: hook/, tree/, analysis/, report/, cli/ (docs/design.md §4);
- harness/data/: core/ never includes the torch layer above it, and core/worker/transport/
  (what a process worker and the main process share) never the worker layer above it.
A circle of includes, anywhere in the tree, means two files cannot be read one without the other.

    ci/check-layers.py [--root DIR]

Exit status 0 when the layers hold, 1 with one line per include that runs back up ("file: includes
x, a layer above it; move what it needs down") and per circle.
"""

import argparse
import os
import re
import subprocess
import sys

LAYERS = {
    "watch": ["hook", "tree", "analysis", "report", "cli"],
}
# Folders that never include the folder they sit in, outside themselves: (below, above, what
# the folder above is).
BELOW = [
    ("harness/data/core/", "harness/data/", "the torch layer above core/"),
    ("harness/data/core/worker/transport/", "harness/data/core/worker/", "the worker layer above transport/"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def layer_of(path):
    """(top folder, index of its layer) for a path in a layered folder, else None."""
    parts = path.split("/")
    order = LAYERS.get(parts[0])
    if order is None or len(parts) < 3 or parts[1] not in order:
        return None
    return parts[0], order.index(parts[1])


def circles(graph):
    """The strongly connected sets of more than one file (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    root = parser.parse_args().root
    files = subprocess.run(["git", "-C", root, "ls-files", "*.h", "*.cpp"], check=True, capture_output=True,
                           text=True).stdout.split()
    known = set(files)
    graph = {}
    problems = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as source:
            included = [name for name in INCLUDE.findall(source.read()) if name in known]
        graph[path] = included
        mine = layer_of(path)
        for name in included:
            theirs = layer_of(name)
            for below, above, words in BELOW:
                if path.startswith(below) and name.startswith(above) and not name.startswith(below):
                    problems.append(f"{path}: includes {name}, {words}; move what it needs down")
            if mine and theirs and mine[0] == theirs[0] and theirs[1] > mine[1]:
                problems.append(f"{path}: includes {name}, a layer above it; move what it needs down")
    for members in circles(graph):
        problems.append("these files include each other in a circle: " + ", ".join(members))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"check-layers: {len(files)} files, every include runs down a layer and none in a circle")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
