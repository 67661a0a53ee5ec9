"""SWE-bench's own log parsers (swebench/harness/log_parsers/python.py, 4.1), transcribed as the
reference the project's parsers (``grading/parsers.py``) and test ids (``grading/testids.py``)
are checked against: regexes, quadratic scans and all.

One deviation, marked where it is: where SWE-bench's code indexes a token a line does not have
(a lone "FAILED", "FAIL:" or " PASSED " line) it raises ``IndexError``, failing the whole
evaluation; here, as in the project's parsers, that line records nothing.
"""

from __future__ import annotations

import re

STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
_ESCAPES = "".join(chr(char) for char in range(1, 32))


def pytest(log: str, options: bool = False, mouse: bool = False) -> dict[str, str]:
    option_pattern = re.compile(r"(.*?)\[(.*)\]")
    status_map = {}
    for line in log.split("\n"):
        if mouse:
            line = line.replace("MouseButton.LEFT", "1")
            line = line.replace("MouseButton.RIGHT", "3")
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            test_case = line.split()
            if len(test_case) <= 1:
                continue
            name = test_case[1]
            has_option = option_pattern.search(name) if options else None
            if has_option:
                main, option = has_option.groups()
                if option.startswith("/") and not option.startswith("//") and "*" not in option:
                    option = "/" + option.split("/")[-1]
                name = f"{main}[{option}]"
            status_map[name] = test_case[0]
    return status_map


def pytest_v2(log: str) -> dict[str, str]:
    status_map = {}
    for line in log.split("\n"):
        line = re.sub(r"\[(\d+)m", "", line)
        line = line.translate(str.maketrans("", "", _ESCAPES))
        if any(line.startswith(x) for x in STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            test_case = line.split()
            if len(test_case) >= 2:
                status_map[test_case[1]] = test_case[0]
        elif any(line.endswith(x) for x in STATUSES):
            test_case = line.split()
            if len(test_case) >= 2:
                status_map[test_case[0]] = test_case[1]
    return status_map


def seaborn(log: str) -> dict[str, str]:
    status_map = {}
    for line in log.split("\n"):
        if line.startswith("FAILED"):
            parts = line.split()
            if len(parts) > 1:  # deviation: SWE-bench raises IndexError
                status_map[parts[1]] = "FAILED"
        elif " PASSED " in line:
            parts = line.split()
            if len(parts) > 1 and parts[1] == "PASSED":  # deviation: len check
                status_map[parts[0]] = "PASSED"
        elif line.startswith("PASSED"):
            parts = line.split()
            if len(parts) > 1:  # deviation: SWE-bench raises IndexError
                status_map[parts[1]] = "PASSED"
    return status_map


def django(log: str) -> dict[str, str]:
    status_map = {}
    prev_test = None
    for line in log.split("\n"):
        line = line.strip()
        if "--version is equivalent to version" in line:
            status_map["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            prev_test = line.split(" ... ")[0]
        for suffix in (" ... ok", " ... OK", " ...  OK"):
            if line.endswith(suffix):
                if line.strip().startswith(
                    "Applying sites.0002_alter_domain_unique...test_no_migrations"
                ):
                    line = line.split("...", 1)[-1].strip()
                status_map[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            status_map[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            status_map[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:") and len(line.split()) > 1:  # deviation: len check
            status_map[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            status_map[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:") and len(line.split()) > 1:  # deviation: len check
            status_map[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and prev_test is not None:
            status_map[prev_test] = "PASSED"
    patterns = [
        r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
        r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
        r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
    ]
    for pattern in patterns:
        for match in re.finditer(pattern, log, re.MULTILINE):
            status_map[match.group(1)] = "PASSED"
    return status_map


def sympy(log: str) -> dict[str, str]:
    status_map = {}
    for match in re.findall(r"(_*) (.*)\.py:(.*) (_*)", log):
        status_map[f"{match[1]}.py:{match[2]}"] = "FAILED"
    for line in log.split("\n"):
        line = line.strip()
        if line.startswith("test_"):
            if line.endswith(" E"):
                status_map[line.split()[0]] = "ERROR"
            if line.endswith(" F"):
                status_map[line.split()[0]] = "FAILED"
            if line.endswith(" ok"):
                status_map[line.split()[0]] = "PASSED"
    return status_map


REFERENCE = {
    "pytest": pytest,
    "pytest_options": lambda log: pytest(log, options=True),
    "pytest_v2": pytest_v2,
    "matplotlib": lambda log: pytest(log, mouse=True),
    "seaborn": seaborn,
    "django": django,
    "sympy": sympy,
}
