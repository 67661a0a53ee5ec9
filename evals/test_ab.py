"""The §9 A/B protocol as a pytest session.

    pytest evals --toolpolicy=ab                        # candidate policy vs the current loop
    pytest evals --toolpolicy=ab --toolpolicy-ablate -n auto   # plus every gate off, in parallel

Each instance × arm × variant is one item, ``test_instance[<instance_id>-policy]``,
``[...-current]``, ``[...-policy-no:<gate>]``. It passes when its run completed and was
measured (an unresolved instance is a measurement, not a failure) and fails with the reason on a
harness fault. The decision table is printed at the end and written under the report directory.
"""


def test_instance(toolpolicy_item):
    toolpolicy_item.run()
