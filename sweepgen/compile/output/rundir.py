"""Where the run of a rendered file writes, worked out once at render time and recorded in the lock.

The spec's ``run_dir`` template when it has one; else the ``output_dir`` the trainer will read: for
a YAML config the rendered file's own value (a template may compute it, so it can differ from the
resolved config), read as the trainer reads it (``sweepgen.formats.yamlio``, YAML 1.2); for any other file
the resolved config's. None when it cannot be told here, or is no value a command line may carry
(``plain_value``): ``run`` then works it out from the file and says what is wrong, as it does for a
lock written before entries carried their run dir.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sweepgen.compile.spec.variants.plain_value import plain
from sweepgen.errors import SweepgenError
from sweepgen.formats import yamlio

YAML_SUFFIXES = (".yaml", ".yml")


def run_dir_of_rendered(
    path: str, data: bytes, config: Mapping[str, Any], spec_run_dir: str | None
) -> str | None:
    if spec_run_dir is not None:
        return spec_run_dir
    if path.endswith(YAML_SUFFIXES):
        # a file that never spells the key has no output_dir (an escaped spelling is left to `run`,
        # which reads the file itself when the lock records none): most sweeps skip the parse
        if b"output_dir" not in data:
            return None
        try:
            rendered = yamlio.loads(data.decode("utf-8"), path).data
        except (SweepgenError, UnicodeDecodeError):
            return None  # `run` reports the broken file with its position
        output_dir = rendered.get("output_dir") if isinstance(rendered, dict) else None
    else:
        output_dir = config.get("output_dir")
    # an output_dir no command line may carry (an absolute path, `${...}`, a space) is the trainer's
    # own business, but not a run dir `run` would use: the lock records none, and `run` refuses it
    # from the file with its position, so the lock never holds it where a --command placeholder reads
    return output_dir if isinstance(output_dir, str) and plain(output_dir) else None
