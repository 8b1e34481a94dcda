"""Shared by every test folder: tests marked ``@pytest.mark.slow`` run only with ``PI_SLOW_TESTS=1``."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PI_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set PI_SLOW_TESTS=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
