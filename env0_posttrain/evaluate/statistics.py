"""The statistics behind the verdict: what a base-vs-adapter difference of this size can support.

Pass/fail outcomes of one arm are binomial, but the two arms run the *same* tasks, so the honest
comparison is paired over tasks (tasks differ far more in difficulty than trials do). The unpaired
two-proportion figures are kept because the seeds reported them and readers compare against them.

Every interval for a rate or a difference of rates lies inside its range ([0, 1], [-1, 1]) by construction,
from a method with known coverage: Wilson for one rate, Newcombe's hybrid score for an unpaired difference,
Newcombe's method 10 (Wilson limits with the paired correlation) for a paired difference of pass/fail outcomes
with one trial per task, and a BCa bootstrap over tasks where a task's outcome is a rate over several trials.
A t interval on pass/fail outcomes is not bounded by their range and is never given.
Library routines (statsmodels, scipy) do the arithmetic; this module only chooses and packages them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest

TaskTrials = Mapping[str, Sequence[bool]]
"""task id -> pass/fail of each trial of that task, for one arm."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProportionEstimate(_Frozen):
    """One arm's pass rate with its Wilson interval (sound near 0 and 1) and ±1 binomial SE."""

    successes: int = Field(ge=0)
    n: int = Field(ge=0)
    rate: float
    se: float
    ci_low: float
    ci_high: float
    alpha: float = 0.05


class TwoProportionTest(_Frozen):
    """Unpaired comparison of b against a: pooled z-test and Newcombe's hybrid score CI of the difference (b - a)."""

    diff: float
    z: float | None = Field(description="None when both arms are all-fail or all-pass: no variance, no test")
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    alpha: float = 0.05


class McNemarResult(_Frozen):
    """Exact McNemar over tasks (K = 1): only discordant tasks carry information."""

    fail_to_pass: int
    pass_to_fail: int
    p_value: float


PAIRED_BINARY_CI = "Newcombe's method 10"
PAIRED_RATES_CI = "BCa bootstrap over tasks"
PAIRED_RATES_FALLBACK_CI = "percentile bootstrap over tasks"


class PairedAnalysis(_Frozen):
    """Per-task mean over trials, then the mean of per-task differences (b - a), tasks weighted equally.

    `se` is the cluster-robust SE over tasks with the G/(G-1) small-sample factor, equal to the
    paired-t SE of the per-task differences (the MDE uses it; no interval is built on it). `ci_*` is the
    interval named by `ci_method`: Newcombe's method 10 when every task has one trial per arm (paired
    pass/fail), else the BCa bootstrap over tasks (the percentile one where BCa is undefined); `boot_*` is
    the percentile bootstrap over tasks, a cross-check. Both lie within [-1, 1].
    """

    n_tasks: int
    trials_a: int = Field(description="most trials per task in arm a")
    trials_b: int
    mean_a: float
    mean_b: float
    diff: float
    se: float
    t: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    boot_ci_low: float | None
    boot_ci_high: float | None
    n_boot: int
    ci_method: str | None = None
    seed: int
    mcnemar: McNemarResult | None = None
    no_variance: bool = Field(default=False, description="every task changed by exactly `diff`: no t statistic exists")
    missing_in_a: list[str] = Field(default_factory=list)
    missing_in_b: list[str] = Field(default_factory=list)
    alpha: float = 0.05

    @property
    def p_primary(self) -> float | None:
        """Exact McNemar when every task has one trial per arm, else the paired t-test (or sign test, see below)."""
        if self.no_variance and self.diff == 0:
            return None  # identical arms on every task: there is nothing to test
        return self.mcnemar.p_value if self.mcnemar is not None else self.p_value


class FlipRow(_Frozen):
    task_id: str
    passes_a: int
    trials_a: int
    passes_b: int
    trials_b: int
    change: str = Field(description="fail→pass, pass→fail, both pass, both fail")


class FlipTable(_Frozen):
    """A task counts as passed by an arm when at least half its trials pass (exactly the K = 1 case)."""

    rows: list[FlipRow]
    fail_to_pass: list[str]
    pass_to_fail: list[str]
    both_pass: int
    both_fail: int
    improved: int = Field(description="tasks whose per-task pass rate went up")
    worsened: int


