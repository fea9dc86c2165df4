"""What every dlreset figure shares: the look, the colour of each variant, saving, the options
every script takes, and reading dlreset's JSON.

The figures are meant to be projected in a workshop, so fonts are large and lines thick, and
every variant keeps one colour (from Okabe and Ito's colour-blind-safe palette), one marker and
one line style in every plot, so that it can be told apart in grey too.
"""

import json
import os

import matplotlib

matplotlib.use("Agg")  # no display: the scripts run in CI and over ssh

import matplotlib.pyplot as plt  # noqa: E402  (must follow the backend choice)

# Okabe & Ito, "Color Universal Design" (2008): distinguishable with every common form of
# colour blindness.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

VARIANTS = ("buggy", "fixed", "workaround", "vanilla")

# The description `dlreset run` gives each variant, shortened for legends.
VARIANT_LABELS = {
    "buggy": "buggy (Lightning 1.5.0)",
    "fixed": "fixed (Lightning 1.5.1)",
    "workaround": "workaround (1.5.0, reset() removed)",
    "vanilla": "vanilla (plain loop, no Lightning)",
}

VARIANT_STYLES = {
    "buggy": {"color": OKABE_ITO["vermillion"], "marker": "o", "linestyle": "-"},
    "fixed": {"color": OKABE_ITO["bluish_green"], "marker": "s", "linestyle": "-"},
    "workaround": {"color": OKABE_ITO["reddish_purple"], "marker": "^", "linestyle": "--"},
    "vanilla": {"color": OKABE_ITO["blue"], "marker": "D", "linestyle": ":"},
}

START_METHODS = ("thread", "fork", "spawn")

# Google Benchmark's BM_Fit encodes variant and start method as integers (bench/fit_bench.cpp).
BENCH_VARIANTS = {0: "buggy", 1: "fixed", 2: "workaround", 3: "vanilla"}
BENCH_START_METHODS = {0: "thread", 1: "fork", 2: "spawn"}

# Sized for a projector: on a 13-inch-wide figure saved at PNG_DPI (about 1950 pixels, a
# projector's width), 16 pt text is about 33 pixels tall and a 3 pt line about 6 pixels wide.
RC = {
    "font.size": 16,
    "axes.titlesize": 18,
    "axes.labelsize": 17,
    "xtick.labelsize": 15,
    "ytick.labelsize": 15,
    "legend.fontsize": 15,
    "figure.titlesize": 20,
    "lines.linewidth": 3.0,
    "lines.markersize": 10,
    "axes.linewidth": 1.2,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 1.0,
    "errorbar.capsize": 6,
    "savefig.bbox": "tight",
    "svg.fonttype": "none",  # keep text as text in the SVG, so it can be edited and searched
}

PNG_DPI = 150


def apply():
    """Sets the shared look; call before creating a figure."""
    plt.rcParams.update(RC)


def variant_style(variant):
    """Colour, marker and line style of a variant; an unknown name gets grey, not an error."""
    return VARIANT_STYLES.get(variant, {"color": "#777777", "marker": "x", "linestyle": "-."})


def variant_label(variant):
    return VARIANT_LABELS.get(variant, variant)


def variant_order(variant):
    """Sort key that keeps buggy, fixed, workaround, vanilla in that order in every legend."""
    return (VARIANTS.index(variant), variant) if variant in VARIANTS else (len(VARIANTS), variant)


def add_figure_arguments(parser, title):
    """--out and --title, as every figure script takes them; `title` is the script's default."""
    parser.add_argument("--out", required=True, metavar="PREFIX", help="writes PREFIX.png and PREFIX.svg")
    parser.add_argument("--title", default=title, help="the figure's title (default: %(default)s)")


def save(fig, prefix):
    """Writes PREFIX.png and PREFIX.svg and returns their paths."""
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    paths = []
    for extension, kwargs in (("png", {"dpi": PNG_DPI}), ("svg", {})):
        path = f"{prefix}.{extension}"
        fig.savefig(path, **kwargs)
        paths.append(path)
    plt.close(fig)
    return paths


class InputError(Exception):
    """An input file that cannot be used; the message names the file and what to do."""


# What each of dlreset's JSON outputs calls itself, and the newest version these scripts read.
SCHEMAS = {
    "dlreset.run": 2,     # dlreset run --json (2: data_time, where the time went)
    "dlreset.events": 2,  # dlreset run --events (1), dlreset watch --events (2: resets it saw)
    "dlreset.sweep": 1,   # plots/sweep.py
    "dlreset.watch": 3,   # dlreset watch --json (2: the Python hook's events and the checks; 3: the input wait)
}


def check_schema(doc, path, accepted, rejection):
    """Raises InputError unless `doc` is one of the `accepted` schemas in a version we read.

    `rejection` is the script's own sentence for a file it cannot use; the schema found is
    added to it.

    A file without a schema field was written before dlreset named its outputs; it is read as
    before, and the caller's own field checks decide. Google Benchmark's JSON has none either.
    """
    if not isinstance(doc, dict) or "schema" not in doc:
        return
    name, version = doc.get("schema"), doc.get("schema_version")
    if name not in accepted:
        raise InputError(f"{rejection} (It is a {name} file.)")
    if not isinstance(version, int) or version > SCHEMAS[name]:
        raise InputError(f"'{path}' is {name} version {version}, newer than the version "
                         f"{SCHEMAS[name]} this script reads; use the plots/ of the dlreset that "
                         "wrote it.")


def load_checked(path, accepted, rejection):
    """The JSON document in `path`, refused with InputError unless it is one of the `accepted`
    schemas (check_schema, with the script's `rejection`)."""
    doc = load_json(path)
    check_schema(doc, path, accepted, rejection)
    return doc


def run_reports(path, unusable, field):
    """The runs in `path`: a sweep's (plots/sweep.py), or the one report `dlreset run --json`
    wrote, known by `field`, which the script reads; InputError with the script's `unusable`
    sentence for anything else."""
    doc = load_checked(path, ("dlreset.sweep", "dlreset.run"), unusable)
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
        return doc["runs"]
    if isinstance(doc, dict) and "variant" in doc and field in doc:
        return [doc]
    raise InputError(unusable)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror}; check the path.") from e
    except json.JSONDecodeError as e:
        raise InputError(
            f"'{path}' is not valid JSON ({e.msg} at line {e.lineno}); "
            "pass a file written by dlreset run, plots/sweep.py or dlreset_bench."
        ) from e
