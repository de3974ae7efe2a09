"""Reading a user's CSV file for ``exactclf fit``: numeric features and one label column.

Spreadsheet exports are awkward but valid input (a byte-order mark, blank trailing rows,
padded cells), so they are accepted. Everything that would silently change the problem is
refused with a message naming the line and column: a missing label (it would become a class
of its own), a duplicated column name (the label could leak into the features), a feature
cell that is empty, not a number or not finite.

A feature cell is a number when, apart from spaces and tabs around it, it is an optional sign,
ASCII digits with an optional decimal point and an optional exponent (``-1.5``, ``.5``,
``2e3``): what Python's ``float`` reads beyond that (``1_0`` read as 10, a line break or other
blank inside a quoted cell, non-ASCII digits) is refused rather than guessed at. A label is a
class name: a column of integers gives integer classes (``1`` and ``1.0`` are one class), any
other column text classes, its numbers in their shortest form (``0.50`` is ``'0.5'``).
"""

from __future__ import annotations

import csv
import difflib
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["MISSING", "CSVTable", "line_list", "read_csv"]

#: label cells read as "no label" (compared case-insensitively, after stripping blanks)
MISSING = frozenset({"", "na", "n/a", "nan", "null", "?"})

_SHOWN = 5  # line numbers quoted in an error message at most

#: a number cell: blanks (spaces, tabs) around a sign, ASCII digits with an optional decimal
#: point, and an optional exponent
_NUMBER = re.compile(r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
#: the words ``float`` reads as an infinity or NaN
_NOT_FINITE = re.compile(r"[ \t]*[+-]?(?:inf|infinity|nan)[ \t]*", re.IGNORECASE)
_BLANKS = " \t"


class CSVTable(NamedTuple):
    """The content of a CSV file, ready for ``fit``."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    dropped_lines: list[int]  # lines skipped for a missing label (``drop_missing_target``)


def line_list(numbers: list[int]) -> str:
    """``numbers`` for a message: the first few, then how many more."""
    shown = ", ".join(map(str, numbers[:_SHOWN]))
    return shown + (f" and {len(numbers) - _SHOWN} more" if len(numbers) > _SHOWN else "")


def _read_rows(path: Path) -> list[tuple[int, list[str]]]:
    """(first line, fields) of every row with a non-blank field; ``utf-8-sig`` drops a BOM."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            rows, previous = [], 0
            for fields in reader:
                if any(v.strip() for v in fields):
                    rows.append((previous + 1, fields))
                previous = reader.line_num
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                         f"{exc.start}); save the file as 'CSV UTF-8'") from exc
    except csv.Error as exc:
        raise ValueError(f"{path}: not a valid CSV file ({exc})") from exc
    return rows


def _header(path: Path, fields: list[str], target: str) -> tuple[list[str], int]:
    """Stripped column names and the index of ``target``; refuses unnamed or repeated ones."""
    header = [h.strip() for h in fields]
    unnamed = [j + 1 for j, h in enumerate(header) if not h]
    if unnamed:
        raise ValueError(f"{path}: column(s) {line_list(unnamed)} of the header have no name")
    repeated = [h for h, count in Counter(header).items() if count > 1]
    if repeated:
        raise ValueError(f"{path}: the header repeats the column name(s) "
                         f"{', '.join(map(repr, repeated))}; rename them (a repeated name can "
                         "make the label column a feature)")
    if target not in header:
        close = [h for h in header if h.lower() == target.lower()] or (
            difflib.get_close_matches(target, header, n=1))
        if len(header) == 1 and any(c in header[0] for c in ";\t|"):
            hint = " (the file has a single column: exactclf reads comma-separated values)"
        else:
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{path}: no column {target!r}{hint}; columns are {', '.join(header)}")
    return header, header.index(target)


def _class_name(number: float) -> str:
    """A numeric label as text, in its shortest form: ``1.0`` is ``'1'``, ``0.50`` ``'0.5'``."""
    return str(int(number)) if number.is_integer() and abs(number) < 2.0**53 else repr(number)


def _labels(values: list[str]) -> np.ndarray:
    """Integer labels if every label is an integer, else text: numbers in their shortest form
    (:func:`_class_name`), anything else as written.

    Examples
    --------
    >>> _labels(["0", "1.0"]).tolist(), _labels(["0.5", "1.50", "1"]).tolist()
    ([0, 1], ['0.5', '1.5', '1'])
    """
    if not all(_NUMBER.fullmatch(v) for v in values):
        return np.array(values)
    numbers = np.array([float(v) for v in values])
    if not np.all(np.isfinite(numbers)):
        return np.array(values)
    if np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2.0**53):
        return numbers.astype(np.int64)
    return np.array([_class_name(x) for x in numbers.tolist()])


