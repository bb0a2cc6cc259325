"""The one runner under every benchmark command: pairing, executors, record store.

:func:`run` takes family specs (:class:`segbench.spec.Family`) and knows no family by
name; :func:`map_items` maps a function over items serially, on worker processes or on
any ``concurrent.futures`` executor (a Dask cluster); :class:`RecordStore` keeps one
versioned, validated JSON record per (family, image). :func:`detect_folder`,
:func:`nms_folder` and :func:`ucm_folder` run the algorithms over folders on that
executor, resuming through :class:`MapRecords`.
"""

from ._algorithm_folders import FolderResult, detect_folder, nms_folder, ucm_folder
from ._executor import execution, map_items, open_executor
from ._folder import (
    MANIFEST,
    META,
    PREDICTIONS,
    RUN_MARKER,
    RunFolder,
    claim_run_folder,
    result_file,
    result_names,
)
from ._maps import MapRecords
from ._run import run, scored_ids, summarize_records
from ._store import (
    RECORDS_DIR,
    ExcludedWarning,
    RecordStore,
    RecordWarning,
    fingerprint,
    record_key,
    records_digest,
)

__all__ = [
    "MANIFEST",
    "META",
    "PREDICTIONS",
    "RECORDS_DIR",
    "RUN_MARKER",
    "ExcludedWarning",
    "FolderResult",
    "MapRecords",
    "RecordStore",
    "RecordWarning",
    "RunFolder",
    "claim_run_folder",
    "detect_folder",
    "execution",
    "fingerprint",
    "map_items",
    "nms_folder",
    "open_executor",
    "record_key",
    "records_digest",
    "result_file",
    "result_names",
    "run",
    "scored_ids",
    "summarize_records",
    "ucm_folder",
]
