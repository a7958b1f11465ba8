"""`kvgraft models prepare` and `kvgraft models list`: a requantized copy is a model of its own (its own file,
weights hash and fingerprint), its perplexity against the source is measured on the shipped text and stored beside
it, and the listing shows its type, that quality change and the serving engine's recorded `batch` verdict."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.errors import ModelNotFoundError
from engine.graft import EngineConfig, GraftEngine
from engine.models import resolve_model
from engine.prepare import perplexity, read_quality, record_solve_rates
from engine.texts import sample_tokens
from services.cli import app
from store.db import AttestationRow
from workers.runtime import open_runtime
from workers.serving.batch_check import batching_policy
from workers.settings import engine_config, load_settings

pytestmark = [pytest.mark.unit, pytest.mark.timeout(120)]
runner = CliRunner()


def _prepare(weight_type: str, tokens: int = 200, *extra: str) -> dict:
    result = runner.invoke(app, ["models", "prepare", "tiny", "--type", weight_type, "--tokens", str(tokens),
                                 "--json", *(extra or ("--no-solve-rate",))])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_prepared_copy_is_a_model_of_its_own_with_its_quality_beside_it(kvgraft_cache: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="kvgraft models prepare tiny --type q8_0"):
        resolve_model("tiny-q8_0", cache_dir=kvgraft_cache)
    record = _prepare("q8_0")
    assert record["name"] == "tiny-q8_0" and record["file_type"] == "Q8_0" and record["source_file_type"] == "all F32"
    assert record["requantized_from"] is None  # an F32 source: nothing compounded
    assert record["sha256"] != record["source_sha256"]
    assert math.isfinite(record["perplexity"]) and record["perplexity"] > 1
    assert record["perplexity_delta_pct"] != 0  # 8-bit weights do change the random model's outputs
    ref = resolve_model("tiny-q8_0", cache_dir=kvgraft_cache)
    assert read_quality(ref.path) == record
    with GraftEngine.load("tiny-q8_0", EngineConfig(threads=2), cache_dir=kvgraft_cache) as copy, \
            GraftEngine.load("tiny", EngineConfig(threads=2), cache_dir=kvgraft_cache) as source:
        assert copy.fingerprint.gguf_sha256 == record["sha256"]
        assert source.fingerprint.gguf_sha256 == record["source_sha256"]
        assert copy.fingerprint.id != source.fingerprint.id
        assert copy.name == "tiny-q8_0"


def test_perplexity_of_an_unchanged_copy_equals_the_source(kvgraft_cache: Path) -> None:
    """F32 to F32 copies the weights: the measured perplexities must be the same number (the measurement is
    deterministic and reads the same text for both), and they match an independent per-row computation."""
    record = _prepare("f32", tokens=150)
    assert record["perplexity_delta_pct"] == 0 and record["perplexity"] == record["perplexity_source"]
    with GraftEngine.load("tiny", EngineConfig(n_ctx=256, prefill_chunk=64, flash_attn=False, threads=2),
                          cache_dir=kvgraft_cache) as engine:
        tokens = sample_tokens(engine, 150)
        measured = perplexity(engine, tokens)
        assert round(measured.perplexity, 6) == record["perplexity_source"]
        assert measured.tokens == 149


def test_prepare_refuses_what_it_cannot_make() -> None:
    for args, words in ((["tiny", "--type", "q9_9"], "--type must be one of"),
                        (["tiny", "--type", "q4_1"], "already names a shipped model"),
                        (["nosuch", "--type", "q8_0"], "known model")):
        result = runner.invoke(app, ["models", "prepare", *args])
        assert result.exit_code == 2, result.output
        assert words in result.output


def test_models_list_shows_type_quality_and_the_recorded_batch_verdict(data_dir: Path, kvgraft_cache: Path) -> None:
    record = _prepare("q8_0")

    def listed() -> dict:
        result = runner.invoke(app, ["models", "list", "tiny", "tiny-q8_0", "--json"])
        assert result.exit_code == 0, result.output
        return {m["name"]: m for m in json.loads(result.stdout)["models"]}

    before = listed()
    assert before["tiny-q8_0"]["file_type"] == "Q8_0" and before["tiny"]["file_type"] == "all F32"
    assert before["tiny-q8_0"]["perplexity_delta_pct"] == record["perplexity_delta_pct"]
    assert before["tiny-q8_0"]["source"] == "tiny" and before["tiny"]["source"] is None
    assert before["tiny-q8_0"]["batches_exactly"] == "not checked"
    settings = load_settings()
    with open_runtime(settings) as rt, \
            GraftEngine.load("tiny-q8_0", engine_config(settings, serving=True),
                             cache_dir=settings.cache_dir) as engine:
        policy = batching_policy(rt, engine, settings.serving_max_seqs)
    after = listed()
    expected = "no" if policy.max_seqs == 1 else ("yes (pad rows)" if policy.pad_to > 1 else "yes")
    assert after["tiny-q8_0"]["batches_exactly"] == expected
    assert after["tiny-q8_0"]["batch_attestation_id"] == policy.attestation_id
    assert after["tiny"]["batches_exactly"] == "not checked"  # another fingerprint: its own verdict
    with open_runtime(settings) as rt, rt.session() as s:
        row = s.get(AttestationRow, policy.attestation_id)
        assert row is not None and row.profile["weights"] == {"file_type": "Q8_0", "tensors": {"Q8_0": 15}}


@pytest.mark.timeout(300)
def test_the_solve_rate_of_copy_and_source_is_measured_on_the_same_problems(data_dir: Path,
                                                                            kvgraft_cache: Path) -> None:
    """`models prepare` solves the flywheel dev set's first library problems with the copy and with its source (K
    sampled programs each, verified in the sandbox), stores both beside the copy, and `models list` shows them."""
    library = read_jsonl_ids("dev")[:2]
    record = _prepare("q8_0", 120, "--solve-limit", "2", "--solve-samples", "1")
    copy, source = record["solve_rate"], record["solve_rate_source"]
    assert copy["model"] == "tiny-q8_0" and source["model"] == "tiny"
    assert copy["fingerprint"] != source["fingerprint"]
    for rate in (copy, source):
        assert rate["dataset"] == "dev" and rate["problems"] == 2 and rate["samples"] == 1
        assert list(rate["per_problem"]) == library  # the same problems, by the set's ids
        assert rate["verified"] == sum(rate["per_problem"].values())
        assert rate["decode_tokens"] > 0  # the programs were sampled, not skipped
    assert record["solve_rate_delta"] == copy["verified"] - source["verified"]
    assert read_quality(resolve_model("tiny-q8_0", cache_dir=kvgraft_cache).path) == record
    result = runner.invoke(app, ["models", "list", "tiny-q8_0", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["models"][0]
    assert listed["solve_rate"]["problems"] == 2 and listed["solve_rate_source"]["verified"] == source["verified"]
    with pytest.raises(ValueError, match="same problems"):
        record_solve_rates(Path(record["path"]), copy, {**source, "problems": 3})


def read_jsonl_ids(dataset: str) -> list[str]:
    from bench.sets import dataset_files, read_jsonl

    return [row["id"] for row in read_jsonl(dataset_files(dataset)[0], what="library")]
