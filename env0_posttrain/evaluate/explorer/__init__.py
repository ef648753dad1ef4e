"""The trajectory explorer: a static page in the report folder to read every eval episode, arms side by side."""

from env0_posttrain.evaluate.explorer.links import PAGE, task_href
from env0_posttrain.evaluate.explorer.site import ExplorerInfo, write_explorer

__all__ = ["PAGE", "ExplorerInfo", "task_href", "write_explorer"]
