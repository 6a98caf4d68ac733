"""Gradient routing: two LoRA adapters per linear layer ("retain" and "forget"), routed GRPO updates.

Samples flagged as reward hacking update only the forget adapter; at inference the forget adapter is
ablated (scale 0). This package file imports nothing heavy: ``sweepgen_trainer.routing.config`` must stay
importable without torch, because ``sweepgen_trainer.config:RunConfig`` (a spec ``schema``) imports it.

Modules: ``config`` (the ``routing`` config section), ``detectors`` (is-this-a-hack registry),
``dual_lora`` (the adapter module, injection, scales, masks), ``masks`` (mode -> per-sample masks),
``trainer`` (the routed GRPO trainer), ``evaluation`` (three-mode eval), ``checkpoint`` (adapter
metadata saved with each checkpoint and read back by ``python -m sweepgen_trainer.eval``).
"""
