"""Gmail's seeding helpers as seeders call them: label names to label ids."""

from __future__ import annotations

from env0_posttrain.workspace import Workspace


def test_label_ids_for_keeps_system_labels_finds_user_labels_and_makes_missing_ones():
    ws = Workspace.seeded(11)
    me = ws.me.email
    clients = ws.gmail.add_label("Clients")
    before = {l.id for l in ws.gmail.user_labels(me)}
    ids = ws.gmail.label_ids_for(["INBOX", "STARRED", "Clients", "Zephyr renewals"])
    assert ids[:3] == ["INBOX", "STARRED", clients.id]
    made = {l.id: l.name for l in ws.gmail.user_labels(me)}
    assert ids[3] not in before and made[ids[3]] == "Zephyr renewals"
    assert ws.gmail.label_ids_for(["Zephyr renewals", "zephyr RENEWALS"]) == [ids[3]] * 2  # made once, found by name
    m = ws.gmail.add_message(sender="A <a@example.com>", subject="s", body="b", labels=ids)
    assert set(ids) <= set(m.labelIds)
