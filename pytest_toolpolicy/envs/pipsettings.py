"""What a build step may see of the host's environment: an allow-list, and pip's settings.

The trusted steps on the host (``venvs.py``: the venv module of a found interpreter) get
``scrubbed_environ``: what pip and a build backend may need from the host environment, and
nothing else (API keys, the harness's own venv and ``PYTHONPATH`` stay out).

The sandboxed build steps (``builder.py``) get ``build_environ``: pip's own settings reach
them — ``PIP_*`` variables, the user's pip.conf (as ``PIP_CONFIG_FILE``: the sandbox's HOME
is not the user's) and, bound read-only (``pip_paths``), the local index and wheel
directories they name — with the host's proxy and CA settings. The machine-wide constraint
file is lifted (``PIP_CONSTRAINT`` of ``/dev/null`` unless one is set): the spec's pins
decide, as in SWE-bench's images.
"""

from __future__ import annotations

import configparser
import contextlib
import os
from collections.abc import Mapping

# What pip and a build backend may need from the host environment; everything else (API keys,
# the harness's own venv and PYTHONPATH) stays out.
_PASSED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "TZ", "SOURCE_DATE_EPOCH",
        "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    }
)  # fmt: skip
_PASSED_PREFIXES = ("LC_", "PIP_")
_CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
_PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
# pip settings that name local files or directories the sandbox must be able to read.
_PIP_PATH_KEYS = ("find-links", "index-url", "extra-index-url", "constraint", "cert", "client-cert")
_GLOBAL_PIP = ("/etc/pip.conf", "/etc/xdg/pip")


def scrubbed_environ(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k in _PASSED or k.startswith(_PASSED_PREFIXES)}


def build_environ(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """pip's settings and the host's proxy and CA settings, for the sandboxed build steps."""
    env = {
        k: v for k, v in environ.items() if k.startswith("PIP_") or k in (*_CA_VARS, *_PROXY_VARS)
    }
    user = _user_pip_config(environ)
    if user and "PIP_CONFIG_FILE" not in env:
        env["PIP_CONFIG_FILE"] = user  # the sandbox's HOME is not the user's
    env.setdefault("PIP_CONSTRAINT", "/dev/null")
    env |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    return env | uv_settings(env)


# pip's variables that uv has a name of its own for (uv reads no pip.conf).
_UV_NAMES = {
    "PIP_INDEX_URL": "UV_INDEX_URL",
    "PIP_EXTRA_INDEX_URL": "UV_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS": "UV_FIND_LINKS",
    "PIP_DEFAULT_TIMEOUT": "UV_HTTP_TIMEOUT",
}


def uv_settings(pip_env: Mapping[str, str]) -> dict[str, str]:
    """The same index settings for uv, which runs the installs: where pip is told to use no
    index at all, uv is told to stay offline (its cache and the find-links directories)."""
    env = {uv: pip_env[pip] for pip, uv in _UV_NAMES.items() if pip_env.get(pip)}
    if "UV_FIND_LINKS" in env:
        env["UV_FIND_LINKS"] = ",".join(env["UV_FIND_LINKS"].split())
    if pip_env.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on"):
        env["UV_OFFLINE"] = "1"
    return env


def _user_pip_config(environ: Mapping[str, str]) -> str | None:
    if environ.get("PIP_CONFIG_FILE"):
        return environ["PIP_CONFIG_FILE"]
    home = environ.get("HOME", "")
    config = environ.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    for path in (f"{config}/pip/pip.conf", f"{home}/.pip/pip.conf"):
        if path.startswith("/") and os.path.isfile(path):
            return path
    return None


def pip_paths(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """Host paths the sandboxed pip reads: its config files and the local indexes, wheel
    directories, constraint and certificate files they (or ``PIP_*`` variables) name."""
    files = [*_GLOBAL_PIP, _user_pip_config(environ) or ""]
    values = [v for k, v in environ.items() if k.startswith("PIP_") or k in _CA_VARS]
    for config in files:
        if os.path.isfile(config):
            parser = configparser.RawConfigParser()
            with contextlib.suppress(configparser.Error, OSError, UnicodeDecodeError):
                parser.read(config, encoding="utf-8")
            for section in parser.sections():
                values += [
                    parser.get(section, k) for k in _PIP_PATH_KEYS if parser.has_option(section, k)
                ]
    paths = dict.fromkeys(f for f in files if os.path.exists(f))
    for token in " ".join(values).split():
        path = token.removeprefix("file://")
        if not path.startswith("/") or not os.path.exists(path) or path == "/dev/null":
            continue
        # A simple index's pages link to files beside its simple/ directory (../../files).
        paths[os.path.dirname(path) if os.path.basename(path.rstrip("/")) == "simple" else path] = (
            None
        )
    return tuple(p for p in paths if os.path.realpath(p) != "/")
