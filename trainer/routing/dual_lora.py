"""The dual-adapter linear layer: a frozen base weight plus a "retain" and a "forget" LoRA adapter.

Why our own module rather than PEFT with two named adapters: routing needs (1) a per-sample
stop-gradient on each adapter's output inside one forward pass, (2) per-adapter scales changed at run
time, and (3) TRL to treat the model as an ordinary causal LM (with a PEFT model TRL switches to its own
reference-model and gradient-checkpointing paths, which we would then have to route too). PEFT offers
neither (1) nor (2) without hooks on its internals. Our module is ~100 lines, keeps the base weight
under its original state-dict key (``q_proj.weight``) and adds ``q_proj.retain_A`` etc. next to it.

Routing is one pass with a per-sample stop-gradient on the adapter *parameters*: in a masked-out
row the adapter's A and B receive exactly zero gradient (``where`` selects, it never multiplies by 0,
so no 0*inf = nan), while that row's gradient still flows through the adapter into the layers below.
Forward values, the loss and its normalisation are exactly those of an unrouted step. We do not use
the activation form ``m*a + (1-m)*a.detach()``: detaching the adapter output also cuts the path
through it to earlier layers, so a hacked sample would give the *forget* adapters of earlier layers a
gradient that differs from the full-batch one. With parameter masking, the forget gradient in
classic mode equals the unrouted gradient exactly, and the retain gradient equals the gradient of the
clean samples' loss terms (tests/test_routing_adapters.py holds both).

Cost: the two adapters run as one stacked low-rank product (one pair of matmuls, like a single LoRA
of the summed rank). When every active adapter's mask keeps every row (classic mode on a batch
without hacks) that is plain autograd, exactly as unrouted. Otherwise it goes through ``_RoutedLoRA``,
which masks the rank-sized tensors (``A x`` and its gradient) per sample and rank component, never
the layer-sized ones. A mask keeping no row still goes through it, so A and B get a zero gradient
rather than none: the optimizer then treats the step like any other (Adam momentum and step count),
as it would with a masked loss. Which path applies is decided once per micro-batch in ``set_masks``
(one host sync), not in every layer.

Masks live on one ``RoutingState`` shared by every adapted layer of a model. They are set before the
loss forward and cleared only after backward (see ``routed_masks``), so a gradient-checkpointed layer
recomputed during backward sees the same masks as its first forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from torch import nn
from torch.nn import functional as F

ADAPTERS = ("retain", "forget")


@dataclass
class RoutingState:
    """Run-time switches shared by all adapted layers of one model."""

    scales: dict[str, float] = field(default_factory=lambda: {"retain": 1.0, "forget": 1.0})
    # adapter -> bool tensor [batch]: True where that sample's gradient may reach the adapter.
    masks: dict[str, torch.Tensor] | None = None
    # adapter -> True where its mask keeps every row (plain autograd suffices); computed with the
    # masks, so the layers never sync with the device to find out.
    keeps_all: dict[str, bool] | None = None
    # (adapter, rank) of each active adapter -> its [batch, rank] mask; see _rank_mask
    rank_masks: dict[tuple[tuple[str, int], ...], torch.Tensor] = field(default_factory=dict)


class DualLoRALinear(nn.Linear):
    """``nn.Linear`` with a retain adapter and an optional forget adapter (rank 0 = absent).

    Output: ``x W^T + b + s_r * (alpha_r / r_r) * B_r A_r x + s_f * (alpha_f / r_f) * B_f A_f x``.
    A is initialised like PEFT (Kaiming-uniform), B with zeros, so a fresh model equals its base.
    """

    def __init__(
        self,
        base: nn.Linear,
        *,
        ranks: dict[str, int],
        alphas: dict[str, float],
        state: RoutingState,
        generator: torch.Generator | None = None,
    ) -> None:
        nn.Module.__init__(self)
        self.in_features, self.out_features = base.in_features, base.out_features
        # Share the base parameters (same objects, same state-dict keys), frozen.
        self.weight = base.weight
        self.bias = base.bias
        self.weight.requires_grad_(False)
        if self.bias is not None:
            self.bias.requires_grad_(False)
        self.ranks = dict(ranks)
        self.scaling = {}
        self.state = state
        dev, dtype = base.weight.device, base.weight.dtype
        for name in ADAPTERS:
            rank = self.ranks.get(name, 0)
            if rank <= 0:
                continue
            a = torch.empty(rank, self.in_features, dtype=torch.float32)
            # kaiming_uniform_(a=sqrt(5)) as PEFT/nn.Linear do, drawn from our generator for determinism.
            bound = math.sqrt(6.0 / ((1 + 5.0) * self.in_features))
            a.uniform_(-bound, bound, generator=generator)
            setattr(self, f"{name}_A", nn.Parameter(a.to(device=dev, dtype=dtype)))
            setattr(
                self, f"{name}_B", nn.Parameter(torch.zeros(self.out_features, rank, device=dev, dtype=dtype))
            )
            self.scaling[name] = float(alphas[name]) / rank

    def has(self, adapter: str) -> bool:
        return self.ranks.get(adapter, 0) > 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.linear(x, self.weight, self.bias)
        state = self.state
        # scale 0 skips the adapter, it never multiplies by 0: scale 0 is exactly "adapter absent"
        active = [n for n in ADAPTERS if self.has(n) and state.scales[n] != 0.0]
        if not active:
            return out
        # Both adapters as one low-rank product: A stacked [r_r + r_f, in], B side by side with each
        # adapter's scaling folded in [out, r_r + r_f]. One pair of matmuls instead of two, and the
        # same values whether or not masks are installed (masks only change the backward).
        a_parts = [getattr(self, f"{n}_A") for n in active]
        b_parts = [getattr(self, f"{n}_B") * (self.scaling[n] * state.scales[n]) for n in active]
        a = a_parts[0] if len(a_parts) == 1 else torch.cat(a_parts, dim=0)
        b = b_parts[0] if len(b_parts) == 1 else torch.cat(b_parts, dim=1)
        masks = state.masks if torch.is_grad_enabled() else None
        # keeps_all is set together with masks (set_masks)
        if masks is None or all(cast(dict[str, bool], state.keeps_all)[n] for n in active):
            if masks is not None:
                _check_rows(masks[active[0]], x)
            return out + F.linear(F.linear(x, a), b)
        return out + _routed_delta(x, a, b, _rank_mask(state, self.ranks, active))

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.out_features}, ranks={self.ranks}"


class _RoutedLoRA(torch.autograd.Function):
    """``B (A x)`` whose A and B gradients keep only rows where ``keep``; the input gradient is exact.

    The masks are applied to the rank-sized tensors: B's gradient is ``g^T (keep * A x)`` and A's is
    ``(keep * g B)^T x``, which equal the unmasked formulas summed over the kept rows only. ``where``
    selects, it never multiplies by 0, so a dropped row cannot turn an inf into nan.
    """

    @staticmethod
    def forward(
        ctx: torch.autograd.function.FunctionCtx,
        x: torch.Tensor,
        a: torch.Tensor,
        b: torch.Tensor,
        keep: torch.Tensor,
    ) -> torch.Tensor:
        xa = F.linear(x, a)
        ctx.save_for_backward(x, a, b, xa, keep)
        return F.linear(xa, b)

    @staticmethod
    # ctx is Any: torch types the context of backward loosely (saved_tensors, needs_input_grad)
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, a, b, xa, keep = ctx.saved_tensors
        zero = torch.zeros((), dtype=grad.dtype, device=grad.device)
        grad_xa = grad @ b.to(grad.dtype)  # [..., rank], every row: the path to earlier layers
        grad_x = grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = (grad_xa @ a.to(grad.dtype)).to(x.dtype)
        if ctx.needs_input_grad[2]:
            kept_xa = torch.where(keep, xa.to(grad.dtype), zero)
            grad_b = (grad.reshape(-1, grad.shape[-1]).T @ kept_xa.reshape(-1, kept_xa.shape[-1])).to(b.dtype)
        if ctx.needs_input_grad[1]:
            kept_grad_xa = torch.where(keep, grad_xa, zero)
            grad_a = (
                kept_grad_xa.reshape(-1, kept_grad_xa.shape[-1]).T @ x.reshape(-1, x.shape[-1]).to(grad.dtype)
            ).to(a.dtype)
        return grad_x, grad_a, grad_b, None


def _check_rows(mask: torch.Tensor, x: torch.Tensor) -> None:
    if mask.shape[0] != x.shape[0]:
        # A caller chunked the batch without chunking the masks: fail loudly rather than misroute.
        raise RuntimeError(
            f"routing mask has {mask.shape[0]} rows but the layer saw a batch of {x.shape[0]}; "
            "the loss forward must see the whole per-device batch at once"
        )


def _routed_delta(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``B A x`` with the same values; A and B get gradient only from rows where ``mask`` is True.

    ``mask`` is [batch] (one flag per sample) or [batch, rank] (per sample and rank component, for
    stacked adapters: each component follows its own adapter's mask).
    """
    _check_rows(mask, x)
    width = mask.shape[1] if mask.dim() == 2 else 1
    keep = mask.to(device=x.device, dtype=torch.bool).view(mask.shape[0], *([1] * (x.dim() - 2)), width)
    # Function.apply is untyped in torch; it returns what forward returns
    apply = cast(Callable[..., torch.Tensor], _RoutedLoRA.apply)
    return apply(x, a, b, keep)


