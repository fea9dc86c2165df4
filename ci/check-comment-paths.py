#!/usr/bin/python3
"""Fails when a comment names a file of the repository that is not there.

A comment that says where something lives (`see worker/transport/shared_slots.h`) rots when the
file moves, and nothing else notices. Every path in a comment of a tracked C++, Python, shell or
CMake file must name a file or folder, read from the repository's root, from the commenting
file's folder or from any folder above it. Not checked: #include lines (the compiler checks
them), paths of the mirrored upstream code (a path followed by `@ <version>`, or under torch/,
pytorch_lightning/ and the other upstream roots below), system headers, and what the scripts
write (out/, OUTDIR/) or install (include/, and the installed headers' dlreset/).

    ci/check-comment-paths.py [--root DIR]

Exit status 0 when every path is there; 1 with one line per missing one ("file:line: names
PATH, which is not in the repository; fix the path or drop it").
"""

import argparse
import os
import re
import subprocess
import sys

SOURCES = re.compile(r"(\.(h|cpp|py|sh|cmake)|CMakeLists\.txt)$")
PATH = re.compile(r"(?<![\w/.:-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\.(?:h|cpp|py|sh|md|txt|cmake|json))\b(\s*@)?")
COMMENT = re.compile(r"(//|#(?!include)|^\s*\*)")
# The first folder of a path that is not this repository's: upstream code, system and library
# headers, and what the scripts write or install.
ELSEWHERE = {"torch", "pytorch_lightning", "lightning", "ATen", "c10", "test", "transformers", "src", "sys",
             "gtest", "gmock", "fmt", "benchmark", "CLI", "nlohmann", "boost", "linux", "multiprocessing",
             "utilities", "trainer", "loops", "out", "OUTDIR", "include", "dlreset"}


def found(root, source, path):
    folder = os.path.dirname(source)
    while True:
        if os.path.exists(os.path.join(root, folder, path)):
            return True
        if not folder:
            return False
        folder = os.path.dirname(folder)


def missing_paths(root):
    """The lines that name a missing path, and how many paths were checked."""
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    missing = []
    checked = 0
    for source in filter(SOURCES.search, files):
        with open(os.path.join(root, source), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                comment = COMMENT.search(line)
                if comment is None or line.lstrip().startswith("#include"):
                    continue
                for match in PATH.finditer(line, comment.start()):
                    path = match.group(1)
                    if match.group(2) or path.split("/")[0] in ELSEWHERE:
                        continue
                    checked += 1
                    if not found(root, source, path):
                        missing.append(f"{source}:{number}: names {path}, which is not in the repository; "
                                       f"fix the path or drop it")
    return missing, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    missing, checked = missing_paths(parser.parse_args().root)
    if missing:
        sys.stderr.write("".join(line + "\n" for line in missing))
        return 1
    print(f"check-comment-paths: all {checked} paths named in comments are there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
