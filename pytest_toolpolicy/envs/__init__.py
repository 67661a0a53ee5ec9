"""Environments: what an instance's tests run in, built once per spec and setup commit."""
