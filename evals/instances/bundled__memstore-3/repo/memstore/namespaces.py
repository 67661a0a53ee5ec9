"""Namespaces: separate key spaces inside one store.

Internally a key of a named namespace is stored *qualified* as ``"<namespace>:<key>"``;
keys of the default namespace (``""``) are stored as they are, so a store that never uses
namespaces keeps plain keys. Namespace names may not contain the separator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import MemStore

SEPARATOR = ":"
DEFAULT_NAMESPACE = ""


def validate_namespace(name: str) -> str:
    """Return ``name`` if it is a usable namespace name, else raise ``ValueError``."""
    if not isinstance(name, str):
        raise TypeError(f"namespace must be a str, not {type(name).__name__}")
    if SEPARATOR in name:
        raise ValueError(f"namespace {name!r} may not contain {SEPARATOR!r}")
    return name


def qualify(namespace: str, key: str) -> str:
    """The internal key for ``key`` in ``namespace``."""
    if not isinstance(key, str):
        raise TypeError(f"keys must be str, not {type(key).__name__}")
    if validate_namespace(namespace) == DEFAULT_NAMESPACE:
        return key
    return f"{namespace}{SEPARATOR}{key}"


def split(qualified: str) -> tuple[str, str]:
    """The inverse of :func:`qualify`: ``(namespace, key)``."""
    if SEPARATOR not in qualified:
        return DEFAULT_NAMESPACE, qualified
    namespace, _, key = qualified.partition(SEPARATOR)
    return namespace, key


class Namespace:
    """A view of one namespace of a store, with the store's API minus the keyword.

    >>> from memstore import MemStore
    >>> users = MemStore().namespace("users")
    >>> users.remember("42", "maya")
    >>> users.recall("42")
    'maya'
    """

    def __init__(self, store: MemStore, name: str) -> None:
        self.store = store
        self.name = validate_namespace(name)

    def remember(self, key: str, value: Any, ttl: float | None = None) -> None:
        self.store.remember(key, value, ttl, namespace=self.name)

    def recall(self, key: str, default: Any = None) -> Any:
        return self.store.recall(key, default, namespace=self.name)

    def forget(self, key: str) -> bool:
        return self.store.forget(key, namespace=self.name)

    def keys(self) -> list[str]:
        return self.store.keys(namespace=self.name)

    def clear(self) -> int:
        """Forget every key of this namespace; returns how many were forgotten."""
        return self.store.clear(namespace=self.name)

    def __contains__(self, key: str) -> bool:
        return self.store.contains(key, namespace=self.name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __repr__(self) -> str:
        return f"Namespace({self.name!r})"
