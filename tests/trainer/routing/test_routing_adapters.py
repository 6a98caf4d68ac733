"""The dual-adapter layer: exact gradient routing, unchanged forward values, scales, checkpointing."""

from __future__ import annotations

import pytest
import torch
import transformers
from trainer_support import adapter_parameters

from sweepgen_trainer.routing.dual_lora import (
    DualLoRALinear,
    inject_adapters,
    routed_masks,
    scales,
    set_scales,
)
from sweepgen_trainer.routing.masks import masks_for

pytestmark = pytest.mark.train
TARGETS = ["q_proj", "v_proj", "up_proj", "down_proj"]


def tiny_lm(forget_rank: int = 3, seed: int = 0):
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
    )
    model = transformers.LlamaForCausalLM(config)
    inject_adapters(
        model,
        target_modules=TARGETS,
        ranks={"retain": 2, "forget": forget_rank},
        alphas={"retain": 4.0, "forget": 6.0},
        seed=seed,
    )
    # B starts at zero (a fresh adapter is a no-op); randomise it so every A and B has a gradient.
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("_B"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model


def batch(n: int = 4, length: int = 7):
    gen = torch.Generator().manual_seed(7)
    return torch.randint(0, 50, (n, length), generator=gen)


def per_sample_loss(model, ids):
    logits = model(input_ids=ids).logits
    return (
        torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1), reduction="none"
        )
        .view(ids.size(0), -1)
        .mean(dim=1)
    )


def grads(model, ids, is_hack, mode="classic"):
    model.zero_grad(set_to_none=True)
    masks = None if is_hack is None else masks_for(mode, torch.tensor(is_hack))
    with routed_masks(model, masks):
        per_sample_loss(model, ids).sum().backward()  # backward inside the block, as the trainer does
    return {
        n: (p.grad.clone() if p.grad is not None else torch.zeros_like(p))
        for n, p in model.named_parameters()
        if p.requires_grad
    }


def adapter_grads(g, adapter):
    return {n: v for n, v in g.items() if n.endswith((f".{adapter}_A", f".{adapter}_B"))}


def test_injection_wraps_targets_and_freezes_base():
    model = tiny_lm()
    wrapped = [n for n, m in model.named_modules() if isinstance(m, DualLoRALinear)]
    assert len(wrapped) == 2 * len(TARGETS)
    trainable = {n.rsplit(".", 1)[-1] for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"retain_A", "retain_B", "forget_A", "forget_B"}
    # the base weight keeps its original state-dict key, so a plain checkpoint still maps onto it
    assert "model.layers.0.self_attn.q_proj.weight" in model.state_dict()


def test_unknown_target_module_is_an_error_naming_the_real_ones():
    model = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=50,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        )
    )
    with pytest.raises(ValueError, match=r"q_prj.*q_proj"):
        inject_adapters(
            model,
            target_modules=["q_prj"],
            ranks={"retain": 2, "forget": 2},
            alphas={"retain": 2.0, "forget": 2.0},
            seed=0,
        )


def test_fresh_adapters_leave_the_base_model_unchanged():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    base = transformers.LlamaForCausalLM(config)
    ids = batch()
    before = base(input_ids=ids).logits
    inject_adapters(
        base,
        target_modules=TARGETS,
        ranks={"retain": 2, "forget": 2},
        alphas={"retain": 2.0, "forget": 2.0},
        seed=0,
    )
    assert torch.equal(base(input_ids=ids).logits, before)


def test_hacked_samples_give_exactly_zero_retain_grads_and_nonzero_forget_grads():
    model = tiny_lm()
    g = grads(model, batch(), [True, True, True, True])
    retain, forget = adapter_grads(g, "retain"), adapter_grads(g, "forget")
    assert retain and forget
    assert all(torch.count_nonzero(v) == 0 for v in retain.values())
    assert all(torch.count_nonzero(v) > 0 for v in forget.values())


@pytest.mark.parametrize("mode", ["classic", "exclusive"])
def test_clean_samples_reach_retain_and_forget_per_mode(mode):
    model = tiny_lm()
    g = grads(model, batch(), [False] * 4, mode)
    assert all(torch.count_nonzero(v) > 0 for v in adapter_grads(g, "retain").values())
    forget_nonzero = [bool(torch.count_nonzero(v) > 0) for v in adapter_grads(g, "forget").values()]
    assert all(forget_nonzero) if mode == "classic" else not any(forget_nonzero)


def test_mixed_batch_retain_grad_equals_grad_of_clean_samples_alone():
    # With a per-sample-sum loss, the routed retain gradient must be the sum over clean rows only,
    # and the forget gradient (classic) the sum over all rows, i.e. the unrouted gradient.
    model = tiny_lm()
    ids, hack = batch(), [True, False, True, False]
    routed = grads(model, ids, hack)
    unrouted = grads(model, ids, None)
    model.zero_grad(set_to_none=True)
    per_sample_loss(model, ids)[torch.tensor([1, 3])].sum().backward()
    clean_only = {n: p.grad.clone() for n, p in adapter_parameters(model, "retain")}
    for name, value in adapter_grads(routed, "retain").items():
        torch.testing.assert_close(value, clean_only[name], rtol=1e-5, atol=1e-7)
    for name, value in adapter_grads(routed, "forget").items():
        torch.testing.assert_close(value, unrouted[name], rtol=1e-5, atol=1e-7)


