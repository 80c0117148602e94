"""A package that re-exports what it defines in umpkg._impl, as scikit-learn's sklearn.cluster
re-exports KMeans from sklearn.cluster._kmeans: python:umpkg:Model.fit names _impl's method."""
from umpkg._impl import (Base, Child, Model, alias_fit, cached_fit, lambda_fit, never_called,
                         other_wrapped, outer, solve, wrapped_fit)

__all__ = ["Base", "Child", "Model", "alias_fit", "cached_fit", "lambda_fit", "never_called",
           "other_wrapped", "outer", "solve", "wrapped_fit"]
