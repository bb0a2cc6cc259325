"""Runs a benchmark family over a dataset: pairing, executors, record cache, progress."""

from ._boundary import evaluate_folder, pair_folders, run_boundary, run_human
from ._executor import map_items

__all__ = ["evaluate_folder", "map_items", "pair_folders", "run_boundary", "run_human"]
