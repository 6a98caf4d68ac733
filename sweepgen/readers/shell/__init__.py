"""Shell, sbatch and launch scripts read as data through the tree-sitter bash grammar, nothing run."""
