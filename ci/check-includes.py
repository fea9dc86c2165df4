#!/usr/bin/python3
"""Fails when a C++ file uses a standard header's names without including that header.

A standard library includes other headers for its own needs, and which ones changes from release
to release: GCC 13's libstdc++ stopped pulling <cstdint> into <string>, and files that used
std::int64_t through it stopped compiling. This check holds every file to what it uses: each
name in the table below needs its header in the file itself, or, for a .cpp, in the header of
the same name beside it (its own interface, which it always includes).

    ci/check-includes.py [--root DIR] [--fix] [PATH ...]   (default: every tracked .h and .cpp)

--fix adds each missing #include among the file's other standard ones, in order.

Exit status 0 when every file includes what it uses, 1 with one line per miss otherwise
("file:line: std::int64_t needs #include <cstdint>").
"""

import argparse
import os
import re
import subprocess
import sys

# Names, as they appear in code, and the header that declares them. Unqualified C names count
# where the code uses them so (int64_t, size_t needs <cstddef> or a C header, SIZE_MAX).
HEADERS = {
    "cstdint": [r"\bstd::u?int(8|16|32|64)_t\b", r"\bstd::u?intptr_t\b", r"(?<![:\w])u?int(8|16|32|64)_t\b",
                r"(?<![:\w])u?intptr_t\b", r"\b(U?INT(8|16|32|64)|SIZE|UINTPTR)_MAX\b"],
    "cstddef": [r"\bstd::(size_t|ptrdiff_t|nullptr_t|byte|max_align_t)\b"],
    "string": [r"\bstd::(string|to_string|stoi|stol|stoll|stoul|stoull|stod|getline)\b"],
    "string_view": [r"\bstd::string_view\b"],
    "vector": [r"\bstd::vector\b"],
    "map": [r"\bstd::(map|multimap)\b"],
    "set": [r"\bstd::(set|multiset)\b"],
    "unordered_map": [r"\bstd::unordered_map\b"],
    "unordered_set": [r"\bstd::unordered_set\b"],
    "deque": [r"\bstd::deque\b"],
    "array": [r"\bstd::array\b"],
    "optional": [r"\bstd::(optional|nullopt)\b"],
    "memory": [r"\bstd::(unique_ptr|shared_ptr|weak_ptr|make_unique|make_shared|allocator_traits)\b"],
    "functional": [r"\bstd::(function|hash)\b"],
    "utility": [r"\bstd::(pair|make_pair|move|forward|swap|exchange|declval)\b"],
    "tuple": [r"\bstd::(tuple|make_tuple|tie|get)\b(?!_)"],
    "algorithm": [r"\bstd::(sort|stable_sort|find|find_if|count|count_if|min|max|min_element|max_element|"
                  r"any_of|all_of|none_of|copy|fill|reverse|unique|remove_if|lower_bound|upper_bound|"
                  r"equal|transform|clamp|adjacent_find|partition)\b"],
    "numeric": [r"\bstd::(accumulate|iota|gcd|partial_sum)\b"],
    "atomic": [r"\bstd::atomic\b"],
    "mutex": [r"\bstd::(mutex|lock_guard|unique_lock|scoped_lock)\b"],
    "condition_variable": [r"\bstd::condition_variable\b"],
    "thread": [r"\bstd::(thread|this_thread)\b"],
    "chrono": [r"\bstd::chrono\b"],
    "stdexcept": [r"\bstd::(runtime_error|logic_error|invalid_argument|out_of_range|length_error|range_error)\b"],
    "exception": [r"\bstd::(exception_ptr|current_exception|rethrow_exception|make_exception_ptr)\b"],
    "sstream": [r"\bstd::(stringstream|ostringstream|istringstream)\b"],
    "fstream": [r"\bstd::(ifstream|ofstream|fstream)\b"],
    "limits": [r"\bstd::numeric_limits\b"],
    "cstring": [r"\bstd::(strlen|strcmp|strncmp|memcpy|memset|memcmp|strerror|strchr|strrchr)\b"],
    "cstdlib": [r"\bstd::(getenv|strtol|strtoul|strtoll|strtoull|strtod|abs|exit|abort|atoi|atol)\b"],
    "cmath": [r"\bstd::(sqrt|pow|isfinite|isnan|floor|ceil|round|lround|log|exp|fabs|llround)\b"],
    "filesystem": [r"\bstd::filesystem\b"],
    "regex": [r"\bstd::(regex|smatch|regex_search|regex_match|sregex_iterator)\b"],
    "type_traits": [r"\bstd::(is_same_v|enable_if_t|decay_t|is_integral_v|remove_reference_t|conditional_t)\b"],
}

