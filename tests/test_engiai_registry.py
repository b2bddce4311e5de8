"""EngiAI registry: one table, weights summing to 1 per family, CLI choices derived from it."""
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
import grade_engiai as G  # noqa: E402

FAMILIES = {"design_optimization": {"beams2d", "photonics2d", "thermoelastic2d"},
            "rag_retrieval": {"rag_beams2d"},
            "hpc_orchestration": {"hpc_train_beams2d", "hpc_train_photonics2d"},
            "training_code": {"training_code_beams2d", "training_code_photonics2d"}}


def test_registry_holds_the_seeds_problems_and_families():
    got = {}
    for name, cfg in G.PROBLEMS.items():
        got.setdefault(cfg["family"], set()).add(name)
    assert got == FAMILIES


@pytest.mark.parametrize("name", sorted(G.PROBLEMS))
def test_weights_sum_to_one(name):
    cfg = G.PROBLEMS[name]
    assert sum(cfg["weights"].values()) == pytest.approx(1.0)
    if cfg["family"] == "design_optimization":
        assert sum(cfg["design_weights"].values()) == pytest.approx(1.0)
        assert sum(w for _, _, w in cfg["objectives"]) == pytest.approx(1.0)


def test_seed_weights_are_the_applied_ones():
    assert G.PROBLEMS["beams2d"]["weights"] == {"design_quality": 0.65, "tool_efficiency": 0.20,
                                                "task_completion": 0.15}
    assert G.PROBLEMS["beams2d"]["design_weights"] == {
        "iou": 0.31, "pixel_accuracy": 0.19, "objective_match": 0.15, "constraint_match": 0.12,
        "connectivity": 0.12, "watertightness": 0.11}
    thermo = G.PROBLEMS["thermoelastic2d"]["design_weights"]
    assert thermo["constraint_match"] == 0.0 and thermo["objective_match"] == 0.27
    assert G.PROBLEMS["hpc_train_beams2d"]["weights"] == {"workflow_completion": 0.80,
                                                          "tool_efficiency": 0.20}
    assert G.PROBLEMS["training_code_beams2d"]["weights"] == {
        "model_quality": 0.55, "code_quality": 0.15, "job_completion": 0.10, "dryrun": 0.10,
        "syntax": 0.05, "slurm_accepted": 0.05}
    assert G.PROBLEMS["rag_beams2d"]["weights"] == {"rag_accuracy": 1.0}


def test_styles_per_problem():
    seven = {"full", "natural", "workflow-random", "workflow-derived-params", "workflow-distractor",
             "workflow-conditional", "workflow-multi-export"}
    assert set(G.PROBLEMS["beams2d"]["styles"]) == seven == set(G.PROBLEMS["photonics2d"]["styles"])
    assert G.PROBLEMS["rag_beams2d"]["styles"] == ("rag-eval",)
    assert set(G.PROBLEMS["hpc_train_photonics2d"]["styles"]) == {
        "hpc-train-cgan", "hpc-train-diff", "hpc-train-natural-cgan", "hpc-train-natural-diff"}
    tiers = G.PROBLEMS["training_code_beams2d"]["styles"]
    assert len(tiers) == len(set(tiers)) == 16
    assert {"t2-terse", "t6v2-verbose", "t4-func-terse", "t5-func-verbose"} <= set(tiers)


def test_no_dataset_families_carry_no_objectives():
    for name, cfg in G.PROBLEMS.items():
        if cfg["dataset"] is None:
            assert cfg["objectives"] == ()
        else:
            assert cfg["objectives"]


def test_thermoelastic_is_registered_but_unsupported_by_the_agent_tools():
    assert "thermoelastic2d" in G.list_problems()
    assert G.PROBLEMS["thermoelastic2d"]["agent_tools_support"] is False
    assert all(G.PROBLEMS[p]["agent_tools_support"] for p in G.PROBLEMS if p != "thermoelastic2d")


# ---------------------------------------------------------------- CLI choices
def choices(parser, dest):
    return [a for a in parser._actions if a.dest == dest][0].choices


def test_cli_choices_come_from_the_registry(monkeypatch):
    p = G.build_parser()
    assert choices(p, "problem") == G.list_problems() == sorted(G.PROBLEMS)
    assert set(choices(p, "style")) == {s for c in G.PROBLEMS.values() for s in c["styles"]}
    # a new registry entry appears in every choice list without touching the CLI
    monkeypatch.setitem(G.PROBLEMS, "beams3d", dict(G.PROBLEMS["beams2d"], styles=("full", "vr-demo")))
    p2 = G.build_parser()
    assert "beams3d" in choices(p2, "problem") and "vr-demo" in choices(p2, "style")


def test_unregistered_problem_rejected_with_the_valid_choices(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        G.main([str(tmp_path), "--problem", "beams3d"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'beams3d'" in err and "photonics2d" in err


def test_unknown_style_rejected(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        G.main([str(tmp_path), "--style", "approximate"])
    assert exc.value.code == 2
    assert "invalid choice: 'approximate'" in capsys.readouterr().err


def test_style_the_problem_does_not_accept_rejected_with_its_styles(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        G.main([str(tmp_path), "--problem", "beams2d", "--style", "rag-eval"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "'rag-eval' is not accepted" in err and "workflow-distractor" in err


def test_accepted_combination_parses(tmp_path):
    p = G.build_parser()
    args = p.parse_args([str(tmp_path), "--problem", "rag_beams2d", "--style", "rag-eval"])
    assert G.resolve_filters(p, args) == ({"rag_beams2d"}, {"rag-eval"})
