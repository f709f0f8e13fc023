"""A tiny calculator, the bundled example project for patchgrade."""


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def divide(a, b):
    # Bug: dividing by zero should raise ValueError, not return None.
    if b == 0:
        return None
    return a / b


def mean(values):
    # Bug: the mean of nothing should raise ValueError, not ZeroDivisionError.
    return sum(values) / len(values)
