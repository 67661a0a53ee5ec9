"""A tiny in-memory key/value store with expiry, used to demonstrate the primitives."""

from .store import MemStore

__all__ = ["MemStore"]
