"""Region records do not depend on the CPU's BLAS kernel (cross-machine determinism).

A record's matched sums were once BLAS dot products, whose last bit follows the vector
width OpenBLAS picks at run time: an AVX2 machine and an AVX-512 one wrote different
records of the same image (found by the refactoring guard on CI). This runs one image's
region record in two processes, one with OpenBLAS held to its Haswell (AVX2) kernels,
and asks for the same bytes.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from conftest import FIXTURES

UCM2 = FIXTURES / "bsr-official" / "inputs" / "ucm2" / "2018.mat"
GT = FIXTURES / "bsr-official" / "inputs" / "groundTruth" / "2018.mat"

CODE = """
import json, sys
from segbench.io import read_ground_truth, read_prediction
from segbench.region import evaluate_image
rec = evaluate_image(read_prediction(sys.argv[1]), read_ground_truth(sys.argv[2]), nthresh=9)
print(json.dumps(rec.to_json()))
"""


def _record(coretype: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    proc = subprocess.run([sys.executable, "-c", CODE, str(UCM2), str(GT)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="OpenBLAS's Haswell kernels are x86-64's")
def test_the_record_is_the_same_under_another_blas_kernel():
    if not (UCM2.is_file() and GT.is_file()):
        pytest.skip(f"reference data not available: {FIXTURES}")
    native, haswell = _record(None), _record("Haswell")
    assert native["cnt_r"] and max(native["cnt_r"]) > 0  # a real record, not an empty one
    assert json.dumps(native) == json.dumps(haswell)
