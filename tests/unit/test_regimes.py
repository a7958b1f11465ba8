"""The positional-regime table on the tiny model: its shape, and what the paper's claims look like here."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.graft import GraftEngine
from engine.logits import LogitsRows, compare, merge
from engine.plot import plot_regimes
from engine.regimes import RegimesRequest, run_regimes

pytestmark = pytest.mark.unit

ENTRY_KEYS = {"byte_equal", "kl_mean", "kl_max", "argmax_flips", "samples"}


@pytest.fixture(scope="module")
def report(tiny_engine: GraftEngine) -> dict:
    return run_regimes(tiny_engine, RegimesRequest(prompts=3, n_query=8, offsets=(8, 128, 1024)))


def test_report_has_the_contract_shape(report: dict, tiny_engine: GraftEngine) -> None:
    assert {"model", "fingerprint", "profile", "regimes"} <= set(report)
    assert report["fingerprint"] == tiny_engine.fingerprint.id
    regimes = report["regimes"]
    assert set(regimes) == {"own_position", "relocation", "positional_control", "sequential_composition",
                            "sequential_vs_monolithic", "independent_stitching"}
    assert set(regimes["relocation"]) == set(regimes["positional_control"]) == {"8", "128", "1024"}
    entries = [regimes[k] for k in ("own_position", "sequential_composition", "sequential_vs_monolithic",
                                    "independent_stitching")]
    entries += list(regimes["relocation"].values()) + list(regimes["positional_control"].values())
    for e in entries:
        assert set(e) >= ENTRY_KEYS
        assert e["samples"] >= 20


def test_own_position_and_sequential_composition_are_byte_equal(report: dict) -> None:
    r = report["regimes"]
    assert r["own_position"]["byte_equal"] and r["own_position"]["kl_max"] == 0.0
    assert r["sequential_composition"]["byte_equal"]


def test_relocation_is_not_byte_equal_and_its_kl_is_small(report: dict) -> None:
    for off, e in report["regimes"]["relocation"].items():
        assert not e["byte_equal"], off
        assert 0.0 < e["kl_max"] < 1e-3, off
        assert e["argmax_flips"] <= 1
        # relocation noise is of the same order as the graft-free positional control
        control = report["regimes"]["positional_control"][off]
        assert not control["byte_equal"]
        assert e["kl_mean"] < 100 * control["kl_mean"]


def test_stitching_diverges_more_than_sequential_composition(report: dict) -> None:
    r = report["regimes"]
    assert not r["independent_stitching"]["byte_equal"]
    assert r["independent_stitching"]["kl_mean"] > r["sequential_composition"]["kl_mean"]
    assert r["independent_stitching"]["kl_mean"] > max(e["kl_mean"] for e in r["relocation"].values())


def test_plot_is_written(report: dict, tmp_path: Path) -> None:
    path = plot_regimes(report, tmp_path / "regimes.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_divergence_measures() -> None:
    import numpy as np

    a = LogitsRows(5, np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]], dtype=np.float32))
    b = LogitsRows(5, np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 0.0]], dtype=np.float32))
    same = compare(a, a)
    assert same.byte_equal and same.kl_max == 0.0 and same.argmax_agree_text == "2/2"
    d = compare(a, b)
    assert not d.byte_equal and d.positions_equal == 1 and d.argmax_flips == 1 and d.max_abs_diff == 3.0
    assert d.kl_max > 1.0 and d.kl_mean == pytest.approx(d.kl_max / 2)
    pooled = merge([same, d])
    assert pooled.positions == 4 and pooled.argmax_agree == 3 and not pooled.byte_equal
    with pytest.raises(ValueError):
        compare(a, LogitsRows(6, a.rows))
    assert compare(a, LogitsRows(6, a.rows), same_positions=False).byte_equal
