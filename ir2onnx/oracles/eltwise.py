"""Placeholder: filled by the Reshape issue."""
