"""Task families; importing this package registers every template."""

from env0_posttrain.tasks.families import auth, auth_bulk, calendar, docs, drive, mail, multi_app, multi_app_more  # noqa: F401
from env0_posttrain.tasks.families import calendar_sharing  # noqa: F401,E402  (ACL and secondary-calendar templates)
from env0_posttrain.tasks.families import slack_workspace  # noqa: F401,E402  (pins, reminders, channel reorg, status, scheduling)
from env0_posttrain.tasks.families import google_more  # noqa: F401,E402  (Gmail filters/threads/vacation, Drive comment replies)
