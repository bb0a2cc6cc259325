"""Dataset layouts (BSDS300, BSDS500, folder pairs, synthetic), download, submissions.

The ``fetch`` and ``submit`` modules are reached as ``segbench.datasets.fetch`` /
``.submit`` through :mod:`importlib`; their main functions are re-exported lazily here
so that importing the package does not load :mod:`urllib`.
"""

from ._archive import UnsafeArchiveError, safe_extract
from ._inputs import (Sample, open_ground_truth, pair_predictions, parse_ids, run_name,
                      with_images)
from .bsds import (BSDS300, BSDS500, Annotation, Dataset, DatasetItem, FolderPairs,
                   SubjectEntry, SyntheticDataset, open_dataset)
from .synthetic import SyntheticItem, make_synthetic_dataset, write_synthetic_dataset

__all__ = ["BSDS300", "BSDS500", "Annotation", "Dataset", "DatasetItem", "FolderPairs",
           "Sample", "SubjectEntry", "SyntheticDataset", "SyntheticItem",
           "UnsafeArchiveError", "make_synthetic_dataset", "open_dataset",
           "open_ground_truth", "pair_predictions", "parse_ids", "run_name",
           "safe_extract", "with_images", "write_synthetic_dataset"]
