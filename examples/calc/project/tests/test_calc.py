import sys

import calc


def test_add():
    assert calc.add(2, 3) == 5


def test_sub():
    assert calc.sub(5, 3) == 2


def test_mul():
    assert calc.mul(4, 3) == 12


def test_divide():
    assert calc.divide(6, 3) == 2


def test_mean():
    assert calc.mean([1, 2, 3]) == 2


def test_platform_quirk():
    # Already failing at base: patchgrade's baseline run keeps it from being blamed on a patch.
    assert sys.maxsize < 0, "this test was broken before any patch"