def _rank_mask(state: RoutingState, ranks: dict[str, int], active: list[str]) -> torch.Tensor:
    """[batch, sum of active ranks]: each adapter's per-sample mask repeated over its rank components.

    Cached per micro-batch (``set_masks`` clears it): every layer with the same ranks shares one.
    """
    key = tuple((n, ranks[n]) for n in active)
    cached = state.rank_masks.get(key)
    if cached is None:
        cached = torch.cat(
            [
                cast(dict[str, torch.Tensor], state.masks)[n].to(torch.bool).view(-1, 1).expand(-1, ranks[n])
                for n in active
            ],
            dim=1,
        )
        state.rank_masks[key] = cached
    return cached


def inject_adapters(
    model: nn.Module, *, target_modules: list[str], ranks: dict[str, int], alphas: dict[str, float], seed: int
) -> list[str]:
    """Replace every ``nn.Linear`` whose last name part is in ``target_modules`` by a DualLoRALinear.

    Freezes every other parameter (only adapters train). Returns the replaced module names. A target
    name that matches no linear layer is an error (a typo must not silently train fewer layers).
    """
    get_output = getattr(model, "get_output_embeddings", None)
    output = get_output() if get_output is not None else None
    for name, module in model.named_modules():
        if module is output and name.rsplit(".", 1)[-1] in target_modules:
            # TRL computes training log-probs from lm_head.weight directly (fused_lm_head): an adapter
            # there would change generation but never train, and train/sample would disagree.
            raise ValueError(
                f"routing.target_modules may not include the output layer `{name}`: TRL "
                "computes log-probs from its weight directly, so its adapter would never train"
            )
    state = RoutingState()
    generator = torch.Generator().manual_seed(seed)
    found: dict[str, list[str]] = {t: [] for t in target_modules}
    for p in model.parameters():
        p.requires_grad_(False)
    # list() first: we mutate the module tree while walking it.
    for name, module in list(model.named_modules()):
        leaf = name.rsplit(".", 1)[-1]
        if leaf in found and isinstance(module, nn.Linear) and not isinstance(module, DualLoRALinear):
            parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
            setattr(
                parent,
                leaf,
                DualLoRALinear(module, ranks=ranks, alphas=alphas, state=state, generator=generator),
            )
            found[leaf].append(name)
    missing = [t for t, names in found.items() if not names]
    if missing:
        linear_names = sorted(
            {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)}
        )
        raise ValueError(
            f"routing.target_modules {missing} match no linear layer of this model; "
            f"its linear layers are named {linear_names}"
        )
    model._routing_state = state  # type: ignore[assignment]  # a plain attribute, not a submodule
    return [n for names in found.values() for n in names]


