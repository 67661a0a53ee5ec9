"""``sim``: a seeded, fault-injecting simulator used as the offline default model.

It knows each instance's gold patch and makes the edits that reproduce it, injecting the faults
of its profile (``default.toml``); ``sim:oracle`` makes none. It is not a language model.
"""

from .dice import DecisionLog
from .gold import Edit, GoldError, file_edits
from .model import SimModel
from .profile import ORACLE, Profile, ProfileError, default_profile, load_profile

__all__ = [
    "ORACLE",
    "DecisionLog",
    "Edit",
    "GoldError",
    "Profile",
    "ProfileError",
    "SimModel",
    "default_profile",
    "file_edits",
    "load_profile",
]
