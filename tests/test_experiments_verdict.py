import json

import pytest

from cdlearn.experiments.verdict import VERDICTS, read_verdicts, write_verdict


def test_verdicts_round_trip_sorted_by_id(tmp_path):
    for exp_id, verdict in (("rcdc-fig2", "agrees"), ("ascd-fig1", "partly")):
        (tmp_path / exp_id).mkdir()
        write_verdict(tmp_path / exp_id, exp_id=exp_id, claim="paper: 4x", ours="3.9x",
                      verdict=verdict, reason="ratio within 10 %", full=False)
    rows = read_verdicts(tmp_path)
    assert [r.id for r in rows] == ["ascd-fig1", "rcdc-fig2"]
    assert rows[0].verdict == "partly" and rows[1].mode == "quick"


@pytest.mark.parametrize("bad", [{"verdict": "maybe"}, {"claim": ""}, {"reason": "a\nb"}])
def test_write_verdict_rejects_bad_rows(tmp_path, bad):
    kwargs = dict(exp_id="x", claim="c", ours="o", verdict="agrees", reason="r", full=True)
    kwargs.update(bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        write_verdict(tmp_path, **kwargs)


def test_read_verdicts_rejects_unknown_verdict_in_file(tmp_path):
    (tmp_path / "x").mkdir()
    row = dict(id="x", claim="c", ours="o", verdict="fine", reason="r", evidence="README.md",
               mode="quick")
    (tmp_path / "x" / "verdict.json").write_text(json.dumps(row))
    with pytest.raises(ValueError, match="verdict must be one of"):
        read_verdicts(tmp_path)
    assert "agrees" in VERDICTS
