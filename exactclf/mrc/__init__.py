"""Minimax risk classifiers (MRCs) with the 0-1 loss."""

from ._ccg import MRCCCG

__all__ = ["MRCCCG"]
