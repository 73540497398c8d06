"""Datasets (five_hundred_env.dataset, training.rollouts.datasets, ``five-hundred dataset``): the
records are the games the agent played, the loader's batches are the AEC environment's views, the
manifest's checksums catch a damaged file, a search's records carry its candidate values."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("numba")

import five_hundred_env
from agents import HeuristicAgent
from agents.search import PIMCAgent
from five_hundred_env.cards import card_to_str
from five_hundred_env.dataset import (
    MANIFEST,
    DatasetError,
    DealRecords,
    card_columns,
    open_dataset,
    replay_batches,
)
from five_hundred_env.files import OutputPathError
from five_hundred_env.rules import PRESETS, Rules, make_rules
from training.cli import main
from training.rollouts import datasets
from training.rollouts.datasets import draw_deals, generate_dataset

SMALL_PIMC = "pimc:worlds=2,bid_worlds=2,kitty_worlds=2"


def deal_options(rules: Rules, records: DealRecords, i: int) -> dict:
    """The AEC environment's reset options of record ``i``'s deal."""
    names = [card_to_str(int(c), rules.two_jokers) for c in records.cards[i]]
    size = rules.hand_size
    hands = [names[s * size:(s + 1) * size] for s in range(rules.num_players)]
    return {"dealer": int(records.dealer[i]), "hands": hands, "kitty": names[rules.num_players * size:],
            "scores": records.scores[i].tolist()}


def recorded_actions(records: DealRecords, i: int) -> list[int]:
    start = int(records.action_starts()[i])
    return records.actions[start:start + int(records.action_counts[i])].tolist()


def play_in_env(rules: Rules, records: DealRecords, i: int, choose) -> tuple[list, dict]:
    """Deal ``i`` played in the AEC environment, ``choose(seat, observation, turn)`` acting: every
    decision's (seat, observation, mask, action), and each seat's final reward."""
    env = five_hundred_env.env(rules=rules)
    env.reset(options=deal_options(rules, records, i))
    seat_of = {name: s for s, name in enumerate(env.possible_agents)}
    decisions, rewards = [], {}
    for name in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            rewards[seat_of[name]] = reward
            env.step(None)
            continue
        action = choose(seat_of[name], obs, len(decisions))
        decisions.append((seat_of[name], obs["observation"].copy(), obs["action_mask"].copy(), action))
        env.step(action)
    return decisions, rewards


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_heuristic_records_are_the_games_the_heuristic_agent_plays(preset, tmp_path) -> None:
    """The records (made by the compiled heuristic on the batched engine) replayed in the AEC
    environment with HeuristicAgent in every seat: the same actions and the same score changes."""
    rules = make_rules(preset)
    manifest = generate_dataset("heuristic", rules, 24, tmp_path / "data", seed=3, starting_scores="uniform")
    assert manifest["agent"] == "heuristic" and manifest["deals"] == 24 and manifest["values"] is False
    dataset = open_dataset(tmp_path / "data")
    records = dataset.records()
    assert records.decisions == manifest["decisions"] and records.scores.any()  # the uniform starting scores
    agents = [HeuristicAgent(rules, seed=s) for s in range(rules.num_players)]
    table = five_hundred_env.ActionTable(rules)
    for i in range(len(records)):
        decisions, _ = play_in_env(rules, records, i, lambda seat, obs, turn: agents[seat].act(obs))
        assert [a for *_, a in decisions] == recorded_actions(records, i), f"deal {i}"
        options = deal_options(rules, records, i)
        deal = five_hundred_env.Deal.from_cards(rules, options["hands"], options["kitty"], options["dealer"])
        for action in recorded_actions(records, i):
            deal.apply_action(table.universal[action])
        assert (deal.score_change or [0] * rules.num_sides) == records.score_change[i].tolist(), f"deal {i}"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_loader_batches_are_the_environment_views_of_the_recorded_games(preset, tmp_path) -> None:
    """Every decision the loader yields (random play: every kind of contract) has the AEC
    environment's observation and mask for that deal's turn, its action, its seat, and as its
    return the deal's reward in the environment × the reward scale."""
    rules = make_rules(preset)
    generate_dataset("random", rules, 20, tmp_path / "data", seed=5, starting_scores="uniform")
    dataset = open_dataset(tmp_path / "data")
    records = dataset.records()
    rows = {}
    for batch in dataset.batches(batch_size=37, games=7):  # batches that straddle the engine's steps
        assert batch.values is None and len(batch) <= 37
        for r in range(len(batch)):
            rows[int(batch.deal[r]), int(batch.turn[r])] = (batch.obs[r], batch.mask[r], int(batch.action[r]),
                                                           int(batch.seat[r]), float(batch.returns[r]))
    assert len(rows) == records.decisions
    for i in range(len(records)):
        actions = recorded_actions(records, i)
        decisions, rewards = play_in_env(rules, records, i, lambda seat, obs, turn, actions=actions: actions[turn])
        for turn, (seat, obs, mask, action) in enumerate(decisions):
            got_obs, got_mask, got_action, got_seat, got_return = rows[i, turn]
            assert np.array_equal(got_obs, obs) and np.array_equal(got_mask, mask), f"deal {i}, turn {turn}"
            assert (got_action, got_seat) == (action, seat)
            assert got_return == pytest.approx(rewards[seat] * 100.0, abs=1e-3)


