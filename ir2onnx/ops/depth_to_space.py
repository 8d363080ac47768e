"""Placeholder: filled by its op issue."""
