"""A segmentation tool in the browser, after the 2001 Java tool of the BSDS.

``segbench annotate`` serves a local web app: one subject segments a folder of images,
or (``--collect``) many subjects work at once and a server assigns images under the
rules of Martin et al. (ICCV 2001). Segmentations are saved as BSDS300 ``.seg`` files in
``OUT/human/{color,gray}/<subject id>/<iid>.seg``; :func:`export_ground_truth` writes
them as BSDS500 ``.mat`` ground truth.

- :func:`make_server`, :class:`AnnotateApp`: the server (standard library only)
- :class:`Ledger`: the SQLite ledger of subjects, assignments, drafts, submissions
- :func:`candidates`, :func:`choose`, :func:`choose_gray`: the assignment rules
- :func:`export_ground_truth`: ``segbench annotate-export``
"""

from .assign import candidates, choose, choose_gray
from .export import export_ground_truth
from .ledger import Ledger, Presentation, RuleError, Submission
from .server import AnnotateApp, AnnotateServer, AnnotateWarning, clean_name, make_server

__all__ = [
    "AnnotateApp",
    "AnnotateServer",
    "AnnotateWarning",
    "Ledger",
    "Presentation",
    "RuleError",
    "Submission",
    "candidates",
    "choose",
    "choose_gray",
    "clean_name",
    "export_ground_truth",
    "make_server",
]
