#!/usr/bin/python3
"""Holds the docs' maps of the repository to its folders: the block that follows
`<!-- not output: the repository's folders -->` in each file given must name every top-level
folder and every folder under harness/ and watch/, and nothing that is not a folder.

A folder is a line's first word ending in "/", indented by two spaces a level (a line indented
by 12 or more continues the text of the line above); a folder's path is its name under the last
folder one level up.

    check_layout.py --root DIR FILE ...
"""

import argparse
import re
import subprocess
import sys

MARKER = "<!-- not output: the repository's folders -->"
# The top-level folders whose inner folders are its layers, and which the maps name too.
LAYERED = ("harness", "watch")
FOLDER = re.compile(r"^( *)([A-Za-z0-9_.-]+)/(?:\s|$)")


def listed_folders(text):
    """The folder paths of the first map in `text`, or None if it has none."""
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if MARKER in line)
    except StopIteration:
        return None
    folders = []
    parents = []
    inside = False
    for line in lines[start + 1:]:
        if line.startswith("```"):
            if inside:
                break
            inside = True
            continue
        match = FOLDER.match(line)
        indent = len(match.group(1)) if match else 12
        if indent >= 12 or indent % 2:
            continue
        depth = indent // 2
        if depth > len(parents):
            raise ValueError(f"the line {line.strip()!r} is indented deeper than one level below the folder above it")
        parents = parents[:depth] + [match.group(2)]
        folders.append("/".join(parents))
    return folders


def tracked_folders(root):
    """Every top-level folder holding a tracked file, and every folder under harness/ and watch/."""
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split("\n")
    folders = set()
    for path in files:
        parts = path.split("/")[:-1]
        if not parts or parts[0].startswith("."):
            continue
        folders.add(parts[0])
        if parts[0] in LAYERED:
            for depth in range(2, len(parts) + 1):
                folders.add("/".join(parts[:depth]))
    return folders


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    actual = tracked_folders(args.root)
    failures = 0
    for name in args.files:
        with open(f"{args.root}/{name}", encoding="utf-8") as doc:
            try:
                listed = listed_folders(doc.read())
            except ValueError as error:
                print(f"{name}: the map of folders is malformed: {error}.", file=sys.stderr)
                failures += 1
                continue
        if listed is None:
            print(f"{name}: no map of folders; put one after `{MARKER}`.", file=sys.stderr)
            failures += 1
            continue
        for folder in sorted(set(listed) - actual):
            print(f"{name}: the map lists {folder}/, which is not a folder of the repository; "
                  f"take it out or correct its indentation.", file=sys.stderr)
            failures += 1
        for folder in sorted(f for f in actual - set(listed)):
            print(f"{name}: the map does not list {folder}/; add it with a line saying what it "
                  f"holds.", file=sys.stderr)
            failures += 1
        if failures == 0:
            print(f"{name}: its map names all {len(set(listed))} folders.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
