"""sweepgen: a declarative sweep compiler and validator for RL post-training."""

__version__ = "0.1.0"