class MinimumDetectableEffect(_Frozen):
    """Smallest true improvement (in rate units) the eval detects with the given power, two-sided."""

    power: float
    alpha: float
    baseline_rate: float
    n_per_arm: int
    design_mde: float = Field(description="unpaired two-proportion design (Cohen's h, NormalIndPower)")
    paired_mde: float | None = Field(description="(z_{1-α/2} + z_power) × the observed paired SE")

    @property
    def headline_mde(self) -> float:
        """The paired figure matches the paired verdict; a zero observed SE says nothing, so fall back."""
        return self.paired_mde if self.paired_mde else self.design_mde


def proportion_estimate(successes: int, n: int, alpha: float = 0.05) -> ProportionEstimate:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"proportion needs 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return ProportionEstimate(successes=0, n=0, rate=math.nan, se=math.nan, ci_low=math.nan, ci_high=math.nan, alpha=alpha)
    rate = successes / n
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return ProportionEstimate(
        successes=successes, n=n, rate=rate, se=math.sqrt(rate * (1 - rate) / n),
        # clamp float round-off (statsmodels gives 0.9999999999999999 for 1/1) so the CI always holds the rate
        ci_low=min(float(low), rate), ci_high=max(float(high), rate), alpha=alpha,
    )


def two_proportion_test(successes_a: int, n_a: int, successes_b: int, n_b: int, alpha: float = 0.05) -> TwoProportionTest:
    """b - a; reproduces the seed's 19/180 vs 24/180 -> p 0.42, CI [-3.92, +9.47] pp."""
    if min(n_a, n_b) <= 0:
        raise ValueError(f"two-proportion test needs both arms non-empty, got n_a={n_a}, n_b={n_b}")
    diff = successes_b / n_b - successes_a / n_a
    pooled = (successes_a + successes_b) / (n_a + n_b)
    if pooled in (0.0, 1.0):
        # identical all-fail/all-pass arms: zero variance, so no z exists (and no interval is given)
        return TwoProportionTest(diff=diff, z=None, p_value=None, ci_low=None, ci_high=None, alpha=alpha)
    z, p = proportions_ztest([successes_b, successes_a], [n_b, n_a])
    low, high = confint_proportions_2indep(successes_b, n_b, successes_a, n_a, method="newcomb", compare="diff",
                                           alpha=alpha)
    low, high = _bounded(float(low), float(high), diff)
    return TwoProportionTest(diff=diff, z=float(z), p_value=float(p), ci_low=low, ci_high=high, alpha=alpha)


def _bounded(low: float, high: float, estimate: float, lo: float = -1.0, hi: float = 1.0) -> tuple[float, float]:
    """Float round-off aside these methods already hold the range and the estimate; make it exact."""
    return max(lo, min(low, estimate)), min(hi, max(high, estimate))


def newcombe_paired_interval(both: int, b_only: int, a_only: int, neither: int, alpha: float = 0.05
                             ) -> tuple[float, float]:
    """Newcombe (1998, Stat Med 17:2635) method 10 for the paired difference rate_b - rate_a.

    The 2x2 table over tasks: both pass, only b passes, only a passes, neither. Each arm's Wilson limits are
    combined square-and-add, corrected by the continuity-corrected phi between the two arms' outcomes."""
    n = both + b_only + a_only + neither
    if n <= 0 or min(both, b_only, a_only, neither) < 0:
        raise ValueError(f"a paired 2x2 table needs non-negative counts and n > 0, got {(both, b_only, a_only, neither)}")
    pass_b, pass_a = both + b_only, both + a_only
    pb, pa = pass_b / n, pass_a / n
    lb, ub = (float(x) for x in proportion_confint(pass_b, n, alpha=alpha, method="wilson"))
    la, ua = (float(x) for x in proportion_confint(pass_a, n, alpha=alpha, method="wilson"))
    margins = pass_b * (n - pass_b) * pass_a * (n - pass_a)
    cross = both * neither - b_only * a_only
    phi = 0.0
    if margins > 0:
        phi = (cross - n / 2) / math.sqrt(margins) if cross > n / 2 else min(cross, 0) / math.sqrt(margins)
    low = (pb - pa) - math.sqrt(max(0.0, (pb - lb) ** 2 + (ua - pa) ** 2 - 2 * phi * (pb - lb) * (ua - pa)))
    high = (pb - pa) + math.sqrt(max(0.0, (pa - la) ** 2 + (ub - pb) ** 2 - 2 * phi * (pa - la) * (ub - pb)))
    return _bounded(low, high, pb - pa)


