"""Multi-app family: Slack work, tasks that carry one item across two services, longer jobs that read in one service
and act in others, and Slack housekeeping."""
