"""``local:`` models: a GGUF file served by llama.cpp's server (the ``xllamacpp`` package) that
the harness starts on a loopback port and stops itself. See ``weights.py`` (which file, checked),
``serve.py`` (the server process) and ``server.py`` (starting, health, stopping)."""
