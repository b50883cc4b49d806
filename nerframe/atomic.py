"""Atomic output: write under a temporary name beside the target, then rename.

A crash or an error while writing never leaves a half-written file or folder
under the final name, and an existing one is replaced only by a complete new
one. Temporary names start with a dot; permissions follow the umask, as for
any file the user creates.

>>> import pathlib, tempfile
>>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> with atomic_path(target) as tmp:
...     _ = tmp.write_text("done")
>>> target.read_text()
'done'
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from nerframe.errors import InvalidInputError

# The temporaries being written now, for a process that must end at once (a second
# Ctrl-C, or one that work in a library did not let through in time): see
# `remove_temporaries`.
_LIVE: set[Path] = set()
_ENDING = False


def _sibling(target: Path) -> Path:
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")


def remove_temporaries() -> None:
    """Remove every temporary file and folder being written now, for a process about
    to end without unwinding (`os._exit`): it leaves no partial output behind.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> try:
    ...     with atomic_path(target) as tmp:
    ...         remove_temporaries()
    ...         print(tmp.exists())
    ... except FileNotFoundError:  # nothing is left to rename into place
    ...     print(target.exists())
    False
    False
    >>> import nerframe.atomic  # this example's process goes on: let it write again
    >>> nerframe.atomic._ENDING = False
    """
    global _ENDING
    _ENDING = True  # another thread still writing may not make their folders again
    for _ in range(2):  # what such a thread wrote while the first pass ran
        for path in list(_LIVE):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def check_replaceable(target: str | Path, *, folder: bool = False) -> None:
    """Refuse a `target` that exists as something a rename would wrongly replace: a
    device, pipe or socket (``-o /dev/null`` as root would swap the system's
    ``/dev/null`` for a plain file), or, for a `folder`, any file. A symbolic link is
    itself replaced, never what it points to.

    >>> try:
    ...     check_replaceable("/dev/null")
    ... except InvalidInputError as e:
    ...     print(str(e).split(";")[0])
    /dev/null: not a regular file (a device, pipe or socket)
    """
    try:
        mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # (a path under a file: the write's own error names it)
    if stat.S_ISLNK(mode) or stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and not folder):
        return  # (a folder in place of a file: the rename's own error names it)
    if stat.S_ISREG(mode):
        raise InvalidInputError(
            f"{target}: exists and is not a folder; not replacing it", str(target)
        )
    raise InvalidInputError(
        f"{target}: not a regular file (a device, pipe or socket); nerframe writes only "
        "regular files and folders: choose another name",
        str(target),
    )


def _folder(target: Path) -> None:
    """Make the folder of `target`, unless the process is ending (`remove_temporaries`)."""
    if _ENDING:
        raise OSError(f"{target}: not written, the process is ending")
    target.parent.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary file path beside `target`; rename it to `target` on success.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    ...     tmp.name.startswith(".out.txt."), target.exists()
    (True, False)
    >>> target.read_text(), [p.name for p in target.parent.iterdir()]
    ('done', ['out.txt'])
    """
    target = Path(target)
    check_replaceable(target)
    _folder(target)
    tmp = _sibling(target)
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        _LIVE.add(tmp)
        try:
            yield tmp
            os.replace(tmp, target)
        finally:
            _LIVE.discard(tmp)
            tmp.unlink(missing_ok=True)
    except OSError as e:
        # The user knows the file by its final name, not the hidden temporary one; a
        # failed write (a full disk) names no file at all.
        if e.filename is None or Path(e.filename) == tmp:
            e.filename = str(target)
        raise


@contextlib.contextmanager
def atomic_folder(target: str | Path) -> Iterator[Path]:
    """Yield a new empty folder beside `target`; on success it replaces `target`.

    The previous `target` (if any) is removed only after the new folder is in
    place; on error the new folder is removed and `target` is left untouched.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "store"
    >>> with atomic_folder(target) as building:
    ...     _ = (building / "a.txt").write_text("1")
    >>> try:
    ...     with atomic_folder(target) as building:
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> [p.name for p in target.parent.iterdir()], (target / "a.txt").read_text()
    (['store'], '1')
    """
    target = Path(target)
    check_replaceable(target, folder=True)
    _folder(target)
    building = _sibling(target)
    building.mkdir()
    _LIVE.add(building)
    old = _sibling(target)
    try:
        yield building
        if target.exists():
            target.rename(old)
        building.rename(target)
    finally:
        _LIVE.discard(building)
        shutil.rmtree(building, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
