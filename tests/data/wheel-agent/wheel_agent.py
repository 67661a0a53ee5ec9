"""A user's own agent object, run by `make wheel-check` as the current arm from an empty
directory against the installed wheel: the runner and ``AgentTask`` come from the wheel."""

from pytest_toolpolicy import AgentTask


class OneCall:
    def run(self, task: AgentTask) -> None:
        reply = task.openai_client().chat.completions.create(
            model=task.model, messages=[{"role": "user", "content": task.statement}]
        )
        task.report("bash", {"command": "echo edited"})
        with open("WHEEL_AGENT_WAS_HERE", "w") as out:
            out.write(reply.choices[0].message.content or "")


def make_agent() -> OneCall:
    return OneCall()
