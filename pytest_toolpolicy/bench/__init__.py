"""The benchmark: SWE-bench-style instances and where they come from."""

from .instance import Instance, InstanceError, instance_from_row
from .load import DatasetError, DatasetUnavailable, LoadResult, load_instances

__all__ = [
    "DatasetError",
    "DatasetUnavailable",
    "Instance",
    "InstanceError",
    "LoadResult",
    "instance_from_row",
    "load_instances",
]
