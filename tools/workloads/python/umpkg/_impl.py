"""The functions py_names.py calls, one of each kind a python: spec may name."""
import functools


def solve(n):
    """A module function, re-exported by umpkg."""
    return sum(range(n))


def _work(n):
    return sum(range(n))


class Model(object):
    def fit(self, n):
        return _work(n)

    @staticmethod
    def static_fit(n):
        return _work(n)

    @classmethod
    def class_fit(cls, n):
        return _work(n)


class Base(object):
    def fit(self, n):
        """Inherited by Child: python:umpkg:Child.fit counts the calls on a Child only."""
        return _work(n)


class Child(Base):
    pass


def logged(function):
    """A functools.wraps decorator: every function it decorates shares its wrapper's code."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


@logged
def wrapped_fit(n):
    return _work(n)


@logged
def other_wrapped(n):
    """Decorated by the same decorator: its calls are no units of python:umpkg:wrapped_fit."""
    return _work(n)


def outer(times):
    """Defines inner anew at each call: python:umpkg:outer.inner (or outer.<locals>.inner)."""
    def inner(n):
        return _work(n)
    return [inner(1000) for _ in range(times)]


def never_called():
    return None


def _aliased(n):
    return _work(n)


alias_fit = _aliased  # python:umpkg:alias_fit names _aliased through the package
lambda_fit = lambda n: _work(n)  # noqa: E731  (a lambda a module binds: pkg:lambda_fit)


@functools.lru_cache(maxsize=None)
def cached_fit(n):
    """Called twice with one argument: the second call is answered by the cache."""
    return _work(n)
