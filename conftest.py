"""Root conftest: keeps the example repositories' own test suites out of this project's run."""

collect_ignore_glob = ["pytest_toolpolicy/demo/*", "pytest_toolpolicy/bench/bundled/*"]
