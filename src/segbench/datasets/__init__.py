"""Dataset layouts (BSDS300, BSDS500, folder pairs, synthetic), download, safe intake.

The one place that knows a layout: :func:`open_ground_truth` turns any ``--gt`` into a
:class:`Dataset`, :func:`pair_predictions` pairs prediction files with it. The
``fetch`` module is reached as ``segbench.datasets.fetch`` (so that importing the
package does not load :mod:`urllib`); benchmarking a submission is
:func:`segbench.submit.submit`, above the engine.
"""

from ._archive import UnsafeArchiveError, safe_extract
from ._html import ABOUT_MAX, sanitize_html
from ._inputs import (SPLIT_NAMES, Sample, open_ground_truth, pair_predictions, parse_ids,
                      run_name, with_images)
from ._pairs import LabelMapFolder, pair_folders, predictions_by_suffix
from .bsds import (BSDS300, BSDS500, Annotation, Dataset, DatasetItem, FolderPairs,
                   SubjectEntry, SyntheticDataset, open_dataset, write_ground_truth)
from .synthetic import SyntheticItem, make_synthetic_dataset, write_synthetic_dataset

__all__ = ["ABOUT_MAX", "Annotation", "BSDS300", "BSDS500", "Dataset", "DatasetItem",
           "FolderPairs", "LabelMapFolder", "SPLIT_NAMES", "Sample", "SubjectEntry",
           "SyntheticDataset", "SyntheticItem", "UnsafeArchiveError",
           "make_synthetic_dataset", "open_dataset", "open_ground_truth",
           "pair_folders", "pair_predictions", "parse_ids", "predictions_by_suffix",
           "run_name", "safe_extract", "sanitize_html", "with_images",
           "write_ground_truth", "write_synthetic_dataset"]