def per_task_rates(trials: TaskTrials) -> dict[str, float]:
    return {tid: float(np.mean(list(v))) for tid, v in trials.items() if len(v) > 0}


def paired_analysis(
    a: TaskTrials, b: TaskTrials, *, alpha: float = 0.05, n_boot: int = 10_000, seed: int = 0
) -> PairedAnalysis:
    """Paired over the tasks both arms ran; tasks only one arm ran are listed, not silently used."""
    rates_a, rates_b = per_task_rates(a), per_task_rates(b)
    common = sorted(set(rates_a) & set(rates_b))
    ka = max((len(a[t]) for t in common), default=0)
    kb = max((len(b[t]) for t in common), default=0)
    xa = np.array([rates_a[t] for t in common], dtype=float)
    xb = np.array([rates_b[t] for t in common], dtype=float)
    d = np.round(xb - xa, 12)  # 2/3 - 1/3 and 1/3 are one difference: float residue must not read as variance
    n = len(common)
    base = dict(
        n_tasks=n, trials_a=ka, trials_b=kb, n_boot=n_boot, seed=seed, alpha=alpha,
        missing_in_a=sorted(set(rates_b) - set(rates_a)), missing_in_b=sorted(set(rates_a) - set(rates_b)),
        mean_a=float(xa.mean()) if n else math.nan, mean_b=float(xb.mean()) if n else math.nan,
        diff=float(d.mean()) if n else math.nan,
    )
    if n < 2:
        return PairedAnalysis(**base, se=math.nan, t=None, p_value=None, ci_low=None, ci_high=None,
                              boot_ci_low=None, boot_ci_high=None)
    se = float(d.std(ddof=1) / math.sqrt(n))
    no_variance = se == 0.0
    # Every task moved by the same amount: the t statistic is undefined and a bootstrap interval would
    # have zero width. No difference at all gets no p-value; a uniform shift gets the exact sign
    # test over tasks (2 * 0.5^n), which is what the data can support.
    t_stat, ci, boot = None, (None, None), (None, None)
    p_val = None if not no_variance or d[0] == 0 else float(stats.binomtest(n if d[0] > 0 else 0, n, 0.5).pvalue)
    single = all(len(a[t]) == 1 and len(b[t]) == 1 for t in common)
    method = None
    if not no_variance:
        res = stats.ttest_rel(xb, xa)
        t_stat, p_val = float(res.statistic), float(res.pvalue)
        boot, bca = _task_bootstrap(d, alpha, n_boot, seed)
        if single:
            ci, method = newcombe_paired_interval(*_paired_table(a, b, common), alpha=alpha), PAIRED_BINARY_CI
        elif bca is not None:
            ci, method = bca, PAIRED_RATES_CI
        else:
            ci, method = boot, PAIRED_RATES_FALLBACK_CI
    return PairedAnalysis(
        **base, se=se, t=t_stat, p_value=p_val, ci_low=ci[0], ci_high=ci[1], boot_ci_low=boot[0], boot_ci_high=boot[1],
        ci_method=method, mcnemar=mcnemar_exact(a, b) if single else None, no_variance=no_variance,
    )


def _task_bootstrap(d: np.ndarray, alpha: float, n_boot: int, seed: int
                    ) -> tuple[tuple[float, float], tuple[float, float] | None]:
    """(percentile, BCa) intervals of the mean per-task difference from one seeded set of resamples over tasks.
    BCa is None where it is undefined (a degenerate jackknife or resample distribution)."""
    common = dict(confidence_level=1 - alpha, vectorized=True)
    pct = stats.bootstrap((d,), np.mean, n_resamples=n_boot, method="percentile", rng=np.random.default_rng(seed),
                          **common)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns and answers NaN where BCa is undefined
        bca = stats.bootstrap((d,), np.mean, n_resamples=0, bootstrap_result=pct, method="BCa", **common)
    estimate = float(d.mean())
    low, high = float(pct.confidence_interval.low), float(pct.confidence_interval.high)
    pair = (float(bca.confidence_interval.low), float(bca.confidence_interval.high))
    return _bounded(low, high, estimate), (_bounded(*pair, estimate) if all(map(math.isfinite, pair)) else None)


