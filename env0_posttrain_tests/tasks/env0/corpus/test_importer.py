"""An env0 package's family is read off the env0 faces of its services (their `family` and `subsumes`)."""

from __future__ import annotations

import pytest

from env0_posttrain.tasks.env0.corpus.importer import family_of


@pytest.mark.parametrize(("services", "family"), [
    (("gmail",), "mail"), (("calendar",), "calendar"), (("drive",), "drive"), (("docs",), "docs"),
    (("drive", "docs"), "docs"),  # Docs live in Drive
    (("auth",), "auth"), (("auth", "gmail", "slack"), "auth"), (("auth", "drive", "docs"), "auth"),  # auth guards them
    (("auth", "stripe"), "multi-app"),  # Stripe checks its own keys: auth does not subsume it
    (("slack",), "multi-app"), (("stripe",), "multi-app"), (("gmail", "calendar"), "multi-app"), ((), "multi-app"),
])
def test_a_package_counts_as_the_family_of_the_one_service_its_others_leave(services, family):
    assert family_of(services) == family


def test_a_service_nobody_registered_is_refused_by_name():
    with pytest.raises(KeyError, match="no service named 'fax'"):
        family_of(("fax",))
