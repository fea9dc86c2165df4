"""Runs one command and checks what it wrote; the ctest driver of the `plots` tests.

    check_output.py [checks...] -- COMMAND...

The files named by --png, --svg and --benchmark-json are deleted first, so a file left by an
earlier run cannot pass for this one. Then the command runs, and each check must hold:
  --exit N                the command's exit status (default 0)
  --png PATH              a PNG: its signature, at least MIN_PNG_BYTES, at least MIN_PNG_SIDE
                          pixels a side
  --svg PATH              an SVG that parses as XML and has an <svg> root with content
  --benchmark-json PATH   Google Benchmark JSON: a context and at least one benchmark whose name
                          starts with --benchmark-prefix
  --stdout-regex RE       RE matches somewhere in stdout (multiline); may repeat
  --stderr-regex RE       the same for stderr
  --absent PATH           PATH does not exist after the command (e.g. nothing written on error)
Never checks a timing. Exits 0 when all checks hold, 1 otherwise, printing every failure.
"""

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A figure with only a titled, labelled, empty axes at the scripts' size and resolution
# (13 x 7.5 in, 150 dpi) saves as about 28 KB, a blank one as 12 KB; every real figure of the
# recorded inputs is over 100 KB. 50 KB tells a drawn figure from an empty one.
MIN_PNG_BYTES = 50_000
# The smallest figure the scripts make is over 10 inches wide at 150 dpi.
MIN_PNG_SIDE = 600


def check_png(path, failures):
    try:
        with open(path, "rb") as f:
            head = f.read(24)
        size = os.path.getsize(path)
    except OSError as e:
        failures.append(f"{path}: not written ({e.strerror})")
        return
    if head[:8] != PNG_SIGNATURE:
        failures.append(f"{path}: no PNG signature (starts with {head[:8]!r})")
        return
    if head[12:16] != b"IHDR":
        failures.append(f"{path}: the first chunk is {head[12:16]!r}, not IHDR")
        return
    width, height = struct.unpack(">II", head[16:24])
    if size < MIN_PNG_BYTES:
        failures.append(f"{path}: {size} bytes, fewer than {MIN_PNG_BYTES}: an empty figure?")
    if min(width, height) < MIN_PNG_SIDE:
        failures.append(f"{path}: {width}x{height} pixels, a side under {MIN_PNG_SIDE}")


def check_svg(path, failures):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        failures.append(f"{path}: not a readable SVG ({e})")
        return
    if not root.tag.endswith("svg") or len(list(root.iter())) < 50:
        failures.append(f"{path}: root <{root.tag}> with {len(list(root.iter()))} elements: "
                        "not a drawn figure")


def check_benchmark_json(path, prefix, failures):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        failures.append(f"{path}: not readable JSON ({e})")
        return
    if not isinstance(doc.get("context"), dict):
        failures.append(f"{path}: no 'context' object")
    names = [b.get("name", "") for b in doc.get("benchmarks", [])]
    if not any(name.startswith(prefix) for name in names):
        failures.append(f"{path}: no benchmark named {prefix}...; it lists {names}")
    bad = [b["name"] for b in doc.get("benchmarks", []) if "real_time" not in b or b.get("error_occurred")]
    if bad:
        failures.append(f"{path}: benchmarks without a time or with an error: {bad}")


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print("check_output.py: put the command after '--'.", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="check_output.py")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--png", action="append", default=[])
    parser.add_argument("--svg", action="append", default=[])
    parser.add_argument("--benchmark-json", action="append", default=[])
    parser.add_argument("--benchmark-prefix", default="BM_")
    parser.add_argument("--stdout-regex", action="append", default=[])
    parser.add_argument("--stderr-regex", action="append", default=[])
    parser.add_argument("--absent", action="append", default=[])
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if not command:
        print("check_output.py: no command after '--'.", file=sys.stderr)
        return 2

    for path in args.png + args.svg + args.benchmark_json + args.absent:
        if os.path.exists(path):
            os.remove(path)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    result = subprocess.run(command, capture_output=True, text=True)
    failures = []
    if result.returncode != args.exit:
        failures.append(f"exit status {result.returncode}, expected {args.exit}")
    for path in args.png:
        check_png(path, failures)
    for path in args.svg:
        check_svg(path, failures)
    for path in args.benchmark_json:
        check_benchmark_json(path, args.benchmark_prefix, failures)
    for pattern in args.stdout_regex:
        if not re.search(pattern, result.stdout, re.MULTILINE):
            failures.append(f"stdout does not match /{pattern}/")
    for pattern in args.stderr_regex:
        if not re.search(pattern, result.stderr, re.MULTILINE):
            failures.append(f"stderr does not match /{pattern}/")
    for path in args.absent:
        if os.path.exists(path):
            failures.append(f"{path} exists, but the command should not have written it")

    if failures:
        print("command: " + " ".join(command))
        print("--- stdout ---\n" + result.stdout.rstrip())
        print("--- stderr ---\n" + result.stderr.rstrip())
        print("--- failed checks ---")
        for failure in failures:
            print("  " + failure)
        return 1
    print(f"ok: {' '.join(command[:3])} ... ({len(args.png)} PNG, {len(args.svg)} SVG, "
          f"{len(args.stdout_regex) + len(args.stderr_regex)} patterns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
