"""The README stays true: its example prints what it shows, its benchmark table's figures are
in the results file it links, its quick start is the two commands CI runs (``.ci/run``
installs "exactly as the README says"), and it fits in 130 lines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: the quick start, as ``.ci/run`` runs it
QUICK_START = [
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]" && exactclf demo',
    ". .venv/bin/activate && python -m pytest",
]

#: a number standing alone (not inside a name such as ``synth90x6`` or a longer number)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w|\.\d)")


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _fences(text: str) -> list[tuple[str, str, int]]:
    """The fenced blocks of ``text``: (info string, body, offset of the opening fence)."""
    return [(m.group(1).strip(), m.group(2), m.start())
            for m in re.finditer(r"^```([^\n]*)\n(.*?)^```[ \t]*$", text, re.M | re.S)]


def _section(text: str, title: str) -> str:
    """The body of the ``## title`` section (up to the next ``## `` heading)."""
    m = re.search(rf"^## {re.escape(title)}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"README has no '## {title}' section"
    return m.group(1)


def _normalized(output: str) -> list[str]:
    return [" ".join(line.split()) for line in output.splitlines() if line.strip()]


def test_readme_length_and_quick_start():
    text = _text()
    assert len(text.splitlines()) <= 130
    commands = [body.strip() for info, body, _ in _fences(_section(text, "Quick start"))
                if info == "bash"]
    assert commands == QUICK_START


def test_readme_has_no_dates():
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", _text())


def test_readme_local_links_exist():
    links = re.findall(r"\]\(([^)#\s]+)\)", _text())
    local = [link for link in links if "://" not in link]
    assert local
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to missing paths: {missing}"


def test_readme_example_prints_what_it_shows(tmp_path):
    blocks = _fences(_text())
    at = next(i for i, (info, _, _) in enumerate(blocks) if info == "python")
    code = blocks[at][1]
    shown_info, shown, _ = blocks[at + 1]
    assert shown_info in ("", "text", "console"), "the example's output must follow it"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert _normalized(run.stdout) == _normalized(shown)


def _benchmark_table(text: str) -> tuple[list[list[str]], str]:
    """The rows (cells) of the README's benchmark table and the results file it links."""
    body = _section(text, "Benchmark:")
    lines = body.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[start:end]]
    rows = [r for r in rows[1:] if not all(re.fullmatch(r":?-+:?", c) for c in r)]
    links = re.findall(r"\((benchmarks/results/[^)\s]+)\)", "\n".join(lines[end:]))
    assert len(set(links)) == 1, f"the table must link one results file, found {links}"
    return rows, links[0]


def _numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def test_readme_benchmark_figures_are_in_the_results_file():
    rows, link = _benchmark_table(_text())
    path = ROOT / link
    assert path.is_file(), f"{link} does not exist"
    results = path.read_text(encoding="utf-8")
    in_table = set().union(*(_numbers(" ".join(r[1:])) for r in rows))
    assert in_table, "the benchmark table holds no figures"
    assert not in_table - _numbers(results), f"not in {link}: {in_table - _numbers(results)}"

    # stronger: one run of the file (its blocks start at '# ----' or '# ====' lines) holds
    # every row's figures on that dataset's own lines
    blocks = re.split(r"^# (?:----|====)", results, flags=re.M)
    missing = {}
    for block in blocks:
        missing = {}
        for cells in rows:
            name = re.sub(r"[*`]", "", cells[0]).strip()
            own = "\n".join(line for line in block.splitlines()
                            if line.split() and line.split()[0].rstrip(":") == name)
            lacking = _numbers(" ".join(cells[1:])) - _numbers(own)
            if lacking:
                missing[name] = sorted(lacking)
        if not missing:
            break
    assert not missing, f"no run in {link} has these rows' figures: {missing}"


@pytest.mark.parametrize("text, expected", [
    ("**19** (0.08 s) | 20 (11.81 s) | synth90x6 | 1e3 | 2-core", {"19", "0.08", "20", "11.81"}),
    ("30.01", {"30.01"}),
])
def test_numbers_helper(text, expected):
    found = _numbers(text)
    assert expected <= found
    assert "90" not in found and "6" not in found