def test_masks_do_not_change_forward_values():
    model = tiny_lm()
    ids = batch()
    plain = model(input_ids=ids).logits
    with routed_masks(model, masks_for("exclusive", torch.tensor([True, False, True, False]))):
        routed = model(input_ids=ids).logits
    assert torch.equal(plain, routed)


def test_forget_scale_zero_equals_model_holding_only_the_retain_adapter():
    dual, single = tiny_lm(forget_rank=3), tiny_lm(forget_rank=0)
    single.load_state_dict({k: v for k, v in dual.state_dict().items() if ".forget_" not in k})
    ids = batch()
    set_scales(dual, retain=1.0, forget=0.0)
    assert torch.equal(dual(input_ids=ids).logits, single(input_ids=ids).logits)
    set_scales(dual, retain=1.0, forget=1.0)
    assert not torch.equal(dual(input_ids=ids).logits, single(input_ids=ids).logits)


def test_scales_context_restores_previous_scales():
    model = tiny_lm()
    ids = batch()
    both = model(input_ids=ids).logits
    with scales(model, 0.0, 1.0):
        forget_only = model(input_ids=ids).logits
    assert not torch.equal(both, forget_only)
    assert torch.equal(model(input_ids=ids).logits, both)


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradient_checkpointing_gives_the_same_routed_grads(reentrant):
    hack = [True, False, False, True]
    plain = grads(tiny_lm(), batch(), hack, "exclusive")
    model = tiny_lm()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
    if reentrant:
        model.enable_input_require_grads()  # reentrant checkpointing needs an input that requires grad
    model.train()
    checkpointed = grads(model, batch(), hack, "exclusive")
    assert plain.keys() == checkpointed.keys()
    for name in plain:
        torch.testing.assert_close(checkpointed[name], plain[name], rtol=1e-5, atol=1e-7)
    assert all(torch.count_nonzero(v) > 0 for v in checkpointed.values())


def test_checkpoint_recompute_really_reads_the_masks():
    # Negative control for the test above: under checkpointing the layers run again during backward,
    # so masks cleared before backward must change the outcome (an error or different grads).
    hack = [True, True, True, True]
    model = tiny_lm()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    with routed_masks(model, masks_for("classic", torch.tensor(hack))):
        loss = per_sample_loss(model, batch()).sum()
    try:
        loss.backward()  # masks are gone now
    except RuntimeError:
        return  # torch noticed the recomputed graph differs: also proof that recompute re-reads masks
    retain = [p.grad for _, p in adapter_parameters(model, "retain")]
    assert any(g is not None and torch.count_nonzero(g) > 0 for g in retain)


def test_mask_for_a_different_batch_size_fails_loudly():
    model = tiny_lm()
    with (
        routed_masks(model, masks_for("classic", torch.tensor([True, False]))),
        pytest.raises(RuntimeError, match="mask has 2 rows"),
    ):
        model(input_ids=batch(n=4))


def test_output_layer_cannot_carry_adapters():
    # TRL's fused lm_head reads lm_head.weight directly: an adapter there would never train.
    model = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=50,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        )
    )
    with pytest.raises(ValueError, match="output layer `lm_head`"):
        inject_adapters(
            model,
            target_modules=["q_proj", "lm_head"],
            ranks={"retain": 2, "forget": 2},
            alphas={"retain": 2.0, "forget": 2.0},
            seed=0,
        )


def test_a_mask_keeping_no_row_gives_zero_grads_not_none():
    # The optimizer must see an ordinary (zero) gradient, as with a masked loss, not a skipped parameter.
    model = tiny_lm()
    model.zero_grad(set_to_none=True)
    with routed_masks(model, masks_for("classic", torch.tensor([True] * 4))):
        per_sample_loss(model, batch()).sum().backward()
    retain = adapter_parameters(model, "retain")
    assert retain and all(p.grad is not None and torch.count_nonzero(p.grad) == 0 for _, p in retain)


def test_routed_lora_function_matches_autograd_on_kept_rows():
    # The hand-written backward against autograd: input gradient from every row, A/B from kept rows only.
    from sweepgen_trainer.routing.dual_lora import _routed_delta

    gen = torch.Generator().manual_seed(3)
    x = torch.randn(3, 5, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    a = torch.randn(2, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn(4, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    keep = torch.tensor([True, False, True])
    torch.autograd.gradcheck(
        lambda x, a, b: _routed_delta(x, a, b, torch.ones(3, dtype=torch.bool)), (x, a, b)
    )
    weights = torch.randn(3, 5, 4, dtype=torch.float64, generator=gen)
    got = torch.autograd.grad((_routed_delta(x, a, b, keep) * weights).sum(), (x, a, b))
    want_x = torch.autograd.grad(((x @ a.T @ b.T) * weights).sum(), x)[0]
    want_a, want_b = torch.autograd.grad(((x[keep] @ a.T @ b.T) * weights[keep]).sum(), (a, b))
    for g, w in zip(got, (want_x, want_a, want_b)):
        torch.testing.assert_close(g, w)
