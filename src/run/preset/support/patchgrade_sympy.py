"""patchgrade's JUnit writer for sympy's own test runner (what `bin/test -C --verbose` runs).

    python patchgrade_sympy.py [FILE ...] [-k NAME ...]

Runs sympy's `_test` (sympy.testing.runtests, or sympy.utilities.runtests before 1.6) on the
checkout in the current directory, with its cache off (`-C`), its verbose reporter recording
each test's outcome, and writes them as JUnit to $PATCHGRADE_JUNIT: classname the test file's
module, name the test function, `file` the test file. XFAIL is a skip of type `XFail`; an XPASS
is a failure, as sympy counts it. Exits as bin/test does: 0 when every test passed.

Written for every Python and sympy that SWE-bench's sympy instances use, so no f-strings. Part
of patchgrade; written into each run's read-only scripts directory.
"""

import os
import sys
import time
import traceback
from xml.etree import ElementTree

os.environ["SYMPY_USE_CACHE"] = "no"
sys.path.insert(0, os.getcwd())

try:
    from sympy.testing import runtests
except ImportError:
    from sympy.utilities import runtests


def _module(path):
    rel = os.path.relpath(path, os.getcwd())
    return rel[:-3].replace(os.sep, ".") if rel.endswith(".py") else rel


def _message(exc_info):
    lines = traceback.format_exception_only(exc_info[0], exc_info[1])
    return (lines[-1] if lines else "").strip()


class Reporter(runtests.PyTestReporter):
    records = []

    def entering_filename(self, filename, n):
        self._pg_file = filename
        return super(Reporter, self).entering_filename(filename, n)

    def entering_test(self, f):
        self._pg_test = f.__name__
        self._pg_started = time.time()
        return super(Reporter, self).entering_test(f)

    def _record(self, outcome, kind="", message="", text=""):
        Reporter.records.append({
            "file": os.path.relpath(self._pg_file, os.getcwd()),
            "classname": _module(self._pg_file),
            "name": self._pg_test,
            "outcome": outcome,
            "kind": kind,
            "message": message,
            "text": text,
            "time": time.time() - getattr(self, "_pg_started", time.time()),
        })

    def test_pass(self, char="."):
        self._record("passed")
        return super(Reporter, self).test_pass(char)

    def test_fail(self, exc_info):
        text = "".join(traceback.format_exception(*exc_info))
        self._record("failure", exc_info[0].__name__, _message(exc_info), text)
        return super(Reporter, self).test_fail(exc_info)

    def test_exception(self, exc_info):
        text = "".join(traceback.format_exception(*exc_info))
        self._record("error", exc_info[0].__name__, _message(exc_info), text)
        return super(Reporter, self).test_exception(exc_info)

    def test_skip(self, v=None):
        self._record("skipped", "skip", "" if v is None else str(v))
        return super(Reporter, self).test_skip(v)

    def test_xfail(self):
        self._record("skipped", "XFail", "expected to fail")
        return super(Reporter, self).test_xfail()

    def test_xpass(self, v):
        self._record("failure", "XPass", "expected to fail, but passed: %s" % v)
        return super(Reporter, self).test_xpass(v)

    def import_error(self, filename, exc_info):
        text = "".join(traceback.format_exception(*exc_info))
        Reporter.records.append({
            "file": os.path.relpath(filename, os.getcwd()), "classname": "",
            "name": _module(filename), "outcome": "error", "kind": exc_info[0].__name__,
            "message": _message(exc_info), "text": text, "time": 0.0,
        })
        return super(Reporter, self).import_error(filename, exc_info)


def write(path):
    root = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(root, "testsuite", name="sympy")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for r in Reporter.records:
        counts["tests"] += 1
        case = ElementTree.SubElement(
            suite, "testcase", classname=r["classname"], name=r["name"], file=r["file"],
            time="%.3f" % r["time"])
        if r["outcome"] != "passed":
            key = {"failure": "failures", "error": "errors", "skipped": "skipped"}[r["outcome"]]
            counts[key] += 1
            child = ElementTree.SubElement(
                case, r["outcome"], message=r["message"], type=r["kind"])
            child.text = r["text"]
    for k, v in counts.items():
        suite.set(k, str(v))
    ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def main(argv):
    paths, keywords = [], []
    args = iter(argv)
    for a in args:
        if a == "-k":
            keywords.append(next(args, ""))
        else:
            paths.append(a)
    runtests.PyTestReporter = Reporter
    try:
        status = runtests._test(*paths, verbose=True, colors=False, kw=tuple(keywords) or None)
    finally:
        write(os.environ["PATCHGRADE_JUNIT"])
    return int(bool(status))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
