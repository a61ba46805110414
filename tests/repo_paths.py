"""Where the tests find the repository: the test files live in sub-folders by the package
they specify, the shared helpers and ``data/`` stay here (pyproject's ``pythonpath``)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