def test_search_records_carry_the_candidate_values_of_the_search_as_it_plays(tmp_path) -> None:
    """pimc's records hold, at every searched decision, the means its search computed for each
    candidate; the same deals played in the AEC environment by PIMCAgents seeded as the dataset
    documents make the same decisions and find the same values."""
    rules = make_rules("australian")
    manifest = generate_dataset(SMALL_PIMC, rules, 2, tmp_path / "data", seed=1)
    assert manifest["values"] is True and manifest["agent"] == SMALL_PIMC
    dataset = open_dataset(tmp_path / "data")
    records = dataset.records()
    value_starts = np.concatenate([[0], np.cumsum(records.candidate_counts)])
    seats = [PIMCAgent(rules, 1, worlds=2, bid_worlds=2, kitty_worlds=2) for _ in range(rules.num_players)]
    first_decision = records.action_starts()
    table = five_hundred_env.ActionTable(rules)
    for i in range(len(records)):
        for s, agent in enumerate(seats):
            agent.seed(int(np.random.SeedSequence([1, i, s]).generate_state(1)[0]))
        found = []

        def choose(seat, obs, turn, found=found):
            before = seats[seat].last_search
            action = seats[seat].act(obs)
            search = seats[seat].last_search  # a new record where the decision was searched
            found.append(None if search is before else {table.compact[u]: m for u, m in search.means.items()})
            return action

        decisions, _ = play_in_env(rules, records, i, choose)
        assert [a for *_, a in decisions] == recorded_actions(records, i)
        for turn, values in enumerate(found):
            d = first_decision[i] + turn
            at = slice(value_starts[d], value_starts[d + 1])
            recorded = dict(zip(records.candidates[at].tolist(), records.values[at].tolist(), strict=True))
            assert recorded == pytest.approx(values or {}), f"deal {i}, turn {turn}"
    assert (records.candidate_counts > 1).sum() > 10  # most decisions with a choice are searched
    searched = 0
    for batch in dataset.batches(batch_size=16):
        assert batch.values is not None
        has = ~np.isnan(batch.values).all(axis=1)
        searched += int(has.sum())
        # the action taken is always among the candidates searched, and only legal actions have values
        assert np.isfinite(batch.values[has, batch.action[has]]).all()
        assert not (np.isfinite(batch.values) & (batch.mask == 0)).any()
    assert searched == int((records.candidate_counts > 0).sum())


def test_a_damaged_or_missing_file_is_named_by_the_check(tmp_path) -> None:
    folder = tmp_path / "data"
    generate_dataset("random", make_rules("italian_3p"), 30, folder, seed=0)
    part = folder / json.loads((folder / MANIFEST).read_text())["files"][0]["name"]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x40
    part.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=rf"{part.name}: sha256 \w+… is not the manifest's \w+…: the file is damaged"):
        open_dataset(folder)
    part.unlink()
    with pytest.raises(DatasetError, match=rf"{part.name}: missing"):
        open_dataset(folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**manifest, "files": "part-00000.parquet"}))
    with pytest.raises(DatasetError, match="'files' must list"):
        open_dataset(folder)
    (folder / MANIFEST).write_text("{}")
    with pytest.raises(DatasetError, match="format None, expected 'five-hundred-dataset/1'"):
        open_dataset(folder)


def test_records_that_do_not_replay_are_refused_naming_the_deal(tmp_path) -> None:
    rules = make_rules("australian")
    generate_dataset("heuristic", rules, 12, tmp_path / "data", seed=2)
    records = open_dataset(tmp_path / "data").records()
    changed = records.take(np.arange(len(records)))
    changed.score_change[5] += 10
    with pytest.raises(DatasetError, match=r"deal 5 of the dataset does not replay: it ends after \d+ of its \d+ actions"):
        list(replay_batches(rules, changed))
    changed = records.take(np.arange(len(records)))
    first_play = int(records.action_starts()[7]) + int(records.action_counts[7]) - 1  # the last card of deal 7
    changed.actions[first_play] = (changed.actions[first_play] + 1) % 80
    with pytest.raises(DatasetError, match=r"deal 7 of the dataset does not replay: its action \d+ \(compact id \d+\) "
                                           "is not legal there"):
        list(replay_batches(rules, changed))


