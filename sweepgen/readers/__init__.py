"""Readers of foreign config formats (in rooms by kind) and the semantic ``diff`` over them."""
