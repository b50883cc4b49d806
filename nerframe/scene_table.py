"""The standard scenes: the workloads papers evaluate on, as data.

A packaged table (``nerframe/scenes.csv``) lists, per scene: its ``name``, its
``dataset``, the frame ``width`` and ``height`` (pixels) the papers render it
at, the 3DGS ``gaussians`` of the official code at 30K iterations, and the
NeRF sampling of an Instant-NGP-style renderer: ``samples_per_ray`` (network
samples a ray keeps after occupancy skipping), whether the scene is
``unbounded``, the ``aabb_scale`` of the box its rays march and the
``march_steps`` per ray (docs/workloads.md, "NeRF sampling"). Each figure has
its source column (``resolution_source``, ``gaussians_source``,
``samples_source``, ``march_source``), which says where it comes from, or how it
is derived with its plausible range, or why it is empty. Rows: the
eight NeRF-Synthetic scenes, the seven Mip-NeRF360 scenes of the 3DGS
evaluation, and the Tanks&Temples and Deep Blending means (``tanks_temples``,
``deep_blending``).

`nerframe.pipeline` takes a scene by name (``scene="lego"``): docs/model.md
says what a scene sets in each pipeline.

>>> table = scenes()
>>> table.filter(name="bicycle").select("width", "height", "gaussians").row(0)
(1237, 822, 6060000)
>>> scene("lego").frame_pixels
640000
>>> scene("bicycle").unbounded, scene("bicycle").march_steps, scene("lego").march_steps
(True, 975, 394)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl

from nerframe.errors import InvalidInputError, did_you_mean
from nerframe.output import printable

SCENES = Path(__file__).with_name("scenes.csv")
"""The packaged scene table."""

SCHEMA = {
    "name": pl.String(),
    "dataset": pl.String(),
    "width": pl.Int64(),
    "height": pl.Int64(),
    "gaussians": pl.Int64(),
    "samples_per_ray": pl.Int64(),
    "unbounded": pl.Boolean(),
    "aabb_scale": pl.Int64(),
    "march_steps": pl.Int64(),
    "resolution_source": pl.String(),
    "gaussians_source": pl.String(),
    "samples_source": pl.String(),
    "march_source": pl.String(),
}
"""The table's declared columns: a file with other columns, or values of other
types, is refused."""

_FIGURES = {
    "width": "resolution_source",
    "height": "resolution_source",
    "gaussians": "gaussians_source",
    "samples_per_ray": "samples_source",
    "unbounded": "march_source",
    "aabb_scale": "march_source",
    "march_steps": "march_source",
}
"""Each figure and the column that gives its source."""


@dataclass(frozen=True)
class Scene:
    """One row of the scene table; a figure is None where the table gives none
    (`unbounded`: whether rays march a box beyond the unit cube, `aabb_scale`
    unit cubes wide, in `march_steps` steps per ray).

    >>> Scene("x", "d", 16, 9, None, None).frame_pixels
    144
    """

    name: str
    dataset: str
    width: int
    height: int
    gaussians: int | None
    samples_per_ray: int | None
    unbounded: bool | None = None
    aabb_scale: int | None = None
    march_steps: int | None = None

    @property
    def frame_pixels(self) -> int:
        """Pixels of one frame: width × height."""
        return self.width * self.height


def scenes() -> pl.DataFrame:
    """The packaged scene table, one row per scene (columns: `SCHEMA`).

    >>> scenes().filter(dataset="Mip-NeRF360").height
    7
    """
    return _table().clone()


def scene(name: str) -> Scene:
    """The scene `name` of the table; an unknown name is an `InvalidInputError`
    listing the known ones.

    >>> scene("tanks_temples").gaussians
    1783867
    >>> try:
    ...     scene("lgo")
    ... except InvalidInputError as e:
    ...     print(str(e)[:60])
    unknown scene 'lgo' (did you mean 'lego'?); known scenes: ch
    """
    rows = _rows()
    if not isinstance(name, str) or name not in rows:
        text = name if isinstance(name, str) else repr(name)
        raise InvalidInputError(
            f"unknown scene {text!r}{did_you_mean(str(name), rows)}; "
            f"known scenes: {', '.join(rows)}",
            "scene",
        )
    return rows[name]


def names() -> list[str]:
    """The scene names, in table order.

    >>> names()[:2]
    ['chair', 'drums']
    """
    return list(_rows())


@cache
def _rows() -> dict[str, Scene]:
    return {
        row["name"]: Scene(
            row["name"],
            row["dataset"],
            row["width"],
            row["height"],
            row["gaussians"],
            row["samples_per_ray"],
            row["unbounded"],
            row["aabb_scale"],
            row["march_steps"],
        )
        for row in _table().iter_rows(named=True)
    }


@cache
def _table() -> pl.DataFrame:
    return read_scenes(SCENES)


def read_scenes(path: str | Path) -> pl.DataFrame:
    """A scene table file (the packaged one, or a user's of the same columns), checked:
    UTF-8 CSV, the declared columns in order, unique lower-case names, positive
    integer figures and a source for every figure given. Any fault is an
    `InvalidInputError` of one line naming the file (and the row).

    >>> read_scenes(SCENES).height
    17
    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = bad.write_text(",".join(SCHEMA) + "\\nlego,d,-8,8,,,,,,src,,,\\n")
    >>> try:
    ...     read_scenes(bad)
    ... except InvalidInputError as e:
    ...     print(str(e).replace(str(bad), "mine.csv"))
    mine.csv: scene 'lego': width must be >= 1, got -8
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = " ".join(str(e).split())
        raise InvalidInputError(
            f"{path}: cannot read the scene table ({reason})", str(path)
        ) from None
    if text.partition("\n")[0].strip().split(",") != list(SCHEMA):
        raise InvalidInputError(
            f"{path}: the scene table's columns are {', '.join(SCHEMA)}", str(path)
        )
    try:
        table = pl.read_csv(text.encode(), schema=SCHEMA)
    except pl.exceptions.PolarsError as e:
        reason = " ".join(str(e).split())[:200]
        raise InvalidInputError(f"{path}: not a scene table ({reason})", str(path)) from None
    seen: set[str] = set()
    for row in table.iter_rows(named=True):
        name = row["name"]
        where = f"{path}: scene {name!r}"
        if not name or not name.isidentifier() or name != name.lower():
            raise _bad(path, f"{path}: scene name {name!r} is not a lower-case identifier")
        if name in seen:
            raise _bad(path, f"{where} is listed twice")
        seen.add(name)
        if not row["dataset"]:
            raise _bad(path, f"{where}: no dataset")
        for figure, source in _FIGURES.items():
            value = row[figure]
            if figure in ("width", "height") and value is None:
                raise _bad(path, f"{where}: no {figure}")
            if figure == "aabb_scale" and value is not None and value & (value - 1):
                raise _bad(path, f"{where}: aabb_scale must be a power of 2, got {value}")
            if value is not None and not isinstance(value, bool) and value < 1:
                raise _bad(path, f"{where}: {figure} must be >= 1, got {value}")
            if not row[source]:
                raise _bad(path, f"{where}: {figure} has no {source}")
    return table


def _bad(path: str | Path, message: str) -> InvalidInputError:
    # a cell may hold any character (a quoted newline, ESC): the error stays one line
    return InvalidInputError(printable(message), str(path))


__all__ = ["SCENES", "SCHEMA", "Scene", "names", "read_scenes", "scene", "scenes"]
