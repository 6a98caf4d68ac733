"""Reward shaping for two-role debates: per-role values from team and individual rewards (pure Python)."""

from trainer.shaping.group import ROLES, Group, Turn, individual_rewards, without_role
from trainer.shaping.registry import STRATEGIES, advantages, resolve, shaped_values

__all__ = [
    "ROLES",
    "STRATEGIES",
    "Group",
    "Turn",
    "advantages",
    "individual_rewards",
    "resolve",
    "shaped_values",
    "without_role",
]
