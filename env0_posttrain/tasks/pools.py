"""Closed vocabularies the templates draw from.

Every argument a starter task needs comes from here or from the seeded company (people,
channels, labels), never a free-form string: a tiny student sees each entity many times in
training, so an eval task is an unseen *combination* of seen entities.
"""

from __future__ import annotations

PHRASES = (
    "standup moved to 10:30",
    "the deploy is finished",
    "the release branch is frozen",
    "lunch is in the kitchen",
    "the build is green again",
    "please review the roadmap",
    "the office is closed on Friday",
    "all-hands starts in five minutes",
    "the VPN is back up",
    "invoices are due on Monday",
)

SUBJECTS = (
    "Invoice for March",
    "Contract renewal",
    "Offsite logistics",
    "Quarterly numbers",
    "Travel booking",
    "Vendor quote",
    "Interview feedback",
    "Security review",
    "Launch plan",
    "Budget approval",
    "Customer escalation",
    "Team offsite",
)

BODIES = {
    "Invoice for March": "Please find the March invoice details below. Total due: 4,250 EUR.",
    "Contract renewal": "Our contract renews next month. Can you confirm the new terms?",
    "Offsite logistics": "The offsite venue is booked; the bus leaves at 8:00 sharp.",
    "Quarterly numbers": "Revenue grew 12 percent this quarter; margins held steady.",
    "Travel booking": "Your flight to Lisbon is confirmed for next Tuesday.",
    "Vendor quote": "The vendor quoted 18,000 USD for the annual licence.",
    "Interview feedback": "Strong hire: great system design, clear communication.",
    "Security review": "Two findings need fixes before the audit closes.",
    "Launch plan": "Launch is planned for the 24th; marketing assets are ready.",
    "Budget approval": "The budget request is approved up to 30,000 USD.",
    "Customer escalation": "Acme reports failed exports since Monday; please advise.",
    "Team offsite": "Please vote for the offsite dates by Friday.",
}

NOTE_SUBJECTS = ("Quick update", "Heads up", "Reminder", "Following up", "Action needed", "FYI")

LABELS = ("Finance", "Urgent", "Clients", "Travel", "Follow-up", "Receipts", "Legal", "Hiring")

FILE_TITLES = (
    "Q3 Budget",
    "Product Roadmap",
    "Hiring Plan",
    "Onboarding Guide",
    "Sales Forecast",
    "Security Policy",
    "Offsite Agenda",
    "Board Deck",
    "Launch Checklist",
    "Design Review Notes",
    "Vendor Contracts",
    "Customer List",
)

FOLDER_NAMES = ("Projects", "Shared with Legal", "Board", "Marketing Assets", "Contracts", "Design", "Recruiting",
                "Templates", "Reports", "Invoices 2026")

DOC_TITLES = (
    "Meeting Notes",
    "Project Brief",
    "Weekly Report",
    "Retro Notes",
    "Incident Postmortem",
    "Team Charter",
    "Interview Guide",
    "Release Notes",
)

DOC_LINES = (
    "Action items are owned by the team lead.",
    "Next review is scheduled for Thursday.",
    "Status: on track.",
    "Status: blocked on legal review.",
    "Decision: ship the beta to all customers.",
    "Risk: vendor delivery may slip a week.",
)

EVENT_TITLES = (
    "Design Review",
    "Sprint Planning",
    "Quarterly Business Review",
    "Team Lunch",
    "Product Demo",
    "Retrospective",
    "Customer Call",
    "Budget Sync",
    "Hiring Committee",
    "Security Training",
)

LOCATIONS = ("Room Atlas", "Room Borealis", "Room Cosmos", "Zoom", "Cafeteria")

DAYS = ("tomorrow", "Friday", "next Monday", "next Tuesday")
"""Slots are named relative to the workspace's frozen clock (Wednesday 2026-03-11)."""
DAY_OFFSETS = {"tomorrow": 1, "Friday": 2, "next Monday": 5, "next Tuesday": 6}
HOURS = (9, 10, 11, 13, 14, 15, 16)

APPS = (
    ("Zoom", "zoom-client-01.apps.example.com"),
    ("Trello", "trello-client-02.apps.example.com"),
    ("Dropbox Sync", "dropbox-client-03.apps.example.com"),
    ("Grammarly", "grammarly-client-04.apps.example.com"),
    ("Calendly", "calendly-client-05.apps.example.com"),
)

REACTIONS = ("white_check_mark", "eyes", "thumbsup", "tada")
