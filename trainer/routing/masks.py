"""Which adapter each sample's gradient may reach, by routing mode.

classic:   hacked -> forget only;  clean -> retain and forget.
exclusive: hacked -> forget only;  clean -> retain only.
"""

from __future__ import annotations

import torch

ROUTED_MODES = ("classic", "exclusive")


def masks_for(mode: str, is_hack: torch.Tensor) -> dict[str, torch.Tensor]:
    """Bool masks [batch] per adapter: True where the sample's gradient reaches that adapter."""
    if mode not in ROUTED_MODES:
        raise ValueError(f"no gradient masks for routing mode {mode!r}; routed modes are {ROUTED_MODES}")
    if is_hack.dim() != 1:
        raise ValueError(f"is_hack must be one flag per sample (1-d), got shape {tuple(is_hack.shape)}")
    hack = is_hack.to(torch.bool)
    forget = hack if mode == "exclusive" else torch.ones_like(hack)
    return {"retain": ~hack, "forget": forget}
