"""Dataset layouts (BSDS300, BSDS500, folder pairs, synthetic), download, safe intake.

The one place that knows a layout: :func:`open_ground_truth` turns any ``--gt`` into a
:class:`Dataset`, :func:`pair_predictions` pairs prediction files with it. The
``fetch`` module is reached as ``segbench.datasets.fetch`` (so that importing the
package does not load :mod:`urllib`); benchmarking a submission is
:func:`segbench.submit.submit`, above the engine.
"""

from ._edges import (
    GT_FORMATS,
    EdgeMapFolder,
    GroundTruthFormat,
    LabelMapGroundTruth,
    format_record,
    label_annotation,
    sniff_file,
    sniff_folder,
    thin_structures,
)
from ._inputs import (
    SPLIT_NAMES,
    Sample,
    open_ground_truth,
    pair_predictions,
    parse_ids,
    run_name,
    stray_predictions,
    with_images,
)
from ._memory import BoundaryMap, memory_item, memory_prediction, memory_sample, to_numpy
from ._pairs import LabelMapFolder, pair_folders, predictions_by_suffix, stray_by_suffix
from .bsds import (
    BSDS300,
    BSDS500,
    Annotation,
    Dataset,
    DatasetItem,
    FolderPairs,
    SubjectEntry,
    SyntheticDataset,
    open_dataset,
    write_ground_truth,
)

#: Names whose modules load on first use: archives (tarfile, zipfile), HTML cleaning (nh3)
#: and the synthetic dataset are not needed by a benchmark run, which starts faster
#: without them.
_LAZY = {
    "UnsafeArchiveError": "_archive",
    "safe_extract": "_archive",
    "ABOUT_MAX": "_html",
    "sanitize_html": "_html",
    "SyntheticItem": "synthetic",
    "make_synthetic_dataset": "synthetic",
    "write_synthetic_dataset": "synthetic",
}


def __getattr__(name):
    # imports written out, not computed, so that tests/test_architecture.py reads them
    module = _LAZY.get(name)
    if module == "_archive":
        from . import _archive as module
    elif module == "_html":
        from . import _html as module
    elif module == "synthetic":
        from . import synthetic as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)


__all__ = [
    "ABOUT_MAX",
    "Annotation",
    "BSDS300",
    "BSDS500",
    "BoundaryMap",
    "Dataset",
    "DatasetItem",
    "EdgeMapFolder",
    "GT_FORMATS",
    "GroundTruthFormat",
    "LabelMapGroundTruth",
    "format_record",
    "label_annotation",
    "sniff_file",
    "sniff_folder",
    "stray_predictions",
    "thin_structures",
    "memory_item",
    "memory_prediction",
    "memory_sample",
    "to_numpy",
    "FolderPairs",
    "LabelMapFolder",
    "SPLIT_NAMES",
    "Sample",
    "SubjectEntry",
    "SyntheticDataset",
    "SyntheticItem",
    "UnsafeArchiveError",
    "make_synthetic_dataset",
    "open_dataset",
    "open_ground_truth",
    "pair_folders",
    "pair_predictions",
    "parse_ids",
    "predictions_by_suffix",
    "stray_by_suffix",
    "run_name",
    "safe_extract",
    "sanitize_html",
    "with_images",
    "write_ground_truth",
    "write_synthetic_dataset",
]