def _paired_table(a: TaskTrials, b: TaskTrials, common: Sequence[str]) -> tuple[int, int, int, int]:
    """(both pass, only b passes, only a passes, neither) over tasks with one trial per arm."""
    both = sum(bool(a[t][0]) and bool(b[t][0]) for t in common)
    a_only = sum(bool(a[t][0]) and not b[t][0] for t in common)
    b_only = sum(not a[t][0] and bool(b[t][0]) for t in common)
    return both, b_only, a_only, len(common) - both - a_only - b_only


def mcnemar_exact(a: TaskTrials, b: TaskTrials) -> McNemarResult:
    """Exact (binomial) McNemar on tasks with exactly one trial in each arm."""
    common = sorted(set(a) & set(b))
    bad = [t for t in common if len(a[t]) != 1 or len(b[t]) != 1]
    if bad:
        raise ValueError(f"McNemar needs one trial per task and arm; tasks with more: {bad[:5]}")
    both, b_only, a_only, neither = _paired_table(a, b, common)
    result = mcnemar([[both, a_only], [b_only, neither]], exact=True)
    return McNemarResult(fail_to_pass=b_only, pass_to_fail=a_only, p_value=float(result.pvalue))


def task_solved(passes: int, trials: int) -> bool:
    """A task counts as passed when at least half its trials pass (and at least one does)."""
    return trials > 0 and passes > 0 and 2 * passes >= trials


def flip_table(a: TaskTrials, b: TaskTrials) -> FlipTable:
    rows: list[FlipRow] = []
    for tid in sorted(set(a) & set(b)):
        pa, pb = sum(map(bool, a[tid])), sum(map(bool, b[tid]))
        ka, kb = len(a[tid]), len(b[tid])
        if ka == 0 or kb == 0:
            continue
        solved_a, solved_b = task_solved(pa, ka), task_solved(pb, kb)
        change = {(False, True): "fail→pass", (True, False): "pass→fail", (True, True): "both pass"}.get(
            (solved_a, solved_b), "both fail"
        )
        rows.append(FlipRow(task_id=tid, passes_a=pa, trials_a=ka, passes_b=pb, trials_b=kb, change=change))
    return FlipTable(
        rows=rows,
        fail_to_pass=[r.task_id for r in rows if r.change == "fail→pass"],
        pass_to_fail=[r.task_id for r in rows if r.change == "pass→fail"],
        both_pass=sum(r.change == "both pass" for r in rows),
        both_fail=sum(r.change == "both fail" for r in rows),
        improved=sum(r.passes_b / r.trials_b > r.passes_a / r.trials_a for r in rows),
        worsened=sum(r.passes_b / r.trials_b < r.passes_a / r.trials_a for r in rows),
    )


def design_mde(baseline_rate: float, n_per_arm: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest rate increase over `baseline_rate` an unpaired two-sided z-test detects (arcsine scale)."""
    if n_per_arm <= 0:
        return math.nan
    h = NormalIndPower().solve_power(effect_size=None, nobs1=n_per_arm, alpha=alpha, power=power, ratio=1.0)
    phi = math.asin(math.sqrt(min(max(baseline_rate, 0.0), 1.0)))
    if phi + h / 2 <= math.pi / 2:
        return math.sin(phi + h / 2) ** 2 - baseline_rate
    return baseline_rate - math.sin(phi - h / 2) ** 2  # near 1 only a drop is detectable


def paired_mde(se: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * se


def minimum_detectable_effect(
    baseline_rate: float, n_per_arm: int, paired_se: float | None = None, *, alpha: float = 0.05, power: float = 0.8
) -> MinimumDetectableEffect:
    paired = None if paired_se is None or not math.isfinite(paired_se) else float(paired_mde(paired_se, alpha=alpha, power=power))
    return MinimumDetectableEffect(
        power=power, alpha=alpha, baseline_rate=baseline_rate, n_per_arm=n_per_arm,
        design_mde=float(design_mde(baseline_rate, n_per_arm, alpha=alpha, power=power)), paired_mde=paired,
    )