def routing_state(model: nn.Module) -> RoutingState:
    state = getattr(_unwrap(model), "_routing_state", None)
    if state is None:
        raise ValueError("this model has no routing adapters; call inject_adapters first")
    return cast(RoutingState, state)


def set_scales(model: nn.Module, retain: float = 1.0, forget: float = 1.0) -> None:
    """Set the run-time multiplier of each adapter's output (eval modes: (1,1), (1,0), (0,1))."""
    routing_state(model).scales.update(retain=float(retain), forget=float(forget))


@contextmanager
def scales(model: nn.Module, retain: float, forget: float) -> Iterator[None]:
    """``set_scales`` for the duration of a block, restoring the previous scales afterwards."""
    state = routing_state(model)
    before = dict(state.scales)
    set_scales(model, retain, forget)
    try:
        yield
    finally:
        state.scales.update(before)


def set_masks(model: nn.Module, masks: dict[str, torch.Tensor] | None) -> None:
    """Install per-sample gradient masks (adapter -> bool [batch]); None routes nothing."""
    state = routing_state(model)
    if masks is not None and set(masks) != set(ADAPTERS):
        raise ValueError(f"masks must be given for exactly {ADAPTERS}, got {sorted(masks)}")
    keeps_all = None
    if masks is not None:  # one host sync per adapter and micro-batch
        keeps_all = {name: bool(mask.to(torch.bool).all()) for name, mask in masks.items()}
    state.masks, state.keeps_all, state.rank_masks = masks, keeps_all, {}


@contextmanager
def routed_masks(model: nn.Module, masks: dict[str, torch.Tensor] | None) -> Iterator[None]:
    """Masks for a block that must contain the forward AND the backward (checkpoint recompute)."""
    set_masks(model, masks)
    try:
        yield
    finally:
        set_masks(model, None)


def _unwrap(model: nn.Module) -> nn.Module:
    # accelerate/DDP wrap the model in `.module`; the routing state lives on the inner model.
    return getattr(model, "module", model) if not hasattr(model, "_routing_state") else model
