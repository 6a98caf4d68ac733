"""Property: whatever sequence of specs is rendered and wherever each render is cut off (Ctrl-C or a
full disk, at any file), ``check`` never calls sweepgen's own files hand edits, and one uninterrupted
render of any of the specs ends with a green ``check``, no journal, no temp file, nothing outside."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

from fs_support import leftovers, snapshot, write_spec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sweepgen.compile import api
from sweepgen.errors import SweepgenError
from sweepgen.fs.outtree import OutputTree

TEMPLATES = [
    "seed: {{ training.seed }}\n",
    "changed: {{ training.seed }}\n",
    "a: 1\nseed: {{ training.seed }}\n",
]
OUTPUTS = [
    "{{ variant.name }}.yaml",
    "s{{ training.seed }}/c.yaml",
    "{{ variant.name }}",
    "{{ variant.name }}/c.yaml",
]

spec_st = st.tuples(st.integers(1, 5), st.sampled_from(TEMPLATES), st.sampled_from(OUTPUTS))
step_st = st.tuples(
    spec_st, st.one_of(st.none(), st.tuples(st.integers(0, 7), st.sampled_from(["int", "full"])))
)


class Cut(Exception):
    pass


def render(project: Path, spec: tuple[int, str, str], cut: tuple[int, str] | None) -> None:
    seeds, template, output = spec
    path = write_spec(project, seeds, template=template, output=output)
    real_write, real_place = OutputTree.write, OutputTree.place
    count = [0]

    def step() -> None:  # the journal, each file put in place, the lock: one step each
        count[0] += 1
        if cut is not None and count[0] > cut[0]:
            if cut[1] == "int":
                raise KeyboardInterrupt
            raise OSError(errno.ENOSPC, "No space left on device")

    def write(self: OutputTree, rel: str, data: bytes) -> None:
        step()
        real_write(self, rel, data)

    def place(self: OutputTree, src_fd: int, src_name: str, rel: str) -> None:
        step()
        real_place(self, src_fd, src_name, rel)

    OutputTree.write = write  # type: ignore[method-assign]
    OutputTree.place = place  # type: ignore[method-assign]
    try:
        api.render([str(path)], str(project / "generated"))
    except (KeyboardInterrupt, SweepgenError, OSError):
        assert cut is not None
    finally:
        OutputTree.write = real_write  # type: ignore[method-assign]
        OutputTree.place = real_place  # type: ignore[method-assign]


@example(  # found by this test: a folder of earlier files where the spec now writes a file
    steps=[
        ((1, TEMPLATES[0], "{{ variant.name }}/c.yaml"), None),
        ((1, TEMPLATES[0], "{{ variant.name }}"), (0, "int")),
    ],
    final=(1, TEMPLATES[0], "{{ variant.name }}.yaml"),
)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step_st, min_size=1, max_size=5), final=spec_st)
def test_any_interrupted_history_recovers_with_one_render(
    steps: list[tuple[tuple[int, str, str], tuple[int, str] | None]], final: tuple[int, str, str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "proj"
        project.mkdir()
        (root / "outside").mkdir()
        (root / "outside" / "victim.txt").write_text("keep me\n")
        outside = snapshot(root / "outside")
        for spec, cut in steps:
            render(project, spec, cut)
            spec_path = str(project / "specs/demo.yaml")
            report = api.check([spec_path], str(project / "generated"))
            assert not [p for p in report.problems if p.kind in ("edited", "invalid", "unsafe")], report
        render(project, final, None)
        report = api.check([str(project / "specs/demo.yaml")], str(project / "generated"))
        assert report.problems == []
        assert leftovers(project / "generated") == []
        assert snapshot(root / "outside") == outside
