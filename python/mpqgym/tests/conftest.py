import pytest

import mpqgym.binary


@pytest.fixture(scope="session", autouse=True)
def gym_binary():
    """Builds (or finds) mpq-gym once, before any test's timer starts."""
    return mpqgym.binary.binary()
