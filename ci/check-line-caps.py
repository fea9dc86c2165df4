#!/usr/bin/python3
"""Fails when a source file passes its line cap.

A file that grows past a few hundred lines has taken on a second concern, and the next reader
pays for it. The caps:
- 450 lines for every tracked C++ file (.h, .cpp) outside tests/, whose suites are lists of
  cases;
- 300 lines for the watcher's Python hook (watch/hook/), which runs inside the user's program
  and must stay easy to audit.

    ci/check-line-caps.py [--root DIR]

Exit status 0 when every file is within its cap; 1 with one line per file that passes it
("file: N lines, over the cap of C; split it by concern").
"""

import argparse
import subprocess
import sys

CPP_CAP = 450
HOOK_CAP = 300


def cap_of(path):
    """The line cap of a tracked file, or None where no cap applies."""
    if path.startswith("tests/"):
        return None
    if path.endswith((".h", ".cpp")):
        return CPP_CAP
    if path.startswith("watch/hook/") and path.endswith(".py"):
        return HOOK_CAP
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="the repository's root (default: .)")
    args = parser.parse_args()
    files = subprocess.run(["git", "-C", args.root, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    over = []
    checked = 0
    for path in files:
        cap = cap_of(path)
        if cap is None:
            continue
        checked += 1
        with open(f"{args.root}/{path}", encoding="utf-8") as source:
            lines = sum(1 for _ in source)
        if lines > cap:
            over.append(f"{path}: {lines} lines, over the cap of {cap}; split it by concern")
    for line in over:
        print(line, file=sys.stderr)
    if over:
        return 1
    print(f"check-line-caps: {checked} files within their caps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
