"""Parallel render: the same bytes and the same first error whatever the number of workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GRID = "grid:\n  training.seed: {seeds}\n  training.lr: [1.0e-5, 2.0e-5, 3.0e-5, 4.0e-5, 5.0e-5]\n"


def _project(root: Path, template: str, seeds: int = 500) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "templates").mkdir()
    (root / "templates" / "t.yaml.j2").write_text(template)
    (root / "specs" / "p.yaml").write_text(
        'sweepgen: 1\nname: p\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'
        "base:\n  training: {seed: 0, lr: 0.1, name: x}\n" + GRID.format(seeds=list(range(seeds)))
    )
    return root


def _render(root: Path, workers: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SWEEPGEN_WORKERS": str(workers)}
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", "render", "specs/p.yaml"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow  # 2,500 variants rendered three times in subprocesses
def test_every_worker_count_writes_the_same_bytes(tmp_path):
    template = "seed: {{ training.seed | tojson }}\nlr: {{ training.lr | to_yaml }}\n{{ config | to_yaml }}\n"
    outputs = []
    for workers in (1, 2, 3):
        root = _project(tmp_path / f"w{workers}", template)
        done = _render(root, workers)
        assert done.returncode == 0, done.stderr
        folder = root / "generated" / "p"
        outputs.append({p.name: p.read_bytes() for p in sorted(folder.iterdir())})
    assert len(outputs[0]) == 2501
    assert outputs[0] == outputs[1] == outputs[2]


def test_the_first_error_in_variant_order_whatever_the_workers(tmp_path):
    # variants from seed 37 on fail, in every chunk after the first failing one: the report must
    # name the first failing variant, as a serial render would
    template = "x: {{ 1 // (0 if training.seed >= 37 else 1) }}\n"
    messages = set()
    for workers in (1, 2, 4):
        root = _project(tmp_path / f"w{workers}", template, seeds=100)
        done = _render(root, workers)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        messages.add(done.stderr)
        assert not (root / "generated").exists()  # all or nothing
    assert len(messages) == 1
    assert "seed37_lr1e-05" in messages.pop()


def test_a_bad_worker_count_is_a_user_error(tmp_path):
    root = _project(tmp_path, "x: 1\n", seeds=2)
    env = {**os.environ, "SWEEPGEN_WORKERS": "zero"}
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", "render", "specs/p.yaml"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "SWEEPGEN_WORKERS" in done.stderr


@pytest.mark.parametrize(
    ("spec_extra", "template", "expected"),
    [
        # the gate fails at one variant, and every variant's template fails: the gate's error wins
        ("variants:\n  a: {}\n  b: {training.name: y}\n", "x: {{ 1 // 0 }}\n", "differs from the base"),
        # a constraint fails, and the template does not even compile: the constraint's error wins
        (
            "constraints:\n  - {expr: 'training.seed < 50', message: small seeds only}\n",
            "x: {{ broken\n",
            "small seeds only",
        ),
    ],
)
def test_validation_errors_win_over_render_errors_while_workers_render(
    tmp_path, spec_extra, template, expected
):
    """Render workers start before validation finishes; what the user sees is still validation's
    error, as when validating first, and nothing is written."""
    messages = set()
    for workers in (1, 2):
        root = _project(tmp_path / f"w{workers}", template, seeds=100)
        spec = root / "specs" / "p.yaml"
        spec.write_text(spec.read_text() + spec_extra)
        done = _render(root, workers)
        assert done.returncode == 2 and expected in done.stderr, done.stderr
        assert not (root / "generated").exists()
        messages.add(done.stderr)
    assert len(messages) == 1
