"""A loop of your own, as a `cmd:` agent: the smallest agent that can fix something.

    pytest --toolpolicy=ab --toolpolicy-current='cmd:python $TOOLPOLICY_PROJECT/evals/agents/minimal_agent.py'

It reads its task from $TOOLPOLICY_TASK_FILE, asks the model at $OPENAI_BASE_URL (the harness's
bridge) for one shell command at a time in a ```bash block, runs it in its working directory
(the repository), shows the model what it printed, and stops when the model says DONE or after
MAX_STEPS. At the end it prints the tokens it was told it used, which the harness's own count
(the endpoint's report, through the bridge) must equal.
"""

import os
import re
import subprocess

import openai

MAX_STEPS = int(os.environ.get("MINIMAL_AGENT_STEPS", "4"))
SYSTEM = (
    "You fix bugs in the repository in your working directory. Reply with one shell command in a"
    " ```bash block, or with DONE when the fix is made."
)

client = openai.OpenAI(
    max_retries=0
)  # the bridge's address and a placeholder key, from the harness
with open(os.environ["TOOLPOLICY_TASK_FILE"], encoding="utf-8") as handle:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": handle.read()}]
seen = [0, 0]
for _ in range(MAX_STEPS):
    try:
        reply = client.chat.completions.create(
            model=os.environ.get("TOOLPOLICY_MODEL", "model"), messages=messages, max_tokens=256
        )
    except openai.APIStatusError as exc:  # a limit reached, or the model failed: stop here
        print("stopped:", exc.status_code, exc.message)
        break
    if reply.usage is not None:
        seen[0] += reply.usage.prompt_tokens
        seen[1] += reply.usage.completion_tokens
    text = reply.choices[0].message.content or ""
    messages.append({"role": "assistant", "content": text})
    command = re.search(r"```(?:bash|sh)?\s*\n(.*?)```", text, re.S)
    if "DONE" in text or command is None:
        break
    run = subprocess.run(command.group(1), shell=True, capture_output=True, text=True, timeout=60)
    messages.append(
        {
            "role": "user",
            "content": f"exit {run.returncode}\n{run.stdout[-2000:]}{run.stderr[-1000:]}",
        }
    )
print(f"tokens the agent was told: prompt {seen[0]}, completion {seen[1]}")
