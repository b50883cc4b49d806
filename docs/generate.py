"""Regenerate every figure in README.md and docs/ that the code produces.

Run from the repository root after any change to the model::

    python docs/generate.py           # rewrite the generated text in place
    python docs/generate.py --check   # exit 1 and name each stale region, write nothing

Two kinds of generated text:

- **Regions** between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` in
  README.md or any docs/*.md: the text between the two markers is replaced by what
  `REGIONS[NAME]` returns (tables from `nerframe.analyze`, `nerframe.validate`, …). To
  generate a new table, add its function to `REGIONS` and its markers to a document.
- **README examples**: the README's ``python`` blocks are doctests that share one
  namespace and run in a fresh temporary folder. An example whose output differs
  from the text gets the actual output written in its place; an example that raises
  stops the run with the README's line number.

``tests/test_docs.py`` regenerates everything in memory and fails when the files
differ, so a figure in the docs cannot drift from the code. Everything here is
deterministic: the same code gives the same text, byte for byte.
"""

from __future__ import annotations

import argparse
import contextlib
import doctest
import functools
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = {"benchmarks": "benchmarks/performance_doc.py"}
"""Regions another script writes (from data this one does not have): left as they are."""


def documents(root: Path = ROOT) -> list[str]:
    """The README and every document under docs/, relative to `root`: any of them may
    hold generated regions."""
    return ["README.md", *(p.relative_to(root).as_posix() for p in sorted(root.glob("docs/*.md")))]


