"""Ranking methods. Importing this package registers every method in the registry."""

from . import classical  # noqa: F401
