"""What a value pasted into ``run --command`` may hold: the run dir, run name, variant and output path.

Those values come from a spec or a lock (a pull request's, a shared folder's), and a command such as
``bash -c "train --out {run_dir}"`` pastes them into a shell script unquoted. None of these
characters means anything to a shell, and no value starts an option (``-``). ``render`` and ``check``
refuse a spec whose ``run_dir`` breaks the rule at the spec's line, so such a value never reaches
generated/ or a lock; ``run`` checks every lock entry again, since a lock is data anyone may edit.
Variant names, run names and output paths obey the stricter ``SAFE_NAME`` already.
"""

from __future__ import annotations

import re

# Always ``fullmatch``: ``$`` in ``match`` would accept a trailing newline.
PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.,=+@%:/-]*")
PLAIN_HINT = (
    "placeholders are pasted into --command as they are: use letters, digits and `_.,=+@%:/-` "
    "(not first: `,=+@%:/-`)"
)


def plain(value: str) -> bool:
    """Whether ``value`` may be pasted into a command line unquoted."""
    return PLAIN_VALUE.fullmatch(value) is not None