def _not_a_number(cell: str) -> str:
    """Why a feature cell that :data:`_NUMBER` refuses is not a number, for a message."""
    shown = cell.strip(_BLANKS)
    if not cell.strip():
        return "is empty; fill in or drop missing values first"
    if _NOT_FINITE.fullmatch(cell):
        return f"{shown!r} is not a finite number"
    if "_" in shown:
        hint = " (no '_' between digits)"
    elif any(c in shown for c in "\n\r\v\f\x85\u2028\u2029"):
        hint = " (a line break inside the cell)"
    elif any(c.isspace() for c in shown):
        hint = " (a blank inside the cell)"
    else:
        hint = ""
    return (f"{shown!r} is not a number{hint}; write numbers as digits with an optional sign, "
            "decimal point and exponent (-1.5, 2e3) and encode categorical columns as numbers")


def _feature_row(path: Path, line: int, fields: list[str], columns: list[int],
                 header: list[str]) -> list[float]:
    """The feature cells of one row as floats; refuses a cell that is not a number."""
    row = []
    for j in columns:
        cell = fields[j]
        if _NUMBER.fullmatch(cell) is None:
            raise ValueError(f"{path}, line {line}, column {header[j]!r}: "
                             f"{_not_a_number(cell)}")
        row.append(float(cell))
    return row


def _check_finite(path: Path, X: np.ndarray, rows: list[tuple[int, list[str]]],
                  columns: list[int], header: list[str]) -> None:
    """Refuses the first cell of ``X`` (read from ``rows``) that overflowed to an infinity."""
    bad = np.argwhere(~np.isfinite(X))
    if len(bad):
        i, j = bad[0]
        line, fields = rows[i]
        raise ValueError(f"{path}, line {line}, column {header[columns[j]]!r}: "
                         f"{fields[columns[j]].strip(_BLANKS)!r} is not a finite number")


def read_csv(path: str | Path, target: str, *, drop_missing_target: bool = False) -> CSVTable:
    """Numeric features and the ``target`` column of a comma-separated file with a header row.

    Parameters
    ----------
    path : str or Path
        UTF-8 text (a byte-order mark is accepted), comma separated, one header row. Rows
        whose fields are all blank are skipped.
    target : str
        Name of the label column; every other column is a feature and must hold a finite
        number in every row: an optional sign, ASCII digits with an optional decimal point
        and an optional exponent, with spaces or tabs around it at most.
    drop_missing_target : bool, default=False
        Rows whose label is missing (empty, or one of ``NA``, ``N/A``, ``NaN``, ``null``,
        ``?``) raise a ``ValueError`` unless this is True; then they are left out and their
        line numbers returned in ``dropped_lines``.

    Returns
    -------
    CSVTable
        ``X`` (float64), ``y`` (int64 if every label is an integer, else str: class names,
        numbers in their shortest form), ``feature_names`` and ``dropped_lines``.

    Raises
    ------
    ValueError
        With the file, line and column, for anything that is not a clean table.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "data.csv"
    >>> _ = path.write_text("\\ufeffage, label\\n31,yes\\n47,no\\n,\\n", encoding="utf-8")
    >>> table = read_csv(path, "label")
    >>> table.X.tolist(), table.y.tolist(), table.feature_names
    ([[31.0], [47.0]], ['yes', 'no'], ['age'])
    """
    path = Path(path)
    rows = _read_rows(path)
    if len(rows) < 2:
        raise ValueError(f"{path}: expected a header row and at least one data row")
    header, t = _header(path, rows[0][1], target.strip())
    names = [h for j, h in enumerate(header) if j != t]
    columns = [j for j in range(len(header)) if j != t]
    labels, feats, kept, missing = [], [], [], []
    for line, r in rows[1:]:
        if len(r) != len(header):
            raise ValueError(f"{path}, line {line}: {len(r)} fields, the header has "
                             f"{len(header)}")
        label = r[t].strip()
        if label.lower() in MISSING:
            missing.append(line)
            continue
        feats.append(_feature_row(path, line, r, columns, header))
        labels.append(label)
        kept.append((line, r))
    if missing and not drop_missing_target:
        raise ValueError(f"{path}: {len(missing)} row(s) have no value in the target column "
                         f"{target!r} (line(s) {line_list(missing)}); fill them in, or pass "
                         "--drop-missing-target to leave those rows out")
    if not labels:
        raise ValueError(f"{path}: no row has a value in the target column {target!r}")
    X = np.array(feats, dtype=np.float64).reshape(len(feats), len(names))
    _check_finite(path, X, kept, columns, header)
    return CSVTable(X, _labels(labels), names, missing)