_REGION = re.compile(
    r"(<!-- generated: (?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)
_BLOCK = re.compile(r"(```python\n)(.*?)(```)", re.S)
_MINUS = "\N{MINUS SIGN}"


def _sig(value: float | None, digits: int = 3) -> str:
    """A figure to `digits` significant digits, thousands separated; '—' for none.

    >>> _sig(62.426), _sig(0.0218134), _sig(12345.6), _sig(None)
    ('62.4', '0.0218', '12,346', '—')
    """
    if value is None:
        return "—"
    if abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _percent(value: float) -> str:
    """A signed percentage with a real minus sign.

    >>> _percent(-0.3952), _percent(0.0)
    ('−39.5 %', '+0.0 %')
    """
    return f"{100 * value:+.1f} %".replace("-", _MINUS)


@functools.cache
def _native(model: str) -> list[dict[str, Any]]:
    """The summary rows of every built-in pipeline on its own accelerators."""
    import nerframe

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "native"
        result = nerframe.analyze(None, "native", output=out, report=False, model=model)
    return list(result.summary.iter_rows(named=True))


def native_pairs() -> str:
    """Every built-in pipeline on its own accelerators, default workloads."""
    lines = [
        "| pipeline on accelerator | fps | energy/frame (J) | power (W) | area (mm²) "
        "| bottleneck |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in _native("realistic"):
        area = "not published" if row["area_mm2"] is None else _sig(row["area_mm2"])
        lines.append(
            f"| {row['graph']} on {row['accelerator']} | {_sig(row['fps'])} | "
            f"{_sig(row['energy_per_frame_j'])} | {_sig(row['avg_power_w'])} | {area} | "
            f"{row['bottleneck_module']} |"
        )
    return "\n".join(lines) + "\n"


def spec_vs_realistic() -> str:
    """fps of the native pairs under the spec's workloads and the realistic ones."""
    lines = [
        '| pipeline on accelerator | fps, `model="spec"` | fps, `model="realistic"` |',
        "|---|---:|---:|",
    ]
    for spec, real in zip(_native("spec"), _native("realistic"), strict=True):
        assert (spec["graph"], spec["accelerator"]) == (real["graph"], real["accelerator"])
        lines.append(
            f"| {real['graph']} on {real['accelerator']} | {_sig(spec['fps'])} | "
            f"{_sig(real['fps'])} |"
        )
    return "\n".join(lines) + "\n"


def validation() -> str:
    """`nerframe validate`'s summary line and one table row per published figure."""
    from nerframe.validation import summary, validate

    table = validate()
    lines = [
        f"`{summary(table)}`",
        "",
        "| row | tag | published | predicted | error | score |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in table.iter_rows(named=True):
        tag = row["tag"] + (", upper bound" if row["bound"] == "upper" else "")
        if row["predicted"] is None:
            cells = [f"pending: {row['pending']}", "", ""]
        else:
            score = "(not scored)" if row["tag"] == "circular" else _percent(row["score"])
            cells = [f"{row['predicted']:.4g}", _percent(row["error"]), score]
        published = f"{row['value']:g} {row['unit']}"
        lines.append("| " + " | ".join([row["id"], tag, published, *cells]) + " |")
    return "\n".join(lines) + "\n"


def calibration() -> str:
    """`nerframe validate --calibrate`: each calibrated parameter and its row."""
    from nerframe.validation import calibrate

    lines = ["| accelerator | parameter | value | from row |", "|---|---|---:|---|"]
    for row in calibrate().iter_rows(named=True):
        lines.append(
            f"| {row['accelerator']} | `{row['parameter']}` | {row['value']:.4g} | {row['row']} |"
        )
    return "\n".join(lines) + "\n"


REGIONS: dict[str, Callable[[], str]] = {
    "native-pairs": native_pairs,
    "spec-vs-realistic": spec_vs_realistic,
    "validation": validation,
    "calibration": calibration,
}
"""Each region's name and the function that writes its text."""


def fill_regions(text: str, where: str, cache: dict[str, str]) -> str:
    """`text` with every generated region rewritten; `cache` keeps each region's
    text so a region used twice is computed once.

    >>> fill_regions("a\\n<!-- generated: x -->\\nold\\n<!-- end generated -->\\n", "doc",
    ...              {"x": "new\\n"})
    'a\\n<!-- generated: x -->\\nnew\\n<!-- end generated -->\\n'
    """

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name in FOREIGN:
            return match[0]
        if name not in cache:
            if name not in REGIONS:
                raise SystemExit(f"error: {where}: unknown generated region {name!r}")
            cache[name] = REGIONS[name]()
        return match[1] + cache[name] + match[4]

    return _REGION.sub(replace, text)


class _Recorder(doctest.DocTestRunner):
    """A doctest runner that keeps the actual output of every example that fails."""

    def __init__(self) -> None:
        super().__init__(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        self.got: dict[int, str] = {}  # example's line in the block -> its output

    def report_failure(self, out: object, test: object, example: doctest.Example, got: str) -> None:
        self.got[example.lineno] = got

    def report_unexpected_exception(
        self, out: object, test: doctest.DocTest, example: doctest.Example, exc_info: object
    ) -> None:
        line = (test.lineno or 0) + example.lineno + 1
        error = exc_info[1] if isinstance(exc_info, tuple) else exc_info
        source = example.source.strip()
        raise SystemExit(f"error: README.md line {line}: {source!r} raised {error!r}")


@contextlib.contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def run_examples(text: str, folder: Path) -> str:
    """`text` (markdown) with the outputs of its ``python`` doctest blocks replaced
    by what they print, run in order in one namespace inside `folder`.

    >>> import tempfile
    >>> block = "```python\\n" + ">>> 6 * 7\\n0\\n" + "```\\n"
    >>> run_examples(block, Path(tempfile.mkdtemp())).splitlines()[2]
    '42'
    """
    namespace: dict[str, object] = {"__name__": "__readme__"}
    parser = doctest.DocTestParser()
    pieces: list[str] = []
    end = 0
    with _in_folder(folder):
        for match in _BLOCK.finditer(text):
            block = match[2]
            line = text.count("\n", 0, match.start(2))
            test = parser.get_doctest(block, namespace, "README.md", "README.md", line)
            runner = _Recorder()
            with contextlib.redirect_stdout(io.StringIO()):
                runner.run(test, clear_globs=False)
            namespace = test.globs  # a DocTest runs in a copy of the namespace it is given
            pieces += [text[end : match.start(2)], _rewrite(block, test.examples, runner.got)]
            end = match.end(2)
    return "".join(pieces) + text[end:]


def _rewrite(block: str, examples: list[doctest.Example], got: dict[int, str]) -> str:
    """`block` with the expected output of each example in `got` replaced."""
    lines = block.splitlines(keepends=True)
    for example in reversed(examples):
        if example.lineno not in got:
            continue
        start = example.lineno + example.source.count("\n")
        stop = start + example.want.count("\n")
        pad = " " * example.indent
        want = [
            pad + (line if line.strip() else "<BLANKLINE>") + "\n"
            for line in got[example.lineno].splitlines()
        ]
        lines[start:stop] = want
    return "".join(lines)


def generate(root: Path = ROOT, *, folder: Path | None = None) -> dict[str, str]:
    """The new text of every document under `root` with generated text, by path.
    The README's examples run in `folder` (None: a temporary folder, removed after)."""
    cache: dict[str, str] = {}
    new: dict[str, str] = {}
    for name in documents(root):
        text = fill_regions((root / name).read_text(encoding="utf-8"), name, cache)
        if name == "README.md":
            if folder is None:
                with tempfile.TemporaryDirectory() as temporary:
                    text = run_examples(text, Path(temporary))
            else:
                text = run_examples(text, folder)
        new[name] = text
    return new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    stale = []
    for name, text in generate().items():
        path = ROOT / name
        if path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    verb = "stale" if args.check else "rewrote"
    for name in stale:
        sys.stderr.write(f"{verb}: {name}\n")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
