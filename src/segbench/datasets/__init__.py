"""Dataset layouts (BSDS300, BSDS500, folder pairs, synthetic), download, submissions.

The ``fetch`` and ``submit`` modules are reached as ``segbench.datasets.fetch`` /
``.submit`` through :mod:`importlib`; their main functions are re-exported lazily here
so that importing the package does not load :mod:`urllib`.
"""

from ._archive import UnsafeArchiveError, safe_extract
from .bsds import (BSDS300, BSDS500, Annotation, Dataset, DatasetItem, FolderPairs,
                   SubjectEntry, SyntheticDataset, open_dataset)
from .synthetic import SyntheticItem, make_synthetic_dataset, write_synthetic_dataset

__all__ = ["BSDS300", "BSDS500", "Annotation", "Dataset", "DatasetItem", "FolderPairs",
           "SubjectEntry", "SyntheticDataset", "SyntheticItem", "UnsafeArchiveError",
           "make_synthetic_dataset", "open_dataset", "safe_extract",
           "write_synthetic_dataset"]
