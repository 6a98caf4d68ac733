"""Readers of foreign config formats (one module per format) and the semantic ``diff`` over them."""
