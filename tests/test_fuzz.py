"""The fuzz suite (issue 30): seeded mutants of the bundled IRs and of ``--input`` files, each run
through the real command line in a child process under a memory limit (RLIMIT_AS) and a time limit
(tests/fuzz_mutator.py). Every case ends with exit 0, 1 (check) or 2, one error line on failure,
no traceback, and no file left behind. 600 cases run in CI's slow step, 20 in the default run.

A failure names its case: ``python tests/fuzz_mutator.py 123`` reproduces it (same files, same
command) and keeps its folder.
"""
from __future__ import annotations

import pytest

import fuzz_mutator as fz

CHUNKS, CHUNK = 12, 50  # 600 cases in the slow step, in chunks that xdist spreads over its workers
SAMPLE = list(range(7, CHUNKS * CHUNK, 30))  # 20 cases spread over every mutation and sample


def _check(verdicts: list[fz.Verdict]) -> None:
    bad = [v for v in verdicts if not v.ok]
    print(f"fuzz: {fz.counts(verdicts)}")
    assert not bad, "\n".join(str(v) for v in bad)


def test_the_cases_are_deterministic():
    for n in (0, 17, 123, 599):
        a, b = fz.case(n), fz.case(n)
        assert (a.argv, a.files, a.detail) == (b.argv, b.files, b.detail)
    assert fz.case(1).files != fz.case(2).files


@pytest.mark.slow
def test_every_mutation_and_sample_is_covered():
    cases = [fz.case(n) for n in range(CHUNKS * CHUNK)]
    assert {c.mutation for c in cases} == set(fz.IR_MUTATIONS) | {"input_file", "example_inputs",
                                                                  "two_mutations"}
    assert {c.base for c in cases} == set(fz.CORPUS)
    assert {c.argv[0] for c in cases} == {"convert", "run", "check"}


def test_a_fuzz_sample(tmp_path):
    """20 cases in the default run."""
    _check(fz.run_cases(SAMPLE, tmp_path))


@pytest.mark.slow
def test_the_fork_runner_agrees_with_a_fresh_interpreter(tmp_path):
    """The fast runner (a fork per case) judges as ``python -m ir2onnx`` in a fresh process does."""
    ids = [SAMPLE[0], SAMPLE[5], 40]
    forked = fz.run_cases(ids, tmp_path / "fork")
    fresh = [fz.run_subprocess(fz.case(n), tmp_path / "fresh" / str(n)) for n in ids]
    assert [v.code for v in forked] == [v.code for v in fresh]
    assert [v.stderr.strip().splitlines()[-1:] for v in forked if v.code] == \
           [v.stderr.strip().splitlines()[-1:] for v in fresh if v.code]


def test_the_judge_finds_what_it_must(tmp_path):
    """A traceback, a leftover and a hang are each reported (the judge itself can fail)."""
    c = fz.case(0)
    folder = tmp_path / "c"
    fz.prepare(c, folder)
    (folder / "out" / "m.onnx").write_bytes(b"partial")
    (folder / "tmp" / "ir2onnx-x").mkdir()
    v = fz.judge(c, folder, 3, "", "Traceback (most recent call last):\n  ...\nValueError: x\n", 1.0)
    assert "exit 3" in v.problems and "traceback or internal error" in v.problems
    assert any("left in the output folder" in p for p in v.problems)
    assert any("temporary files left" in p for p in v.problems)
    assert fz.judge(c, folder, None, "", "", 60.0).problems[0].startswith("hang")


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz(tmp_path, chunk):
    _check(fz.run_cases(range(chunk * CHUNK, (chunk + 1) * CHUNK), tmp_path))
