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
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportion_effectsize,
    proportions_ztest,
)

from env0_posttrain.evaluate.statistics import (
    design_mde,
    flip_table,
    mcnemar_exact,
    minimum_detectable_effect,
    newcombe_paired_interval,
    paired_analysis,
    paired_mde,
    proportion_estimate,
    two_proportion_test,
)


def test_seed_figures_reproduced_from_raw_counts():
    """Seed: 19/180 base vs 24/180 SFT -> +2.78 pp, p ~= 0.42 (the seeds' Wald CI [-3.92, +9.47] pp is not given:
    Newcombe's interval is [-4.02, +9.60] pp)."""
    r = two_proportion_test(19, 180, 24, 180)
    assert round(100 * r.diff, 2) == 2.78
    assert round(r.p_value, 2) == 0.42
    assert (round(100 * r.ci_low, 2), round(100 * r.ci_high, 2)) == (-4.02, 9.60)
    z, p = proportions_ztest([24, 19], [180, 180])
    assert r.z == pytest.approx(z) and r.p_value == pytest.approx(p)
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(r.z)))


@pytest.mark.parametrize("b, nb, a, na, published", [
    # Newcombe (1998) Stat Med 17:873, method 10 (hybrid score), his examples (a) and (d)
    (56, 70, 48, 80, (0.0524, 0.3339)),
    (5, 56, 0, 29, (-0.0381, 0.1926)),
])
def test_unpaired_interval_is_newcombes_hybrid_score(b, nb, a, na, published):
    r = two_proportion_test(a, na, b, nb)
    assert (round(r.ci_low, 4), round(r.ci_high, 4)) == published
    low, high = confint_proportions_2indep(b, nb, a, na, method="newcomb", compare="diff")
    assert (r.ci_low, r.ci_high) == pytest.approx((low, high))


def test_unpaired_interval_stays_in_range_where_wald_does_not():
    # Wald: 0.5 +- 1.96 * sqrt(0.25 / 2) = [-0.19, +1.19]
    r = two_proportion_test(1, 2, 2, 2)
    assert -1 <= r.ci_low < r.diff <= r.ci_high <= 1


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
    assert r.mcnemar is None and r.trials_a == 3 and r.n_tasks == 40


def test_paired_bootstrap_is_seeded_and_brackets_the_estimate():
    a, b = _random_trials(2, 50, 3, 0.2, 0.35)
    r1 = paired_analysis(a, b, n_boot=3000, seed=7)
    r2 = paired_analysis(a, b, n_boot=3000, seed=7)
    r3 = paired_analysis(a, b, n_boot=3000, seed=8)
    assert (r1.boot_ci_low, r1.boot_ci_high) == (r2.boot_ci_low, r2.boot_ci_high)
    assert (r1.boot_ci_low, r1.boot_ci_high) != (r3.boot_ci_low, r3.boot_ci_high)
    assert r1.boot_ci_low < r1.diff < r1.boot_ci_high
    # with 50 tasks the BCa and percentile bootstraps of the same resamples agree to within a point or two
    assert r1.ci_method == "BCa bootstrap over tasks" and r1.ci_low < r1.diff < r1.ci_high
    assert r1.boot_ci_low == pytest.approx(r1.ci_low, abs=0.03) and r1.boot_ci_high == pytest.approx(r1.ci_high, abs=0.03)


