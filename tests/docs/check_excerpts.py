#!/usr/bin/python3
"""Holds the docs to the program: every excerpt of command output is run again and compared, and
every flag a doc quotes must be one the command's --help lists.

An excerpt is a fenced block that follows a comment naming the command that printed it:

    <!-- output of: build/bin/dlreset-watch --no-live -- /usr/bin/python3 x.py 2>&1 | tail -n 5 -->
    ```
    ...
    ```

The command runs with /bin/sh from the repository root (its stdout is compared; it says itself
whether stderr joins it), and its output must match the block line by line, loosely where runs
differ:
- every number in the block stands for any number (times, pids, CPU seconds), but a traceback's
  line number (`File "...", line N`), which is the point of a traceback and the same at every
  run, must be the one printed;
- "..." inside a line stands for any text, and a line that is only "..." for any lines, none
  included (an abridged traceback);
- trailing spaces do not count.
A block that follows `<!-- output of: ... -->` with `lines: N` at its end (`<!-- output of: CMD;
lines: 3 -->`) is compared with any N consecutive lines of the output.

Every fenced block without a language (or marked text or console) is taken for command output
and needs such a comment; one that is not output says so with `<!-- not output: what it is -->`
(a file's format, say).

Flags: in fenced sh/console blocks and in `inline code`, each `dlreset SUBCOMMAND ... --flag` and
`dlreset-watch ... --flag` must name a flag of that command's --help.

    check_excerpts.py --root DIR [--bin DIR] [--flags-only] [FILE ...]
"""

import argparse
import os
import re
import subprocess
import sys
import time

MARKER = re.compile(r"<!--\s*output of:\s*(.*?)\s*-->", re.S)
FENCE = re.compile(r"^(\s*)```")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
TIMEOUT_S = 600


