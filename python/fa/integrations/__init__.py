"""Integrations of fa with other libraries (transformers)."""
