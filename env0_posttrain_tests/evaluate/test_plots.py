"""Figures: valid PNGs, nothing drawn from nothing, partial training logs tolerated, HTML cannot be injected."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import matplotlib.image as mpimg

from env0_posttrain.evaluate.history import TrendPoint, parse_history
from env0_posttrain.evaluate.plots import (
    plot_family_pass_rates,
    plot_nightly_trend,
    plot_pass_rates,
    plot_training_curves,
)
from env0_posttrain.evaluate.render import render_html
from env0_posttrain.evaluate.statistics import proportion_estimate


def test_pass_rate_plot_is_a_readable_png(tmp_path):
    path = plot_pass_rates({"base": proportion_estimate(19, 180), "sft": proportion_estimate(24, 180),
                            "teacher_eval": proportion_estimate(0, 0)}, tmp_path / "p.png")
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert not list(tmp_path.glob(".*.tmp"))


def test_family_plot_with_an_arm_missing_in_a_family(tmp_path):
    per = {"auth": {"base": proportion_estimate(1, 10), "sft": proportion_estimate(3, 10)},
           "mail": {"base": proportion_estimate(2, 10)}}
    assert mpimg.imread(plot_family_pass_rates(per, tmp_path / "f.png")).ndim == 3


def test_training_curves_take_whatever_was_logged(tmp_path):
    assert plot_training_curves([], tmp_path / "t.png") is None
    assert plot_training_curves([{"step": 1}, {"loss": 0.3}], tmp_path / "t.png") is None  # no (step, value) pair
    rows = [{"step": 1, "loss": 2.0}, {"step": 2, "loss": float("nan")}, {"step": 3, "loss": 1.0, "gpu_util": 55}]
    assert plot_training_curves(rows, tmp_path / "t.png").is_file()


def test_trend_plot_and_history_parsing(tmp_path):
    assert plot_nightly_trend([], tmp_path / "n.png") is None
    t0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
    rows = [{"timestamp": (t0 + timedelta(days=d)).isoformat(), "arm": "sft", "pass_rate": 0.1 + d / 100} for d in range(5)]
    points = parse_history(reversed(rows))
    assert [p.timestamp for p in points] == sorted(p.timestamp for p in points)
    assert isinstance(points[0], TrendPoint)
    assert mpimg.imread(plot_nightly_trend(points, tmp_path / "n.png")).ndim == 3


def test_html_escapes_untrusted_text_and_inlines_images(tmp_path):
    plot_pass_rates({"base": proportion_estimate(1, 2)}, tmp_path / "plots" / "p.png")
    md = "# r\n\n| task |\n| --- |\n| <script>alert(1)</script> |\n\n![fig](plots/p.png)\n"
    html = render_html(md, tmp_path, "t <b>", {"pass_rate": str(tmp_path / "plots" / "p.png")})
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "data:image/png;base64,iVBORw0KGgo" in html and "<title>t &lt;b&gt;</title>" in html
