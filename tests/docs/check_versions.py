#!/usr/bin/python3
"""Checks that dlreset names one version everywhere a release is written down.

The version lives in three places: `project(dlreset VERSION x.y.z` in CMakeLists.txt (the
binary's --version and the packages' file names), the first `dlreset (x.y.z)` entry of
packaging/changelog (the Debian changelog the packages install), and the first version heading
of CHANGELOG.md (the changelog users read). Each is edited by hand, so a release can bump one and
forget another; this check fails then. It also requires the two changelogs to list the same
releases, so neither loses an entry the other has.

    check_versions.py --root DIR

Exit status 0 when everything agrees; 1 with one line per mismatch, naming the file, both
versions and the fix.
"""

import argparse
import collections
import pathlib
import re
import sys

CMAKE = "CMakeLists.txt"
DEBIAN = "packaging/changelog"
USERS = "CHANGELOG.md"

# What each file's version looks like, and how to set it there.
PATTERNS = {
    CMAKE: re.compile(r"project\(\s*dlreset\s+VERSION\s+(\d[\w.~+-]*)"),
    DEBIAN: re.compile(r"^dlreset \(([^)\s]+)\)", re.MULTILINE),
    USERS: re.compile(r"^#+\s+\[?v?(\d+\.\d[\w.~+-]*?)\]?(?=\s|$)", re.MULTILINE),
}
FIXES = {
    CMAKE: "write `VERSION {v}` in CMakeLists.txt's `project(dlreset ...)`",
    DEBIAN: "put a `dlreset ({v}) unstable; urgency=medium` entry on top of packaging/changelog",
    USERS: "put a `## {v} (YYYY-MM-DD)` section on top of CHANGELOG.md",
}


def versions(root, name):
    """Every version the file names, in order; None when the file cannot be read."""
    try:
        text = (root / name).read_text(encoding="utf-8")
    except OSError:
        return None
    return PATTERNS[name].findall(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=pathlib.Path, help="the repository root")
    root = parser.parse_args().root

    problems = []
    found = {name: versions(root, name) for name in (USERS, DEBIAN, CMAKE)}
    first = {}
    for name, listed in found.items():
        if not listed:
            why = "cannot be read" if listed is None else "names no version"
            problems.append(f"{name}: {why}; fix: {FIXES[name].format(v='x.y.z')}")
        else:
            first[name] = listed[0]

    # The version most files agree on is the release; each file that differs is the one to fix
    # (a tie goes to CHANGELOG.md, where a release is written first).
    if first:
        release = collections.Counter(first.values()).most_common(1)[0][0]
        agreeing = [name for name, version in first.items() if version == release]
        for name, version in first.items():
            if version != release:
                say = "says" if len(agreeing) == 1 else "say"
                problems.append(f"{name}: version {version}, but {' and '.join(agreeing)} {say} {release}; "
                                f"fix: {FIXES[name].format(v=release)}, or bring the others to {version}")

    if found[USERS] and found[DEBIAN]:
        for has, lacks in ((DEBIAN, USERS), (USERS, DEBIAN)):
            for version in found[has]:
                if version not in found[lacks]:
                    problems.append(f"{lacks}: no entry for {version}, which {has} has; "
                                    f"fix: add one for {version} to {lacks}, or drop it from {has}")

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"versions agree: {first[USERS]} in {', '.join(first)}; both changelogs list "
          f"{', '.join(found[USERS])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
