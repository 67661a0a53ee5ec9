"""Secrets never reach a page: what looks like an API key, and the value of every environment
variable whose name says it holds one, is replaced before anything is rendered.

A trajectory can carry a key without anyone meaning it to: a model that ran ``env`` in its
sandbox, an endpoint's error message that echoes a header, a prompt that quoted a config file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"

# The shapes providers give their keys; long enough that ordinary words and hashes in code are
# left alone.
_PATTERNS = (
    r"sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic, OpenRouter
    r"(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}",  # GitHub
    r"hf_[A-Za-z0-9]{24,}",  # Hugging Face
    r"xai-[A-Za-z0-9]{20,}",
    r"gsk_[A-Za-z0-9]{20,}",  # Groq
    r"AIza[0-9A-Za-z_\-]{30,}",  # Google
    r"AKIA[0-9A-Z]{16}",  # AWS access key id
    r"(?i:bearer)\s+[A-Za-z0-9._\-~+/]{16,}=*",
)
# Each pattern's fixed part: a text holding none of these (almost every text) skips the regex,
# whose alternation would otherwise be tried at every character of a 24 MB site.
_MARKERS = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "hf_",
    "xai-",
    "gsk_",
    "AIza",
    "AKIA",
    "earer",
)
_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
# A value this short could be an ordinary word in a trajectory ("test", "1"): not replaced.
_MIN_SECRET = 8


class Redactor:
    """Replaces the known key shapes and these environment variables' values."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        values = sorted(
            {v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET},
            key=len,
            reverse=True,  # a value that contains another is replaced whole
        )
        parts = [re.escape(v) for v in values] + list(_PATTERNS)
        self._pattern = re.compile("|".join(parts))
        self._markers = (*values, *_MARKERS)

    def __call__(self, text: str) -> str:
        if not any(marker in text for marker in self._markers):
            return text
        return self._pattern.sub(REDACTED, text)