def test_several_trials_get_scipys_bca_interval_over_tasks():
    a, b = _random_trials(3, 30, 3, 0.3, 0.4)
    r = paired_analysis(a, b, n_boot=4000, seed=5)
    d = np.round([np.mean(b[t]) - np.mean(a[t]) for t in sorted(a)], 12)
    ref = stats.bootstrap((d,), np.mean, n_resamples=4000, method="BCa", rng=np.random.default_rng(5), vectorized=True)
    assert (r.ci_low, r.ci_high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    pct = stats.bootstrap((d,), np.mean, n_resamples=4000, method="percentile", rng=np.random.default_rng(5),
                          vectorized=True)
    assert (r.boot_ci_low, r.boot_ci_high) == pytest.approx((pct.confidence_interval.low, pct.confidence_interval.high))


def test_demo_headline_outcomes_get_a_bounded_interval():
    """The demo's stored outcome: 60 tasks x 3 greedy trials, base 0/180, adapter 3/3 on 12 tasks and 0/3 on 48.
    The t interval gave [+9.58, +30.42] pp; the BCa bootstrap over tasks gives [+11.67, +31.67] pp, close to the
    Wilson interval of 12/60 [11.8, 31.8] % (what the data is: 12 of 60 tasks flipped, none back)."""
    a = {f"t{i:02d}": [False] * 3 for i in range(60)}
    b = {f"t{i:02d}": [i < 12] * 3 for i in range(60)}
    r = paired_analysis(a, b)
    assert r.diff == pytest.approx(0.2) and r.ci_method == "BCa bootstrap over tasks"
    assert (round(100 * r.ci_low, 2), round(100 * r.ci_high, 2)) == (11.67, 31.67)
    assert r.p_primary < 0.001  # the paired t test, unchanged
    assert stats.ttest_rel([float(b[t][0]) for t in sorted(b)], [0.0] * 60).confidence_interval().low < r.ci_low


# Published values: Newcombe (1998) Stat Med 17:2635 method 10 on his example; Fagerland, Lydersen & Laake (2014)
# Stat Med 33:2850 on Bentur et al. and Cavo et al.; the 2x2 as (both pass, only b, only a, neither)
@pytest.mark.parametrize("table, published", [
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((1, 1, 7, 12), (-0.5069, -0.0256)),
    ((59, 6, 16, 80), (-0.1186, -0.0046)),
])
def test_newcombe_paired_interval_matches_published_values(table, published):
    low, high = newcombe_paired_interval(*table)
    assert (round(low, 4), round(high, 4)) == published


def test_one_trial_per_task_gets_newcombes_paired_interval():
    # Newcombe's example as tasks: 20 both pass, 12 only b, 2 only a, 16 neither
    outcomes = [(True, True)] * 20 + [(False, True)] * 12 + [(True, False)] * 2 + [(False, False)] * 16
    a = {f"t{i}": [x] for i, (x, _) in enumerate(outcomes)}
    b = {f"t{i}": [y] for i, (_, y) in enumerate(outcomes)}
    r = paired_analysis(a, b, n_boot=500)
    assert r.ci_method == "Newcombe's method 10" and r.diff == pytest.approx(0.2)
    assert (round(r.ci_low, 4), round(r.ci_high, 4)) == (0.0562, 0.3292)
    reverse = paired_analysis(b, a, n_boot=500)
    assert (reverse.ci_low, reverse.ci_high) == pytest.approx((-r.ci_high, -r.ci_low))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40), st.integers(1, 3))
def test_every_paired_interval_lies_within_plus_minus_one(per_task, k):
    """Near the edges (the teacher-table gaps near -100 pp) the t interval ran past -1; none of these can."""
    a = {f"t{i}": [j < min(x, k) for j in range(k)] for i, (x, _) in enumerate(per_task)}
    b = {f"t{i}": [j < min(y, k) for j in range(k)] for i, (_, y) in enumerate(per_task)}
    r = paired_analysis(a, b, n_boot=300)
    for low, high in ((r.ci_low, r.ci_high), (r.boot_ci_low, r.boot_ci_high)):
        if low is not None:
            assert -1 <= low <= r.diff <= high <= 1


def test_the_gap_that_ran_past_minus_100_pp_now_stays_inside():
    # a student far below its teacher: 58 of 60 tasks teacher 3/3 vs student 0/3, 2 both 3/3
    teacher = {f"t{i}": [True] * 3 for i in range(60)}
    student = {f"t{i}": [i < 2] * 3 for i in range(60)}
    r = paired_analysis(teacher, student)
    d = np.array([np.mean(student[t]) - np.mean(teacher[t]) for t in sorted(teacher)])
    assert stats.ttest_1samp(d, 0.0).confidence_interval().low < -1  # the t interval the report used to give
    assert -1 <= r.ci_low < r.diff < r.ci_high <= 1


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
    assert r.no_variance and r.diff == 1.0 and r.t is None and r.ci_low is None and r.ci_method is None
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


def test_equal_differences_from_different_rates_are_no_variance():
    # 3/3 - 2/3 and 1/3 - 0/3 differ in the last float bit; they are the same change, so no t statistic exists
    a = {"t0": [True, True, False], "t1": [False, False, False], "t2": [True, True, False]}
    b = {"t0": [True, True, True], "t1": [True, False, False], "t2": [True, True, True]}
    r = paired_analysis(a, b)
    assert r.no_variance and r.t is None and r.ci_low is None
    assert r.p_value == pytest.approx(stats.binomtest(3, 3, 0.5).pvalue)
