"""The compile stages return values instead of filling in the ones they were given: the loaded
``Spec`` is frozen, ``expand`` returns the variants and where each layer set a path, ``derive``
returns new variants; so the spec the lock's fast path loaded is handed on, and loaded once."""

from __future__ import annotations

import dataclasses
import os

import pytest
from spec_support import BASE, HEAD, write_project

from sweepgen.compile import api
from sweepgen.compile.check import fast as check_fast
from sweepgen.compile.output import pipeline
from sweepgen.compile.spec.model import load_spec
from sweepgen.compile.spec.variants.context import sweep_view
from sweepgen.compile.spec.variants.derive import derive
from sweepgen.compile.spec.variants.expand import expand

BODY = """\
variants:
  identity: {}
  coma: {streamer.strategy: coma}
grid: {training.seed: [1, 2]}
allow: [streamer.strategy]
derived:
  +output_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"
"""


def test_stages_leave_what_they_were_given_unchanged(project):
    spec = load_spec(str(write_project(project, BODY, head=HEAD + 'run_name: "r_{{ variant.name }}"\n')))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.base = {}  # type: ignore[misc]
    expansion = expand(spec)
    assert str(expansion.where("variant:coma", "streamer.strategy")).startswith("specs/demo.yaml:11:")
    assert str(expansion.where("grid", "training.seed")).startswith("specs/demo.yaml:12:")
    before = [(v.name, v.run_name, v.config) for v in expansion.variants]
    derived = derive(expansion, sweep_view(spec, "specs/demo.yaml"))
    # new variants with run names and derived values; the expansion given is as it was
    assert [(v.name, v.run_name, v.config) for v in expansion.variants] == before
    assert all(v.run_name is None and "output_dir" not in v.config for v in expansion.variants)
    coma = derived.by_name("coma_seed2")
    assert coma is not None and coma.run_name == "r_coma_seed2"
    assert coma.config["output_dir"] == "runs/demo/r_coma_seed2"
    assert str(derived.where("derived", "output_dir")).startswith("specs/demo.yaml:15:")
    assert ("derived", "output_dir") not in expansion.locs


@pytest.mark.parametrize("stale", [False, True])
def test_render_and_check_load_each_spec_once(project, monkeypatch, stale):
    spec_path = str(write_project(project, BODY))
    os.chdir(project)
    api.render([spec_path])
    if stale:  # the fast path cannot decide: the spec is rendered, from the spec it loaded
        write_project(project, BODY, base=BASE.replace("lr: 3.0e-6", "lr: 4.0e-6"))
    loads: list[str] = []

    def counting(path, out_root="generated"):
        loads.append(path)
        return load_spec(path, out_root)

    monkeypatch.setattr(check_fast, "load_spec", counting)
    monkeypatch.setattr(pipeline, "load_spec", counting)
    report = api.check([spec_path])
    assert sorted({p.kind for p in report.problems}) == (["changed", "lock", "stale"] if stale else [])
    assert loads == [spec_path]
    loads.clear()
    api.render([spec_path])
    assert loads == [spec_path]
