"""Messages a user reads, as the QA round of 2026-12-07 (helpers 46 and 47) found
them: each names the file once, in the user's words, with no option the user cannot
set."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.cli import main
from segbench.errors import InputError


def test_an_npz_of_several_arrays_is_named_once(tmp_path):
    from segbench.io import read_superpixels
    path = tmp_path / "im.npz"
    np.savez(path, a=np.zeros((4, 4), np.int32), b=np.zeros((4, 4), np.int32))
    with pytest.raises(InputError) as err:
        read_superpixels(path)
    assert str(err.value).count(str(path)) == 1, str(err.value)
    assert "several arrays (a, b) and none named 'sp'" in str(err.value)


def test_a_cut_counts_file_gives_no_numpy_advice(tmp_path):
    from segbench.io import read_ev1
    path = tmp_path / "1_ev1.txt"
    path.write_text("0.1 1 2 3 4\n0.2 1 2\n")
    with pytest.raises(InputError, match="number of columns changed") as err:
        read_ev1(path)
    assert "usecols" not in str(err.value)


def test_empty_ids_ask_for_ids(tmp_path, capsys):
    assert main(["boundary", "--gt", str(tmp_path), "--pred", str(tmp_path),
                 "--ids", ""]) == 2
    assert "--ids is empty: give ids (a list or a file)" in capsys.readouterr().err


def test_a_negative_min_area_is_refused(tmp_path, capsys):
    assert main(["stats", "--gt", str(tmp_path), "--min-area", "-5"]) == 2
    assert "min_area (--min-area) must be >= 0 pixels, got -5.0" in \
        capsys.readouterr().err


def test_a_damaged_record_is_said_in_words(tmp_path):
    from segbench.engine._store import RecordWarning, _damaged
    with pytest.warns(RecordWarning) as got:
        _damaged(tmp_path / "r.json", "does not validate (x)")
        _damaged(tmp_path / "s.json", "not valid JSON")
    texts = [str(w.message) for w in got]
    assert texts[0].endswith("r.json: the record does not validate (x); computing it "
                             "again")
    assert texts[1].endswith("s.json: the record is not valid JSON; computing it again")