def test_the_deals_depend_only_on_the_seed_and_their_index(monkeypatch, tmp_path) -> None:
    rules = make_rules("six_handed")
    whole = draw_deals(rules, 9, 0, 600)
    for got, expected in zip(draw_deals(rules, 9, 250, 300), whole, strict=True):
        assert np.array_equal(got, expected[250:550])
    cards = whole[0]
    assert cards.shape == (600, card_columns(rules))
    assert all(len(set(row)) == card_columns(rules) for row in cards.tolist())  # every card once per deal
    assert not np.array_equal(draw_deals(rules, 10, 0, 600)[0], cards)
    one_job = generate_dataset("heuristic", rules, 300, tmp_path / "one", seed=9)
    monkeypatch.setitem(datasets.BLOCKS_PER_JOB, True, 1)  # jobs of 256 deals: two jobs
    two_jobs = generate_dataset("heuristic", rules, 300, tmp_path / "two", seed=9)
    assert one_job["sha256"] == two_jobs["sha256"]


def test_the_command_writes_a_manifest_and_refuses_a_used_folder(tmp_path, capsys) -> None:
    out = tmp_path / "data"
    assert main(["dataset", "heuristic", "--rules", "two_handed", "--deals", "300", "--out", str(out), "--seed", "4",
                 "--no-progress"]) == 0
    assert f"wrote {out}: 300 deals of heuristic (two_handed)" in capsys.readouterr().out
    manifest = json.loads((out / MANIFEST).read_text())
    assert {"format", "rules", "agent", "deals", "decisions", "sha256"} <= set(manifest)
    assert Rules.from_dict(manifest["rules"]) == make_rules("two_handed")
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, *manifest["sha256"]])
    assert main(["dataset", "heuristic", "--deals", "5", "--out", str(out), "--no-progress"]) == 2
    assert "the folder is not empty; give a new or empty folder" in capsys.readouterr().err
    assert main(["dataset", "no-such-agent", "--deals", "5", "--out", str(tmp_path / "x")]) == 2
    assert "unknown agent 'no-such-agent'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(OutputPathError, match="does not exist"):
        generate_dataset("random", make_rules("australian"), 5, tmp_path / "a" / "b")


def test_a_folder_name_of_the_longest_length_is_written_and_a_longer_one_refused_before_playing(tmp_path) -> None:
    rules = make_rules("two_handed")
    longest = tmp_path / ("d" * 255)  # its temporary folder's name must fit too
    assert generate_dataset("random", rules, 3, longest, seed=0)["deals"] == 3
    assert (longest / MANIFEST).is_file() and sorted(p.name for p in tmp_path.iterdir()) == [longest.name]
    with pytest.raises(OutputPathError, match="the folder's name is 256 bytes long; a file name holds at most 255"):
        generate_dataset("random", rules, 3, tmp_path / ("d" * 256), seed=0)


def test_the_torch_dataset_shares_the_deals_among_its_workers(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from training.rollouts.decision_dataset import DecisionDataset

    generate_dataset("heuristic", make_rules("australian"), 40, tmp_path / "data", seed=0)
    data = DecisionDataset(tmp_path / "data", batch_size=64, shuffle=True, seed=1)
    seen = []
    for batch in DataLoader(data, batch_size=None, num_workers=2):
        assert batch["obs"].dtype == torch.int8 and batch["mask"].dtype == torch.bool and "values" not in batch
        assert batch["mask"][torch.arange(len(batch["action"])), batch["action"]].all()
        seen += list(zip(batch["deal"].tolist(), batch["turn"].tolist(), strict=True))
    assert len(seen) == len(set(seen)) == data.records.decisions
    first = [b["deal"].tolist() for b in data]
    data.set_epoch(1)
    assert [b["deal"].tolist() for b in data] != first  # another order of the deals


def test_an_agent_with_act_batch_decides_every_game_of_a_job_at_once(tmp_path) -> None:
    """A registered agent offering ``act_batch`` (here the compiled heuristic behind HeuristicAgent)
    plays on the batched path, one call per step: its records are the heuristic's, byte for byte."""
    from agents.heuristic.compiled import HeuristicPolicy
    from agents.registry import register_agent, unregister_agent

    calls = []

    class BatchedHeuristic(HeuristicAgent):
        def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            calls.append(len(obs))
            return HeuristicPolicy(self.rules).act_batch(obs, masks)

    rules = make_rules("five_handed")
    register_agent("batched-heuristic", BatchedHeuristic)
    try:
        batched = generate_dataset("batched-heuristic", rules, 300, tmp_path / "batched", seed=6)
    finally:
        unregister_agent("batched-heuristic")
    heuristic = generate_dataset("heuristic", rules, 300, tmp_path / "heuristic", seed=6)
    assert batched["agent"] == "batched-heuristic" and batched["sha256"] == heuristic["sha256"]
    assert max(calls) == 300 and len(calls) < batched["decisions"] / 50  # whole steps, not decisions