def blocks_after_markers(text):
    """(command, window or None, block lines, line number) for each marked excerpt."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        match = MARKER.search(lines[i])
        if not match:
            i += 1
            continue
        start = i
        # The comment may span lines.
        comment = lines[i]
        while "-->" not in comment and i + 1 < len(lines):
            i += 1
            comment += "\n" + lines[i]
        command = MARKER.search(comment).group(1).strip()
        window = None
        window_match = re.search(r";\s*lines:\s*(\d+)\s*$", command)
        if window_match:
            window = int(window_match.group(1))
            command = command[:window_match.start()].strip()
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            i += 1
        indent = FENCE.match(lines[i]).group(1) if i < len(lines) else ""
        i += 1
        block = []
        while i < len(lines) and not FENCE.match(lines[i]):
            block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        found.append((command, window, block, start + 1))
        i += 1
    return found


def line_pattern(expected):
    """A regular expression for one expected line."""
    pieces = []
    for part in re.split(r"(\.\.\.)", expected.rstrip()):
        if part == "...":
            pieces.append(".*")
            continue
        last = 0
        for number in NUMBER.finditer(part):
            pieces.append(re.escape(part[last:number.start()]))
            exact = part[:number.start()].endswith('", line ')
            pieces.append(re.escape(number.group()) if exact else r"\d+(?:\.\d+)?")
            last = number.end()
        pieces.append(re.escape(part[last:]))
    return re.compile("^" + "".join(pieces) + r"\s*$")


def matches(expected, actual):
    """Whether the actual lines match the expected ones, "..." lines standing for any lines."""
    patterns = [None if line.strip() == "..." else line_pattern(line) for line in expected]
    memo = {}

    def match_from(e, a):
        key = (e, a)
        if key in memo:
            return memo[key]
        if e == len(patterns):
            result = a == len(actual)
        elif patterns[e] is None:
            result = any(match_from(e + 1, b) for b in range(a, len(actual) + 1))
        else:
            result = a < len(actual) and bool(patterns[e].match(actual[a])) and match_from(e + 1, a + 1)
        memo[key] = result
        return result

    return match_from(0, 0)


def first_difference(expected, actual):
    for number, line in enumerate(expected):
        if line.strip() == "...":
            return "(an abridged block: see the whole output above)"
        if number >= len(actual):
            return f"expected line {number + 1} '{line}', but the output has only {len(actual)} lines"
        if not line_pattern(line).match(actual[number]):
            return f"line {number + 1}: expected '{line}'\n        got '{actual[number]}'"
    return f"the output has {len(actual)} lines, the excerpt {len(expected)}"


def check_excerpts(root, path, env):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    failures = 0
    for command, window, block, line in blocks_after_markers(text):
        began = time.monotonic()
        result = subprocess.run(["/bin/sh", "-c", command], cwd=root, env=env, capture_output=True, text=True,
                                timeout=TIMEOUT_S)
        actual = result.stdout.rstrip("\n").split("\n") if result.stdout.strip() else []
        if window is not None:
            ok = any(matches(block, actual[start:start + window]) for start in range(0, max(1, len(actual) - window + 1)))
        else:
            ok = matches(block, actual)
        if ok:
            print(f"ok ({time.monotonic() - began:.1f} s): {path}:{line}: {command}")
            continue
        failures += 1
        print(f"FAIL: {path}:{line}: the excerpt is not what `{command}` prints now (exit {result.returncode}):")
        print("  " + first_difference(block, actual))
        print("  --- it printed:")
        for actual_line in actual[:80]:
            print("  | " + actual_line)
        if result.stderr.strip():
            print("  --- stderr:")
            for err_line in result.stderr.strip().split("\n")[-10:]:
                print("  ! " + err_line)
    return failures


COMMAND_LINE = re.compile(r"(?:^|[\s`(])(?:\S*/)?(dlreset-watch|dlreset)\s+([^`\n]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
SUBCOMMANDS = ("run", "demo", "watch")
# Flags --help does not list on purpose: the build writes the man page and completion with them.
HIDDEN_FLAGS = {"--man-page", "--bash-completion"}


def help_flags(binary_dir, program, subcommand):
    binary = os.path.join(binary_dir, program)
    argv = [binary] + ([subcommand] if subcommand else []) + ["--help"]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    return set(FLAG.findall(text))


def quoted_commands(text):
    """(program, subcommand or None, flags, line) for each command line a doc quotes."""
    in_shell = False
    for number, line in enumerate(text.split("\n"), 1):
        fence = re.match(r"^\s*```\s*(\w*)", line)
        if fence:
            in_shell = not in_shell and fence.group(1) in ("sh", "console", "bash", "shell")
            continue
        candidates = [line] if in_shell else re.findall(r"`([^`]*)`", line)
        for candidate in candidates:
            for match in COMMAND_LINE.finditer(" " + candidate):
                program, rest = match.group(1), match.group(2)
                # What follows a lone -- belongs to the watched program.
                rest = rest.split(" -- ")[0]
                words = rest.split()
                subcommand = words[0] if program == "dlreset" and words and words[0] in SUBCOMMANDS else None
                if program == "dlreset" and subcommand is None and not rest.startswith("--"):
                    continue  # prose: "dlreset rebuilds ...", "dlreset's DataLoader"
                flags = [flag for flag in FLAG.findall(rest)]
                if flags:
                    yield program, subcommand, flags, number


def check_flags(root, path, binary_dir, cache, checked):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    failures = 0
    for program, subcommand, flags, line in quoted_commands(text):
        key = (program, subcommand)
        if key not in cache:
            cache[key] = help_flags(binary_dir, program, subcommand)
        checked[0] += len(flags)
        for flag in flags:
            if flag not in cache[key] and flag not in HIDDEN_FLAGS:
                failures += 1
                name = program + (" " + subcommand if subcommand else "")
                print(f"FAIL: {path}:{line}: `{name}` has no flag {flag} in its --help")
    return failures


def unmarked_blocks(root, path):
    """Fenced blocks that look like output (no language, text, console) with no comment naming
    their command or saying what they are."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    failures = 0
    inside = False
    for number, line in enumerate(lines):
        fence = re.match(r"^\s*```\s*(\S*)", line)
        if not fence:
            continue
        if inside:
            inside = False
            continue
        inside = True
        if fence.group(1) not in ("", "text", "console"):
            continue
        before = "\n".join(lines[max(0, number - 6):number])
        last_comment = before.rfind("<!--")
        if last_comment >= 0 and ("output of:" in before[last_comment:] or "not output:" in before[last_comment:]):
            continue
        failures += 1
        print(f"FAIL: {path}:{number + 1}: a block of output with no `<!-- output of: COMMAND -->` before it "
              "(or `<!-- not output: ... -->` if it is not output)")
    return failures


def markdown_files(root):
    files = subprocess.run(["git", "-C", root, "ls-files", "README.md", "docs/*.md", "CHANGELOG.md"],
                           capture_output=True, text=True, check=True).stdout.split()
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--bin", help="where dlreset and dlreset-watch are (default ROOT/build/bin)")
    parser.add_argument("--flags-only", action="store_true", help="check the quoted flags, run no excerpt")
    parser.add_argument("files", nargs="*", help="markdown files, relative to the root (default: README.md, docs/*.md)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    binary_dir = os.path.abspath(args.bin or os.path.join(root, "build", "bin"))
    env = dict(os.environ)
    env["PATH"] = binary_dir + ":" + env.get("PATH", "")
    files = args.files or markdown_files(root)
    failures = 0
    cache = {}
    checked = [0]
    for path in files:
        failures += unmarked_blocks(root, path)
        failures += check_flags(root, path, binary_dir, cache, checked)
        if not args.flags_only:
            failures += check_excerpts(root, path, env)
    if failures:
        print(f"check_excerpts: {failures} excerpts or flags no longer match the program; run the command "
              "named above the excerpt and paste what it prints now, or fix the doc's flag.", file=sys.stderr)
        return 1
    print(f"check_excerpts: {len(files)} files agree with the program ({checked[0]} quoted flags)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
