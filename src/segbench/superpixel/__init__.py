"""Superpixel benchmark: every published variant of UE, CUE, ASA, BR, BP, CO and EV.

Each variant has its own unambiguous name and says which paper it follows; the SEEDS
evaluation's definitions are the defaults (undersegmentation error as its scoring
recipe, boundary recall at a Euclidean tolerance of 2 px).

Measures of one (superpixels, annotator) pair, from one overlap table
(:func:`superpixel_table`; every function also takes the two label maps):

- :func:`seeds_ue` (default "UE"; ``normalized=True`` or :func:`normalized_seeds_ue`:
  ``UE / (1 + UE)``, which stays in [0, 1) where the recipe does not),
  :func:`corrected_ue` (CUE), :func:`levinshtein_ue` (TurboPixels), :func:`neubert_protzel_ue`,
  :func:`achanta_ue` (SLIC paper, 5 % rule), :func:`undersegmentation_error` (by name)
- :func:`achievable_segmentation_accuracy` (:func:`asa`),
  :func:`oversegmentation_error`
- :func:`boundary_recall`, :func:`boundary_precision`, :func:`boundary_counts`:
  ``window='euclidean'`` (default), ``'square'`` or ``'matched'`` (one-to-one, the
  boundary benchmark's correspondence); ``boundary='bsds'`` or ``'two-sided'``
- :func:`mean_distance_to_edge`

Of the superpixels alone or with the image: :func:`compactness` (CO),
:func:`explained_variation` (EV), :func:`superpixel_count` (superpixels, connected
components, split superpixels), :func:`intra_cluster_variation`,
:func:`sum_squared_error`, :func:`contour_density`, :func:`size_statistics`.

Per image and over a dataset: :func:`evaluate_image` -> :class:`SuperpixelRecord`
(per-annotator values; ``.mean()`` over annotators and ``.best()`` annotator),
:func:`summarize`. As engine families (:class:`segbench.spec.Family`): ``SUPERPIXEL``
(a folder of superpixel maps; its ground truth from :func:`superpixel_dataset`) and
:func:`sweep_family` (one baseline at one K; :func:`sweep_result` composes the curves
and :func:`average_over_range`). Runs over folders: ``segbench.evaluate("superpixel",
...)`` and :func:`segbench.runners.run_sweep`; this package never imports the engine.

The C++ superpixel benchmark (Stutz et al.): :func:`stutz_columns` computes its
``results.csv`` columns from the measures above (:data:`STUTZ_COLUMNS` says which is
which); :mod:`segbench.io` reads and writes its CSV layout and its outputs (re-exported
here: :func:`read_csv_labels`, :func:`read_stutz_results`, ...).
"""

from ..io import (
    list_annotator_files,
    read_annotators,
    read_csv_labels,
    read_opencv_matrix,
    read_stutz_results,
    read_superpixels,
    write_csv_labels,
    write_stutz_results,
)
from ._boundary import (
    BOUNDARIES,
    DEFAULT_TOLERANCE,
    WINDOWS,
    BoundaryCounts,
    BoundaryScorer,
    boundary_counts,
    boundary_map,
    boundary_pixels,
    boundary_precision,
    boundary_recall,
)
from ._evaluate import (
    ANNOTATOR_MEASURES,
    DERIVED_MEASURES,
    IMAGE_MEASURES,
    LOWER_IS_BETTER,
    SuperpixelRecord,
    SuperpixelSummary,
    evaluate_image,
    summarize,
)
from ._family import SUPERPIXEL, superpixel_dataset
from ._image import (
    SuperpixelCount,
    compactness,
    contour_density,
    explained_variation,
    intra_cluster_variation,
    mean_distance_to_edge,
    perimeters,
    size_statistics,
    sum_squared_error,
    superpixel_count,
)
from ._measures import (
    ACHANTA_MIN_OVERLAP,
    UE_VARIANTS,
    achanta_ue,
    achievable_segmentation_accuracy,
    asa,
    corrected_ue,
    levinshtein_ue,
    neubert_protzel_ue,
    normalized_seeds_ue,
    oversegmentation_error,
    seeds_ue,
    table_measures,
    undersegmentation_error,
)
from ._stutz import STUTZ_COLUMNS, stutz_columns, stutz_radius, stutz_rows
from ._sweep import (
    AVERAGED,
    PLOTTED,
    SWEEP_OPTIONS,
    average_over_range,
    plot_sweep,
    sweep_family,
    sweep_ks,
    sweep_result,
    write_sweep,
)
from ._table import compact_superpixels, superpixel_table, superpixel_tables

__all__ = [
    "ACHANTA_MIN_OVERLAP",
    "ANNOTATOR_MEASURES",
    "AVERAGED",
    "BOUNDARIES",
    "BoundaryCounts",
    "BoundaryScorer",
    "DEFAULT_TOLERANCE",
    "DERIVED_MEASURES",
    "IMAGE_MEASURES",
    "LOWER_IS_BETTER",
    "PLOTTED",
    "STUTZ_COLUMNS",
    "SUPERPIXEL",
    "SWEEP_OPTIONS",
    "SuperpixelCount",
    "SuperpixelRecord",
    "SuperpixelSummary",
    "UE_VARIANTS",
    "WINDOWS",
    "achanta_ue",
    "achievable_segmentation_accuracy",
    "asa",
    "average_over_range",
    "boundary_counts",
    "boundary_map",
    "boundary_pixels",
    "boundary_precision",
    "boundary_recall",
    "compact_superpixels",
    "compactness",
    "contour_density",
    "corrected_ue",
    "evaluate_image",
    "explained_variation",
    "intra_cluster_variation",
    "levinshtein_ue",
    "list_annotator_files",
    "mean_distance_to_edge",
    "neubert_protzel_ue",
    "normalized_seeds_ue",
    "oversegmentation_error",
    "perimeters",
    "plot_sweep",
    "read_annotators",
    "read_csv_labels",
    "read_opencv_matrix",
    "read_stutz_results",
    "read_superpixels",
    "seeds_ue",
    "size_statistics",
    "stutz_columns",
    "stutz_radius",
    "stutz_rows",
    "sum_squared_error",
    "summarize",
    "superpixel_count",
    "superpixel_dataset",
    "superpixel_table",
    "superpixel_tables",
    "sweep_family",
    "sweep_ks",
    "sweep_result",
    "table_measures",
    "undersegmentation_error",
    "write_csv_labels",
    "write_stutz_results",
    "write_sweep",
]
