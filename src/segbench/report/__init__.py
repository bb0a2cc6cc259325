"""The site, and the official text files read back into records."""

from ..boundary import plot_pr
from .official import read_ev1, read_eval_bdry, write_ev1, write_eval_bdry
from .official_region import (
    read_eval_cover,
    read_eval_ri_voi,
    read_region_image_files,
    write_eval_region,
    write_region_image_files,
)

__all__ = [
    "plot_pr",
    "read_ev1",
    "read_eval_bdry",
    "read_eval_cover",
    "read_eval_ri_voi",
    "read_region_image_files",
    "write_eval_bdry",
    "write_eval_region",
    "write_ev1",
    "write_region_image_files",
]
