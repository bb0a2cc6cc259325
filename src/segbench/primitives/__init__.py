"""The floor under the datasets and every benchmark family: a segmentation's boundary
map (``seg2bdry``), morphological thinning (``thin``, BSR's ``bwmorph(..., 'thin')``)
and label compaction. The datasets read ground truth with them; the boundary and
region packages re-export them under their usual names.
"""

from ._labels import as_labels, compact_labels
from ._seg2bdry import seg2bdry
from ._thin import thin, thin_frames

__all__ = ["as_labels", "compact_labels", "seg2bdry", "thin", "thin_frames"]
