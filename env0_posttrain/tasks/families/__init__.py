"""Task families; importing this package registers every template."""

from env0_posttrain.tasks.families import auth, auth_bulk, calendar, calendar_sharing, docs, docs_comments  # noqa: F401
from env0_posttrain.tasks.families import drive, mail, mail_settings  # noqa: F401
from env0_posttrain.tasks.families.multi_app import handoffs, jobs, slack, slack_housekeeping  # noqa: F401
