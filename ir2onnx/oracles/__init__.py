"""NumPy reference implementations of the IR operations (see registry.py)."""
