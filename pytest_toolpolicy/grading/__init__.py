"""Grading: running an instance's listed tests on a workspace and judging them."""
