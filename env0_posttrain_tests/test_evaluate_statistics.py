"""The statistics against scipy / statsmodels and the seed's published figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize, proportions_ztest

from env0_posttrain.evaluate.statistics import (
    design_mde,
    flip_table,
    mcnemar_exact,
    minimum_detectable_effect,
    paired_analysis,
    paired_mde,
    proportion_estimate,
    two_proportion_test,
)


def test_seed_figures_reproduced_from_raw_counts():
    """Seed: 19/180 base vs 24/180 SFT -> +2.78 pp, p ~= 0.42, 95% CI about [-3.92, +9.47] pp."""
    r = two_proportion_test(19, 180, 24, 180)
    assert round(100 * r.diff, 2) == 2.78
    assert round(r.p_value, 2) == 0.42
    assert round(100 * r.ci_low, 2) == -3.92
    assert round(100 * r.ci_high, 2) == 9.47
    z, p = proportions_ztest([24, 19], [180, 180])
    assert r.z == pytest.approx(z) and r.p_value == pytest.approx(p)
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(r.z)))


def test_wald_ci_matches_the_closed_form():
    p1, p2, n = 24 / 180, 19 / 180, 180
    se = math.sqrt(p1 * (1 - p1) / n + p2 * (1 - p2) / n)
    r = two_proportion_test(19, 180, 24, 180)
    z = stats.norm.ppf(0.975)
    assert r.ci_low == pytest.approx(p1 - p2 - z * se) and r.ci_high == pytest.approx(p1 - p2 + z * se)


def test_wilson_interval_and_se():
    e = proportion_estimate(24, 180)
    low, high = proportion_confint(24, 180, method="wilson")
    assert (e.ci_low, e.ci_high) == pytest.approx((low, high))
    # closed form (Wilson 1927), independent of statsmodels
    p, n, z = 24 / 180, 180, stats.norm.ppf(0.975)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert e.ci_low == pytest.approx(centre - half) and e.ci_high == pytest.approx(centre + half)
    assert e.se == pytest.approx(math.sqrt(p * (1 - p) / n))
    zero = proportion_estimate(0, 30)
    assert zero.ci_low == pytest.approx(0.0, abs=1e-12) and zero.ci_high > 0.05  # Wilson stays informative at 0


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 500), frac=st.floats(0, 1), alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_wilson_matches_statsmodels_everywhere(n, frac, alpha):
    k = round(frac * n)
    e = proportion_estimate(k, n, alpha)
    low, high = proportion_confint(k, n, alpha=alpha, method="wilson")
    assert e.ci_low == pytest.approx(low, abs=1e-12) and e.ci_high == pytest.approx(high, abs=1e-12)
    assert 0 <= e.ci_low <= e.rate <= e.ci_high <= 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(a=st.integers(1, 99), b=st.integers(1, 99))
def test_two_proportion_is_antisymmetric(a, b):
    ab, ba = two_proportion_test(a, 100, b, 100), two_proportion_test(b, 100, a, 100)
    assert ab.diff == pytest.approx(-ba.diff) and ab.p_value == pytest.approx(ba.p_value)
    assert ab.ci_low == pytest.approx(-ba.ci_high)


def test_identical_all_fail_arms_are_no_evidence():
    r = two_proportion_test(0, 60, 0, 60)
    assert r.diff == 0 and r.z is None and r.p_value is None and r.ci_low is None
    with pytest.raises(ValueError, match="non-empty"):
        two_proportion_test(0, 0, 1, 10)
    with pytest.raises(ValueError, match="successes"):
        proportion_estimate(5, 3)


def _random_trials(seed: int, tasks: int, k: int, pa: float, pb: float):
    rng = np.random.default_rng(seed)
    difficulty = rng.random(tasks)  # tasks differ: the reason to pair
    a = {f"t{i}": list(rng.random(k) < pa * difficulty[i] * 2) for i in range(tasks)}
    b = {f"t{i}": list(rng.random(k) < min(1.0, pb * difficulty[i] * 2)) for i in range(tasks)}
    return a, b


def test_paired_se_is_the_cluster_robust_se_over_tasks():
    a, b = _random_trials(1, 40, 3, 0.2, 0.3)
    r = paired_analysis(a, b, n_boot=2000)
    # trial-level regression pass ~ 1 + arm, clustered by task (statsmodels), CR0 x G/(G-1)
    ids = sorted(a)
    y = np.array([float(x) for t in ids for x in a[t]] + [float(x) for t in ids for x in b[t]])
    arm = np.array([0.0] * (3 * len(ids)) + [1.0] * (3 * len(ids)))
    groups = np.array([i for i, _ in enumerate(ids) for _ in range(3)] * 2)
    fit = sm.OLS(y, sm.add_constant(arm)).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    g = len(ids)
    assert r.diff == pytest.approx(fit.params[1])
    assert r.se == pytest.approx(fit.bse[1] * math.sqrt(g / (g - 1)))
    ref = stats.ttest_rel([np.mean(b[t]) for t in ids], [np.mean(a[t]) for t in ids])
    assert r.p_value == pytest.approx(ref.pvalue) and r.t == pytest.approx(ref.statistic)
    ci = ref.confidence_interval()
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high))
    assert r.mcnemar is None and r.trials_a == 3 and r.n_tasks == 40


def test_paired_bootstrap_is_seeded_and_brackets_the_estimate():
    a, b = _random_trials(2, 50, 3, 0.2, 0.35)
    r1 = paired_analysis(a, b, n_boot=3000, seed=7)
    r2 = paired_analysis(a, b, n_boot=3000, seed=7)
    r3 = paired_analysis(a, b, n_boot=3000, seed=8)
    assert (r1.boot_ci_low, r1.boot_ci_high) == (r2.boot_ci_low, r2.boot_ci_high)
    assert (r1.boot_ci_low, r1.boot_ci_high) != (r3.boot_ci_low, r3.boot_ci_high)
    assert r1.boot_ci_low < r1.diff < r1.boot_ci_high
    # with 50 tasks the percentile bootstrap and the t interval agree to within a point or two
    assert r1.boot_ci_low == pytest.approx(r1.ci_low, abs=0.03) and r1.boot_ci_high == pytest.approx(r1.ci_high, abs=0.03)


def test_paired_with_one_trial_uses_exact_mcnemar():
    # 10 fail->pass, 3 pass->fail, 5 both pass, 22 both fail
    a, b = {}, {}
    for i in range(40):
        pa, pb = (i < 3 or 13 <= i < 18), (3 <= i < 18)
        a[f"t{i}"], b[f"t{i}"] = [pa], [pb]
    r = paired_analysis(a, b, n_boot=500)
    ref = mcnemar([[5, 3], [10, 22]], exact=True)
    assert r.mcnemar is not None and r.mcnemar.fail_to_pass == 10 and r.mcnemar.pass_to_fail == 3
    assert r.mcnemar.p_value == pytest.approx(ref.pvalue)
    assert r.mcnemar.p_value == pytest.approx(stats.binomtest(3, 13, 0.5).pvalue)
    assert r.p_primary == r.mcnemar.p_value


def test_mcnemar_refuses_several_trials():
    with pytest.raises(ValueError, match="one trial"):
        mcnemar_exact({"t": [True, False]}, {"t": [True]})


def test_paired_lists_tasks_only_one_arm_ran_and_handles_degenerate_data():
    r = paired_analysis({"a": [True], "b": [False], "x": [True]}, {"a": [True], "b": [False], "y": [False]})
    assert r.missing_in_a == ["y"] and r.missing_in_b == ["x"] and r.n_tasks == 2
    assert r.diff == 0 and r.se == 0 and r.no_variance and r.t is None
    assert r.p_value is None and r.p_primary is None and r.ci_low is None and r.boot_ci_low is None
    tiny = paired_analysis({"a": [True]}, {"a": [False]})
    assert tiny.n_tasks == 1 and tiny.p_value is None and tiny.p_primary is None


def test_uniform_shift_gets_the_exact_sign_test_not_p_zero():
    # every one of 6 tasks goes 0/3 -> 3/3: no t statistic exists; the sign test gives 2 * 0.5^6
    a = {f"t{i}": [False] * 3 for i in range(6)}
    b = {f"t{i}": [True] * 3 for i in range(6)}
    r = paired_analysis(a, b)
    assert r.no_variance and r.diff == 1.0 and r.t is None and r.ci_low is None
    assert r.p_value == pytest.approx(stats.binomtest(6, 6, 0.5).pvalue) == pytest.approx(2 * 0.5**6)
    assert paired_analysis(b, a).p_value == pytest.approx(2 * 0.5**6)


def test_flip_table():
    a = {"t1": [False, False, False], "t2": [True, True, False], "t3": [True, True, True], "t4": [False, False, False]}
    b = {"t1": [True, True, False], "t2": [False, False, False], "t3": [True, True, True], "t4": [True, False, False]}
    f = flip_table(a, b)
    assert f.fail_to_pass == ["t1"] and f.pass_to_fail == ["t2"]
    assert f.both_pass == 1 and f.both_fail == 1 and f.improved == 2 and f.worsened == 1
    assert {r.task_id: r.change for r in f.rows}["t4"] == "both fail"


def test_design_mde_has_80_percent_power_per_statsmodels():
    p0, n = 19 / 180, 180
    mde = design_mde(p0, n)
    h = proportion_effectsize(p0 + mde, p0)
    assert NormalIndPower().power(effect_size=h, nobs1=n, alpha=0.05, ratio=1.0) == pytest.approx(0.8, abs=1e-6)
    # the textbook approximation h = (z_{1-a/2} + z_{power}) sqrt(2/n)
    assert h == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * math.sqrt(2 / n), rel=1e-3)
    assert 0.08 < mde < 0.12  # 180 rows per arm cannot see the seed's +2.78 pp


def test_paired_mde_and_fallback():
    assert paired_mde(0.02) == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * 0.02)
    m = minimum_detectable_effect(0.1, 180, 0.0)
    assert m.paired_mde == 0.0 and m.headline_mde == m.design_mde  # zero observed SE says nothing
    m2 = minimum_detectable_effect(0.1, 180, 0.02)
    assert m2.headline_mde == pytest.approx(paired_mde(0.02))
    near_one = design_mde(0.99, 50)
    assert 0 < near_one < 0.99
