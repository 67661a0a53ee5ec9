"""The task an arm is given for an instance (a stage of ``pipeline.py``)."""

from __future__ import annotations

from ..bench.instance import Instance
from ..envs.environment import Environment
from ..envs.runners import runner_for
from ..grading.directives import runner_args
from ..types import Task


def task_of(instance: Instance, env: Environment | None = None) -> Task:
    """The arm's task. Its post-patch test target: ``repro_target``, else the FAIL_TO_PASS ids
    as the repository's runner takes them (``envs/runners.py``): pytest node ids for an id
    SWE-bench cut short; a runner's own ids as they are (django's, sympy's), which the
    toolbox's ``OwnRunner`` knows."""
    target = instance.test_target
    parser = env.spec.log_parser if env is not None and env.spec is not None else "pytest"
    if not instance.repro_target and instance.FAIL_TO_PASS and runner_for(parser).node_ids:
        target = " ".join(runner_args(parser, instance.FAIL_TO_PASS)) or target
    return Task(instance.instance_id, instance.problem_statement, target)
