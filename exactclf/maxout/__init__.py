"""Exact two-layer maxout networks."""

from ._deepice import DeepICEMaxoutClassifier

__all__ = ["DeepICEMaxoutClassifier"]
