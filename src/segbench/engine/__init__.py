"""The one runner under every benchmark command: pairing, executors, record store.

:func:`run` takes family specs (:class:`segbench.spec.Family`) and knows no family by
name; :func:`map_items` maps a function over items serially, on worker processes or on
any ``concurrent.futures`` executor (a Dask cluster); :class:`RecordStore` keeps one
versioned, validated JSON record per (family, image). :class:`MapRecords`
keeps one record per output of a folder run (:mod:`segbench.algorithm_folders`).
"""

from ._executor import check_workers, execution, map_items, open_executor, scheduler_address
from ._folder import (
    EVERY_FAMILY,
    MANIFEST,
    MAP_FOLDER_MARKERS,
    META,
    PREDICTIONS,
    RUN_LOCK,
    RUN_MARKER,
    RUN_WRITING,
    RunFolder,
    claim_run_folder,
    holding_run_folder,
    lock_run_folder,
    mark_writing,
    release_run_folder,
    result_file,
    result_names,
    unmark_writing,
)
from ._maps import MapRecords, made_and_recorded
from ._run import refuse_another_algorithm, run, scored_ids, summarize_records
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
    "MAP_FOLDER_MARKERS",
    "META",
    "PREDICTIONS",
    "RECORDS_DIR",
    "RUN_MARKER",
    "ExcludedWarning",
    "MapRecords",
    "made_and_recorded",
    "RecordStore",
    "RecordWarning",
    "RunFolder",
    "claim_run_folder",
    "lock_run_folder",
    "EVERY_FAMILY",
    "holding_run_folder",
    "mark_writing",
    "unmark_writing",
    "refuse_another_algorithm",
    "release_run_folder",
    "RUN_LOCK",
    "RUN_WRITING",
    "execution",
    "fingerprint",
    "map_items",
    "open_executor",
    "check_workers",
    "record_key",
    "records_digest",
    "result_file",
    "result_names",
    "run",
    "scheduler_address",
    "scored_ids",
    "summarize_records",
]
