"""Ranking methods. Importing this package registers every method in the registry."""

from . import classical  # noqa: F401
from . import condorcet  # noqa: F401
from . import kemeny  # noqa: F401
from . import epp  # noqa: F401
from . import sco  # noqa: F401
from . import benchmark_rules  # noqa: F401
