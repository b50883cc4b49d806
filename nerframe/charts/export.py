"""Writing charts offline (PNG, SVG, self-contained HTML) through vl-convert."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import vl_convert as vlc

from nerframe.atomic import atomic_path
from nerframe.charts.theme import CONFIG, VL_VERSION, Chart
from nerframe.errors import InvalidInputError

_SVG_ID = re.compile(r'(?<=id=")(clip|gradient_)(\d+)(?=")|(?<=url\(#)(clip|gradient_)(\d+)(?=\))')


def _stable_ids(svg: str) -> str:
    """Number the clip-path and gradient ids of `svg` from 0 in order of appearance.

    Vega numbers them with counters that run on across every conversion of the
    process, so the same chart would otherwise differ from one export to the next.
    """
    renamed: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(match: re.Match[str]) -> str:
        prefix = match[1] or match[3]
        old = match[0]
        if old not in renamed:
            renamed[old] = f"{prefix}{counts.get(prefix, 0)}"
            counts[prefix] = counts.get(prefix, 0) + 1
        return renamed[old]

    return _SVG_ID.sub(rename, svg)


def save_chart(chart: Chart | dict[str, Any], *paths: str | Path) -> Path:
    """Write `chart` (or its Vega-Lite spec, ``chart.to_dict()``) to each path as
    PNG, SVG or self-contained HTML by its suffix, offline, atomically; returns the
    first path. The chart is rendered once: a PNG is rasterised from its SVG.

    >>> import tempfile, nerframe
    >>> from nerframe.charts import graph_chart
    >>> g = nerframe.pipeline("neurex")
    >>> out = Path(tempfile.mkdtemp())
    >>> save_chart(graph_chart(g.ops, g.edges), out / "g.svg", out / "g.png").name
    'g.svg'
    >>> (out / "g.svg").read_text()[:4], (out / "g.png").read_bytes()[1:4]
    ('<svg', b'PNG')
    """
    if not isinstance(chart, dict) and not callable(getattr(chart, "to_dict", None)):
        raise InvalidInputError(
            f"save_chart takes an altair chart or its Vega-Lite spec (a dict), "
            f"got {type(chart).__name__}",
            "chart",
        )
    if not paths:
        raise InvalidInputError("save_chart: give at least one output path")
    targets = [Path(p) for p in paths]
    for path in targets:
        if path.suffix.lower() not in (".png", ".svg", ".html"):
            raise InvalidInputError(
                f"{path}: unknown chart format {path.suffix!r} (use .png, .svg or .html)"
            )
    spec = chart if isinstance(chart, dict) else chart.to_dict()
    # An empty allow-list: vl-convert may not fetch anything, data is inline.
    rendered: dict[str, bytes | str] = {}
    try:
        suffixes = {p.suffix.lower() for p in targets}
        if suffixes & {".png", ".svg"}:
            svg = _stable_ids(
                vlc.vegalite_to_svg(
                    spec, vl_version=VL_VERSION, config=CONFIG, allowed_base_urls=[]
                )
            )
            rendered[".svg"] = svg
            if ".png" in suffixes:
                rendered[".png"] = vlc.svg_to_png(svg, scale=2)
        if ".html" in suffixes:
            rendered[".html"] = vlc.vegalite_to_html(
                spec, vl_version=VL_VERSION, config=CONFIG, bundle=True, renderer="svg"
            )
    except ValueError as e:
        # vl-convert puts the reason on the line after its headline, then a JS stack.
        reason = " ".join(str(e).strip().splitlines()[:2])
        raise InvalidInputError(f"{targets[0]}: chart export failed ({reason})") from None
    for path in targets:
        data = rendered[path.suffix.lower()]
        with atomic_path(path) as tmp:
            if isinstance(data, bytes):
                tmp.write_bytes(data)
            else:
                tmp.write_text(data, encoding="utf-8")
    return targets[0]
