"""The task's Django test settings (PATCHGRADE_DJANGO_SETTINGS, default `test_sqlite`, as
SWE-bench runs Django's suite) with patchgrade's JUnit-writing test runner. Part of patchgrade;
written into each run's read-only scripts directory."""

import importlib
import os

_task = importlib.import_module(os.environ.get("PATCHGRADE_DJANGO_SETTINGS", "test_sqlite"))
globals().update((k, v) for k, v in vars(_task).items() if k.isupper())
TEST_RUNNER = "patchgrade_django.JUnitRunner"
