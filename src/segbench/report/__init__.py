"""Writers: the official text files, plots."""

from .official import read_ev1, read_eval_bdry, write_eval_bdry, write_ev1
from .plots import plot_pr

__all__ = ["plot_pr", "read_ev1", "read_eval_bdry", "write_eval_bdry", "write_ev1"]
