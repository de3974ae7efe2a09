"""Reading a user's CSV file for ``exactclf fit``: numeric features and one label column.

Spreadsheet exports are awkward but valid input (a byte-order mark, blank trailing rows,
padded cells), so they are accepted. Everything that would silently change the problem is
refused with a message naming the line and column: a missing label (it would become a class
of its own), a duplicated column name (the label could leak into the features), a feature
cell that is empty, not a number or not finite.
"""

from __future__ import annotations

import csv
import difflib
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["MISSING", "CSVTable", "line_list", "read_csv"]

#: label cells read as "no label" (compared case-insensitively, after stripping blanks)
MISSING = frozenset({"", "na", "n/a", "nan", "null", "?"})

_SHOWN = 5  # line numbers quoted in an error message at most


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
    """(line number, fields) of every row with a non-blank field; ``utf-8-sig`` drops a BOM."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            rows = []
            for fields in reader:
                if any(v.strip() for v in fields):
                    rows.append((reader.line_num, fields))
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


def _labels(values: list[str]) -> np.ndarray:
    """Integer labels if every label is an integer, floats if every one is a finite number,
    else the strings; ``"1"`` and ``"1.0"`` are then the same class."""
    try:
        numbers = np.array([float(v) for v in values])
    except ValueError:
        return np.array(values)
    if not np.all(np.isfinite(numbers)):
        return np.array(values)
    if np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2.0**53):
        return numbers.astype(np.int64)
    return numbers


def read_csv(path: str | Path, target: str, *, drop_missing_target: bool = False) -> CSVTable:
    """Numeric features and the ``target`` column of a comma-separated file with a header row.

    Parameters
    ----------
    path : str or Path
        UTF-8 text (a byte-order mark is accepted), comma separated, one header row. Rows
        whose fields are all blank are skipped.
    target : str
        Name of the label column; every other column is a feature and must hold finite
        numbers in every row.
    drop_missing_target : bool, default=False
        Rows whose label is missing (empty, or one of ``NA``, ``N/A``, ``NaN``, ``null``,
        ``?``) raise a ``ValueError`` unless this is True; then they are left out and their
        line numbers returned in ``dropped_lines``.

    Returns
    -------
    CSVTable
        ``X`` (float64), ``y`` (int64 if every label is an integer, float64 if a number,
        else str), ``feature_names`` and ``dropped_lines``.

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
    labels, feats, missing = [], [], []
    for line, r in rows[1:]:
        if len(r) != len(header):
            raise ValueError(f"{path}, line {line}: {len(r)} fields, the header has "
                             f"{len(header)}")
        label = r[t].strip()
        if label.lower() in MISSING:
            missing.append(line)
            continue
        row = []
        for j, v in enumerate(r):
            if j == t:
                continue
            try:
                value = float(v)
            except ValueError:
                what = "is empty" if not v.strip() else f"{v.strip()!r} is not a number"
                raise ValueError(f"{path}, line {line}, column {header[j]!r}: {what}; fill in "
                                 "or drop missing values and encode categorical columns as "
                                 "numbers first") from None
            if not np.isfinite(value):
                raise ValueError(f"{path}, line {line}, column {header[j]!r}: {v.strip()!r} "
                                 "is not a finite number")
            row.append(value)
        labels.append(label)
        feats.append(row)
    if missing and not drop_missing_target:
        raise ValueError(f"{path}: {len(missing)} row(s) have no value in the target column "
                         f"{target!r} (line(s) {line_list(missing)}); fill them in, or pass "
                         "--drop-missing-target to leave those rows out")
    if not labels:
        raise ValueError(f"{path}: no row has a value in the target column {target!r}")
    X = np.array(feats, dtype=np.float64).reshape(len(feats), len(names))
    return CSVTable(X, _labels(labels), names, missing)
