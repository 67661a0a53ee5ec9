"""Spec §9: run the arms on instances, measure, decide."""
