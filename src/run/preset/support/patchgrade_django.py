"""patchgrade's JUnit writer for Django's own test runner (tests/runtests.py).

The `django` preset runs `tests/runtests.py --settings=patchgrade_django_settings`, a settings
module that is the task's (`test_sqlite` unless PATCHGRADE_DJANGO_SETTINGS names another) with
TEST_RUNNER set to the runner below: Django's DiscoverRunner, whose results are also recorded
and written as JUnit to $PATCHGRADE_JUNIT when the suite ends. Each testcase carries its class
(`module.Class`), its method, and its docstring's first line as the `description` property,
which is what Django prints (and SWE-bench's ids use) for a test that has one.

Written for every Python and Django that SWE-bench's Django instances use (Python 3.5 on), so no
f-strings. Part of patchgrade; written into each run's read-only scripts directory.
"""

import os
import time
import unittest
from xml.etree import ElementTree

from django.test.runner import DiscoverRunner

# The worst outcome of a test stands (a test that failed and whose tear-down then errored
# failed; a subtest that failed fails its test).
_RANK = {"passed": 0, "skipped": 1, "xfail": 1, "error": 2, "failure": 3}


def _where(test):
    """(classname, name, description) of a test, or of an error outside one (a class's
    setUpClass failing is reported as `setUpClass (module.Class)`)."""
    method = getattr(test, "_testMethodName", None)
    if method is not None:
        cls = type(test)
        classname = "%s.%s" % (cls.__module__, getattr(cls, "__qualname__", cls.__name__))
        description = test.shortDescription() if hasattr(test, "shortDescription") else None
        return classname, method, description
    text = str(getattr(test, "description", test))
    name, _, rest = text.partition(" (")
    return rest.rstrip(")"), name, None


class _Recorder(object):
    def __init__(self):
        self.order = []
        self.tests = {}
        self.started = {}

    def start(self, test):
        self.started[id(test)] = time.time()

    def add(self, test, outcome, kind="", message="", text=""):
        key = _where(test)
        began = self.started.pop(id(test), None)
        seconds = time.time() - began if began is not None else 0.0
        old = self.tests.get(key[:2])
        if old is None:
            self.order.append(key[:2])
        elif _RANK[old["outcome"]] > _RANK[outcome]:
            return
        self.tests[key[:2]] = {
            "classname": key[0],
            "name": key[1],
            "description": key[2],
            "outcome": outcome,
            "kind": kind,
            "message": message,
            "text": text,
            "time": seconds + (old["time"] if old else 0.0),
        }

    def write(self, path):
        root = ElementTree.Element("testsuites")
        suite = ElementTree.SubElement(root, "testsuite", name="django")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for key in self.order:
            t = self.tests[key]
            counts["tests"] += 1
            case = ElementTree.SubElement(
                suite, "testcase", classname=t["classname"], name=t["name"],
                time="%.3f" % t["time"])
            if t["description"]:
                props = ElementTree.SubElement(case, "properties")
                ElementTree.SubElement(
                    props, "property", name="description", value=t["description"])
            outcome = t["outcome"]
            if outcome == "failure":
                counts["failures"] += 1
            elif outcome == "error":
                counts["errors"] += 1
            elif outcome in ("skipped", "xfail"):
                counts["skipped"] += 1
            if outcome != "passed":
                tag = "skipped" if outcome == "xfail" else outcome
                child = ElementTree.SubElement(
                    case, tag, message=t["message"], type=t["kind"])
                child.text = t["text"]
        for k, v in counts.items():
            suite.set(k, str(v))
        ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _first_line(text):
    lines = [l for l in str(text).strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def _result_class(base, recorder):
    class Result(base):
        def startTest(self, test):
            super(Result, self).startTest(test)
            recorder.start(test)

        def addSuccess(self, test):
            super(Result, self).addSuccess(test)
            recorder.add(test, "passed")

        def addFailure(self, test, err):
            super(Result, self).addFailure(test, err)
            text = self._exc_info_to_string(err, test)
            recorder.add(test, "failure", err[0].__name__, _first_line(text), text)

        def addError(self, test, err):
            super(Result, self).addError(test, err)
            text = self._exc_info_to_string(err, test)
            recorder.add(test, "error", err[0].__name__, _first_line(text), text)

        def addSkip(self, test, reason):
            super(Result, self).addSkip(test, reason)
            recorder.add(test, "skipped", "skip", str(reason))

        def addExpectedFailure(self, test, err):
            super(Result, self).addExpectedFailure(test, err)
            recorder.add(test, "xfail", "expectedFailure", "expected failure")

        def addUnexpectedSuccess(self, test):
            super(Result, self).addUnexpectedSuccess(test)
            recorder.add(test, "failure", "UnexpectedSuccess", "unexpected success")

        def addSubTest(self, test, subtest, err):
            super(Result, self).addSubTest(test, subtest, err)
            if err is not None:
                text = self._exc_info_to_string(err, test)
                failed = issubclass(err[0], test.failureException)
                recorder.add(
                    test, "failure" if failed else "error", err[0].__name__,
                    "%s: %s" % (subtest._subDescription(), _first_line(text)), text)

    return Result


class JUnitRunner(DiscoverRunner):
    """Django's runner, recording every outcome for a JUnit report."""

    def get_resultclass(self):
        self._patchgrade = getattr(self, "_patchgrade", None) or _Recorder()
        base = super(JUnitRunner, self).get_resultclass() or unittest.TextTestResult
        return _result_class(base, self._patchgrade)

    def run_suite(self, suite, **kwargs):
        try:
            return super(JUnitRunner, self).run_suite(suite, **kwargs)
        finally:
            recorder = getattr(self, "_patchgrade", None) or _Recorder()
            recorder.write(os.environ["PATCHGRADE_JUNIT"])
