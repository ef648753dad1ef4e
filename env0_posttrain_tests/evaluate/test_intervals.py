"""A paired interval prints its bounds or says why there are none: a 100 % vs 0 % gap in the teacher table has no
variance, which the table says instead of "n/a to n/a"."""

from env0_posttrain.evaluate.intervals import interval_text
from env0_posttrain.evaluate.statistics import paired_analysis
from env0_posttrain.evaluate.teacher_table import StudentVsTeacher, TeacherRow, table_markdown
from env0_posttrain.evaluate.statistics import proportion_estimate


def test_bounds_or_the_reason_there_are_none():
    assert interval_text(-0.25, 0.125, 0.0, 8) == "-25.0 to +12.5"
    assert interval_text(None, None, -1.0, 6) == "none: every task differs by -100.0 (no variance to estimate one from)"
    assert interval_text(None, None, 0.5, 1) == "none: 1 paired task (an interval needs 2)"
    assert interval_text(None, None, float("nan"), 0) == "none: 0 paired tasks (an interval needs 2)"


def test_a_teacher_that_passes_everything_against_a_student_that_passes_nothing():
    teacher = {f"t{i}": [1.0] for i in range(6)}
    student = {f"t{i}": [0.0] for i in range(6)}
    paired = paired_analysis(teacher, student, alpha=0.05, n_boot=200, seed=0)
    assert paired.ci_low is None  # no variance: no interval exists
    row = TeacherRow(run_id="r", teacher="env0-oracle/oracle", teacher_pass_rate=proportion_estimate(6, 6, 0.05),
                     students=[StudentVsTeacher(arm="sft", pass_rate=proportion_estimate(0, 6, 0.05), gap=paired.diff,
                                                gap_ci_low=paired.ci_low, gap_ci_high=paired.ci_high,
                                                gap_p_value=paired.p_primary, teacher_passes_kept=0.0, tasks=6)])
    text = table_markdown([row])
    assert "n/a" not in text and "none: every task differs by -100.0 (no variance to estimate one from)" in text
