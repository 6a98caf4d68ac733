"""Benchmark: what render's read-back of each rendered file costs (compile/output/verify/readback.py).

Run: .venv/bin/python benchmarks/bench_readback.py [--variants 10000] [--repeats 3]
Prints each reader's time per KB of a generated config written in its kind (a file of a new shape
is read in full), the time to take a file's shape, and the CPU seconds of a serial in-process
`render` of bench_compile_scale's 150-leaf project (its `to_yaml` and `python` templates) with the
read-back and with it switched off (no reader for any kind); and the type check of a rendered file
(compile/output/verify/value_types.py) per file of bench_compile_scale's config written by `to_yaml`.
Results go to benchmarks/RESULTS.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from bench_compile_scale import TEMPLATES, base_sections, spec_text  # the same 150-leaf project

from sweepgen.compile import api
from sweepgen.compile.output.verify import readback, readback_shape, value_types
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.compile.template.yamlfilter import to_yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = yaml.safe_load(next((ROOT / "generated" / "happy_grpo_cpu").glob("*.yaml")).read_text())
TEXTS = {
    ".yaml": yaml.safe_dump(SAMPLE, sort_keys=False),
    ".json": json.dumps(SAMPLE, indent=2),
    ".py": f"config = {SAMPLE!r}\n",
    ".toml": "".join(
        f"[{k}]\n" + "".join(f"{kk} = {json.dumps(vv)}\n" for kk, vv in v.items() if vv is not None)
        for k, v in SAMPLE.items()
        if isinstance(v, dict) and all(not isinstance(x, dict) for x in v.values())
    ),
    ".sh": "#!/bin/bash\n"
    + "".join(f"export {k.upper()}={json.dumps(str(v))}\n" for k, v in SAMPLE.items())
    + 'python -m trainer "$@" --lr "$LR"\n',
}


def per_kb_us(reader, text: str, repeats: int = 500) -> float:
    start = time.process_time()
    for _ in range(repeats):
        reader(text)
    return (time.process_time() - start) / repeats * 1e6 / (len(text.encode()) / 1024)


def types_us(calls: int = 3000) -> tuple[float, int]:
    """CPU microseconds of one check_types_kept of the 150-leaf config's `to_yaml` file (no value
    changes type: the common case, one walk over the values and a scan), and the file's bytes."""
    config = {**base_sections(), "seed": 1, "lr": 0.001}
    variant = Variant("v", config, {}, {}, {}, None, ())
    text = to_yaml(config)
    start = time.process_time()
    for _ in range(calls):
        value_types.check_types_kept(text, "v.yaml", None, variant)  # type: ignore[arg-type]
    return (time.process_time() - start) / calls * 1e6, len(text.encode())


def render_cpu(folder: Path, spec: str, on: bool) -> float:
    real = dict(readback.READERS)
    if not on:
        readback.READERS.clear()
    shutil.rmtree(folder / "generated", ignore_errors=True)
    try:
        start = time.process_time()
        api.render([str(folder / "specs" / spec)], str(folder / "generated"))
        return time.process_time() - start
    finally:
        readback.READERS.update(real)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--templates", default="to_yaml,python", help="bench_compile_scale's templates")
    args = parser.parse_args()
    for suffix, text in TEXTS.items():
        assert readback.READERS[suffix](text) is None, suffix
        print(f"{suffix}: {per_kb_us(readback.READERS[suffix], text):.1f} us per KB ({len(text)} bytes)")
    for kind, suffix in (("yaml", ".yaml"), ("python", ".py"), ("toml", ".toml")):
        shape_us = per_kb_us(functools.partial(readback_shape.shape, kind), TEXTS[suffix])
        print(f"shape of a {suffix} file: {shape_us:.1f} us per KB")
    took, size = types_us()
    print(f"type check of a rendered file: {took:.1f} us ({size} bytes)")
    os.environ["SWEEPGEN_WORKERS"] = "1"  # serial: process_time sees every render
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "specs").mkdir()
        (folder / "templates").mkdir()
        for kind in args.templates.split(","):
            filename, make = TEMPLATES[kind]
            (folder / "specs" / f"{kind}.yaml").write_text(spec_text(args.variants, filename))
            (folder / "templates" / filename).write_text(make())
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            for kind in args.templates.split(","):
                for label, on in (("with the read-back", True), ("read-back off", False)):
                    runs = [render_cpu(folder, f"{kind}.yaml", on) for _ in range(args.repeats)]
                    shown = " / ".join(f"{r:.2f}" for r in runs)
                    median = statistics.median(runs)
                    said = f"render {args.variants} {kind} variants, {label}"
                    print(f"{said}: CPU s {shown} (median {median:.2f})")
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    sys.exit(main())
