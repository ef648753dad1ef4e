"""`scale.backend` is a union by kind, and the specs written before it (a bare kind, a shared `ray_address`) read."""

from __future__ import annotations

import re
import warnings

import pytest
from pydantic import ValidationError

from env0_posttrain.agent.backends.processes import ProcessesSettings
from env0_posttrain.agent.backends.ray import RaySettings
from env0_posttrain.spec.runspec import RunSpec, parse_spec
from env0_posttrain.spec.scale import ScaleSpec


def test_each_kind_holds_its_own_settings():
    assert ScaleSpec().backend == ProcessesSettings()
    ray = ScaleSpec(backend={"kind": "ray", "address": "ray://head:10001"}).backend
    assert isinstance(ray, RaySettings) and ray.address == "ray://head:10001"
    with pytest.raises(ValidationError, match="address"):
        ScaleSpec(backend={"kind": "processes", "address": "auto"})  # not a setting of that kind
    with pytest.raises(ValidationError, match="use null"):
        ScaleSpec(backend={"kind": "ray", "address": "head:10001"})
    with pytest.raises(ValidationError, match="k8s"):
        ScaleSpec(backend="k8s")


def test_a_spec_in_the_old_shape_reads_with_its_address_moved_and_a_warning():
    with pytest.warns(FutureWarning, match=re.escape("scale.backend: {kind: ray, address: 'auto'}")):
        spec = parse_spec({"run_id": "r", "scale": {"backend": "ray", "ray_address": "auto"}})
    assert spec.scale.backend == RaySettings(address="auto")
    with pytest.raises(ValidationError, match="Ray backend's setting"):
        ScaleSpec(backend="processes", ray_address="auto")


def test_a_stored_spec_of_the_old_shape_reloads_silently():
    """Stored specs dumped every default, `ray_address: null` included: nothing to move, nothing to warn about."""
    old = RunSpec(run_id="r").model_dump(mode="json")
    old["scale"] = {"backend": "processes", "ray_address": None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunSpec.model_validate(old).scale == ScaleSpec()
