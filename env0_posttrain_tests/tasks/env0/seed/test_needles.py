"""seed_package runs each declared service's env0 planter in env0's seeding order, whatever order the package
names its services in (gmail and calendar draw from one rng), and a planter two faces share (Drive's and Docs') once."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

from env0_posttrain.tasks.env0.seed.needles import seed_package
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain.workspace.services import registry

NOW = datetime(2026, 3, 11, 16, 0, tzinfo=timezone.utc)


def _needles() -> object:
    mod = type(sys)("needles")
    mod.NEEDLES = [{"subject": "Invoice 42", "sender_name": "Ana", "sender_email": "ana@vendor.example",
                    "body_plain": "due Friday"},
                   {"name": "Plan", "id": "doc_fixed_1", "content_text": "the plan"}]
    mod.NEEDLE_EVENTS = [{"summary": "Sync", "days_from_now_range": (-30, 30), "start_hour_choices": [9, 10, 14]}]
    return mod


def _seeded(services: tuple[str, ...]) -> Workspace:
    ws = Workspace.seeded(3, NOW)
    seed_package(ws, _needles(), services, "t", 3)
    return ws


def test_planters_take_env0s_seeding_order():
    planters = sorted((registry.get(n).env0 for n in registry.names()), key=lambda f: f.plant_order if f else 0)
    assert [f.name for f in planters if f and f.plant] == ["gmail", "gdrive", "gdoc", "slack", "gcal", "stripe", "auth"]


def test_the_seeded_start_does_not_depend_on_the_order_services_are_named_in():
    one = _seeded(("calendar", "gmail", "docs", "drive"))
    other = _seeded(("drive", "gmail", "docs", "calendar"))
    assert one.state_hash() == other.state_hash()
    assert [f.name for f in one.drive.db.files.values() if f.name == "Plan"] == ["Plan"]  # planted once
    assert "doc_fixed_1" in one.drive.db.files and "doc_fixed_1" in one.docs.db.documents

