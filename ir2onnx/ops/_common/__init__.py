"""Helpers that several op families share (a family-private helper sits beside its family as ops/_<name>.py)."""
