"""Task families with executable verifiers and oracle solutions, and the task-set registry.

    from env0_posttrain.tasks import generate_tasks, build_workspace, verify, make_task_set
"""

from env0_posttrain.tasks import families as _families  # noqa: F401  (registers the templates)
from env0_posttrain.tasks.generator import (
    COMPANY_SEED, GENERATOR_VERSION, build_workspace, code_version, company, generate_tasks, play, score_task,
    select_templates, starter_template_ids, starter_templates, template_stream, verify,
)
from env0_posttrain.tasks.ledger import LedgerRow, build_ledger, ledger_markdown
from env0_posttrain.tasks.model import StateRecipe, Task, ToolCall, VerifierResult
from env0_posttrain.tasks.registry import (
    Provenance, TaskSet, fresh_train_tasks, make_task_set, read_tasks_jsonl, split_overlap, write_tasks_jsonl,
)
from env0_posttrain.tasks.taskdir import TaskDirError, export_task_dir, export_task_dirs, import_task_dir, import_task_dirs
from env0_posttrain.tasks.template import TEMPLATES, OracleError, Template
from env0_posttrain.tasks.vocabulary import vocabulary

__all__ = [
    "COMPANY_SEED", "GENERATOR_VERSION", "LedgerRow", "OracleError", "Provenance", "StateRecipe", "TEMPLATES", "Task",
    "TaskDirError", "TaskSet", "Template", "ToolCall", "VerifierResult", "build_ledger", "build_workspace", "code_version",
    "company", "export_task_dir", "export_task_dirs", "fresh_train_tasks", "generate_tasks", "import_task_dir", "import_task_dirs",
    "ledger_markdown", "make_task_set", "play", "read_tasks_jsonl", "score_task", "select_templates", "split_overlap",
    "starter_template_ids", "starter_templates", "template_stream", "verify", "vocabulary", "write_tasks_jsonl",
]
