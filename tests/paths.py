"""Where the repository and the tests' own data are, for test modules in any folder under tests/."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DOCS = REPO / "docs"
FIXTURES = TESTS / "fixtures"