# A header that provides another's names by its standard's own words, not by accident.
ALSO_PROVIDED_BY = {
    "string_view": {"string"},
    "cstddef": {"cstdio", "cstdlib", "cstring", "ctime", "cwchar", "stddef.h", "string.h", "stdlib.h"},
    "cstdint": {"stdint.h", "inttypes.h", "cinttypes"},
    "cstring": {"string.h"},
    "cstdlib": {"stdlib.h"},
    "cmath": {"math.h"},
    "utility": {"map", "tuple"},  # std::pair is defined for them by <utility>, which they include
    "iosfwd": {"iostream", "ostream", "istream"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
LINE_COMMENT = re.compile(r"//.*$")
STRING = re.compile(r'"(\\.|[^"\\])*"')


def tracked_sources(root):
    files = subprocess.run(["git", "-C", root, "ls-files", "*.h", "*.cpp"], check=True, capture_output=True,
                           text=True).stdout.split()
    return [f for f in files if not f.startswith("tests/fuzz/corpus")]


def includes_of(path):
    found = set()
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                match = INCLUDE.match(line)
                if match:
                    found.add(match.group(1))
    except OSError:
        pass
    return found


def code_lines(path):
    """The file's lines without comments and string literals, numbered from 1."""
    in_block = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line
            if in_block:
                end = text.find("*/")
                if end < 0:
                    continue
                text = text[end + 2:]
                in_block = False
            while "/*" in text:
                start = text.find("/*")
                end = text.find("*/", start + 2)
                if end < 0:
                    text = text[:start]
                    in_block = True
                    break
                text = text[:start] + text[end + 2:]
            if INCLUDE.match(text):
                continue
            yield number, LINE_COMMENT.sub("", STRING.sub('""', text))


def provides(header, included):
    return header in included or bool(ALSO_PROVIDED_BY.get(header, set()) & included)


def check(root, path):
    full = os.path.join(root, path)
    included = includes_of(full)
    stem, ext = os.path.splitext(full)
    if ext == ".cpp":
        included |= includes_of(stem + ".h")
    patterns = {header: [re.compile(p) for p in expressions] for header, expressions in HEADERS.items()}
    misses = []
    reported = set()
    for number, text in code_lines(full):
        for header, expressions in patterns.items():
            if header in reported or provides(header, included):
                continue
            for expression in expressions:
                match = expression.search(text)
                if match:
                    misses.append(f"{path}:{number}: {match.group(0)} needs #include <{header}>")
                    reported.add(header)
                    break
    return misses


STANDARD = re.compile(r"^\s*#\s*include\s*<([a-z_]+)>\s*$")


def add_includes(full, headers):
    """Puts `#include <h>` for each of `headers` among the file's standard includes, sorted."""
    with open(full, encoding="utf-8") as f:
        lines = f.read().split("\n")
    standard = [i for i, line in enumerate(lines) if STANDARD.match(line)]
    if standard:
        block_start = block_end = standard[0]
        while block_end + 1 < len(lines) and STANDARD.match(lines[block_end + 1]):
            block_end += 1
        names = sorted(set(STANDARD.match(lines[i]).group(1) for i in range(block_start, block_end + 1)) | set(headers))
        lines[block_start:block_end + 1] = [f"#include <{name}>" for name in names]
    else:
        angle = [i for i, line in enumerate(lines) if INCLUDE.match(line) and "<" in line]
        quote = [i for i, line in enumerate(lines) if INCLUDE.match(line)]
        anchor = angle[-1] if angle else quote[0] if quote else next(
            (i for i, line in enumerate(lines) if line.startswith("#pragma once")), 0)
        block = [f"#include <{name}>" for name in sorted(headers)]
        lines[anchor + 1:anchor + 1] = [""] + block + ([""] if not angle and lines[anchor + 1].strip() else [])
    with open(full, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--fix", action="store_true", help="add the missing includes")
    parser.add_argument("paths", nargs="*", help="files to check, relative to the root (default: every tracked one)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    paths = args.paths or tracked_sources(root)
    misses = [miss for path in paths for miss in check(root, path)]
    if args.fix and misses:
        by_file = {}
        for miss in misses:
            path = miss.split(":", 1)[0]
            by_file.setdefault(path, []).append(miss.rsplit("<", 1)[1].rstrip(">"))
        for path, headers in by_file.items():
            add_includes(os.path.join(root, path), headers)
        print(f"check-includes: added {len(misses)} includes to {len(by_file)} files")
        return 0
    for miss in misses:
        print(miss)
    if misses:
        print(f"check-includes: {len(misses)} uses of a standard header's names without its #include; add them "
              "(a file must not count on another header to bring them in).", file=sys.stderr)
        return 1
    print(f"check-includes: {len(paths)} files include what they use of the standard library")
    return 0


if __name__ == "__main__":
    sys.exit(main())
