"""The sweep table in conftest.py names tests that exist (a renamed test would silently run in
full again, or a typo would keep nothing out), and picks its default cases as it says."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from conftest import SWEEPS, _kept

TESTS = Path(__file__).resolve().parent


def test_every_sweep_names_a_parametrized_test():
    wrong = []
    for key, n in SWEEPS.items():
        file, _, name = key.partition("::")
        path = TESTS / file
        if not path.is_file() or not re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
            wrong.append(key)
        assert n >= 0
    assert not wrong, f"conftest.SWEEPS names tests that do not exist: {wrong}"


def _cases(*sizes):
    """Items of a product parametrization, in pytest's order (the last parameter fastest)."""
    import itertools

    return [SimpleNamespace(callspec=SimpleNamespace(params={f"p{k}": [v] * k for k, v in enumerate(ix)}))
            for ix in itertools.product(*map(range, sizes))]  # lists: unhashable values count too


def test_default_cases_cover_every_value_first():
    items = _cases(7, 4, 3)  # 84 cases
    kept = _kept(items, 7)
    assert len(kept) == 7
    for axis, size in enumerate((7, 4, 3)):
        assert {repr(items[i].callspec.params[f"p{axis}"]) for i in kept} == {repr([v] * axis) for v in range(size)}
    assert _kept(items, 0) == set() and _kept(items, 1) == {0}
    assert len(_kept(items, 30)) == 30 and _kept(items, 100) == set(range(84))
