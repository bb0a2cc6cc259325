"""Runs a benchmark family over a dataset: pairing, executors, record cache, progress."""

from ._all import run_all
from ._boundary import evaluate_folder, pair_folders, run_boundary, run_human
from ._executor import map_items
from ._region import evaluate_region_folder, region_result, run_human_region, run_region

__all__ = ["evaluate_folder", "evaluate_region_folder", "map_items", "pair_folders",
           "region_result", "run_all", "run_boundary", "run_human", "run_human_region",
           "run_region"]
