"""The words of the seeded company: subjects, bodies, meetings, files, channels, apps."""

INTERNAL_TOPICS = [
    {"subject": "Q2 planning: {dept} headcount", "body": "Hi {me},\n\nCould you pull together the {dept} headcount "
     "numbers for the Q2 plan? Finance needs them before the Thursday review.\n\nThanks,\n{sender}",
     "replies": ["I'll have them by Wednesday.", "on it."]},
    {"subject": "Offsite venue shortlist", "body": "Hi {me},\n\nAttached thoughts on the three venues for the offsite. "
     "I lean towards the one by the river, but the budget is tight.\n\nBest,\n{sender}",
     "replies": ["let's discuss at standup.", "agreed on the river venue."]},
    {"subject": "Laptop refresh for new hires", "body": "Hey {me}, two new {dept} hires start on the 1st. Can we make "
     "sure their laptops and accounts are ready by then?\n\n{sender}", "replies": ["I'll order them today."]},
    {"subject": "Vendor contract renewal", "body": "Hi {me},\n\nThe cleaning vendor contract renews at the end of the "
     "month. Do we want to renegotiate or renew as is?\n\n{sender}", "replies": ["let's renegotiate.", "renew as is."]},
    {"subject": "Expense report question", "body": "Hi {me}, my expense report from the customer trip was returned. "
     "Could you check what's missing?\n\nThanks!\n{sender}", "replies": ["the hotel receipt is missing."]},
    {"subject": "Security training reminder", "body": "Hi {me},\n\nA reminder that the annual security training is "
     "due this month for all of {dept}.\n\n{sender}", "replies": ["thanks, I'll nudge the team."]},
    {"subject": "Office access badges", "body": "{me}, the badge reader on the 3rd floor is failing again. Can you "
     "open a ticket with facilities?\n\n{sender}", "replies": ["ticket opened."]},
    {"subject": "Board deck numbers", "body": "Hi {me},\n\nPlease double-check the ops metrics on slide 7 of the board "
     "deck before Friday.\n\n{sender}", "replies": ["checked, two numbers fixed."]},
]

EXTERNAL_SENDERS = [
    {"from": "Acme Cloud Billing <billing@acmecloud.com>", "subject": "Your invoice #{n} is available",
     "body": "Hello {me},\n\nYour invoice #{n} for {company} is attached. Payment is due in 30 days.\n\nAcme Cloud",
     "category": "CATEGORY_UPDATES", "attach": True},
    {"from": "Officely <orders@officely.com>", "subject": "Order #{n} has shipped",
     "body": "Good news! Order #{n} (printer paper, toner) has shipped and arrives in 2 days.",
     "category": "CATEGORY_UPDATES", "attach": False},
    {"from": "SaaS Weekly <newsletter@saasweekly.io>", "subject": "Issue {n}: pricing pages that convert",
     "body": "This week: pricing pages, churn benchmarks and a hiring market update.",
     "category": "CATEGORY_PROMOTIONS", "attach": False},
    {"from": "TravelDesk <itinerary@traveldesk.com>", "subject": "Itinerary for booking {n}",
     "body": "Your trip is confirmed. Booking reference {n}. Check-in opens 24 hours before departure.",
     "category": "CATEGORY_UPDATES", "attach": False},
    {"from": "Lumen Insurance <policy@lumeninsure.com>", "subject": "Policy renewal notice {n}",
     "body": "Dear {me}, the office insurance policy {n} for {company} renews next month. The renewal quote is attached.",
     "category": "CATEGORY_UPDATES", "attach": True},
    {"from": "Events Today <hello@eventstoday.co>", "subject": "You're invited: Ops Leaders Summit",
     "body": "Join 500 operations leaders for a day of talks. Early-bird code OPS{n}.",
     "category": "CATEGORY_PROMOTIONS", "attach": False},
]

MEETINGS = [
    {"summary": "1:1", "description": "Weekly 1:1", "minutes": 30},
    {"summary": "Budget review", "description": "Review spend vs plan", "minutes": 60, "location": "Room Atlas"},
    {"summary": "Vendor call", "description": "Quarterly vendor check-in", "minutes": 30},
    {"summary": "Hiring sync", "description": "Pipeline and open roles", "minutes": 45},
    {"summary": "Project kickoff", "description": "Kickoff for the office move project", "minutes": 60,
     "location": "Room Borealis"},
    {"summary": "Quarterly planning", "description": "Draft OKRs", "minutes": 90, "location": "Room Atlas"},
    {"summary": "IT security review", "description": "Access reviews and app grants", "minutes": 45},
]

# (folder name, owning department or None for the agent user)
FOLDERS = [("Operations", None), ("Finance", "Finance"), ("Engineering", "Engineering"), ("Sales", "Sales"),
           ("People", "People"), ("Archive", None)]

FILE_TEMPLATES = [
    {"name": "Vendor list.csv", "folder": "Operations", "mime": "text/csv",
     "body": "vendor,service,renewal\nAcme Cloud,hosting,2026-06-30\nSparkle Co,cleaning,2026-03-31\n"},
    {"name": "Office move checklist", "folder": "Operations", "mime": "doc", "body": "checklist"},
    {"name": "Ops weekly notes", "folder": "Operations", "mime": "doc", "body": "notes", "domain": True},
    {"name": "Q2 budget.csv", "folder": "Finance", "mime": "text/csv",
     "body": "department,q2_budget\nEngineering,{n}0000\nSales,{n}5000\nOperations,{n}000\n"},
    {"name": "Expense policy", "folder": "Finance", "mime": "doc", "body": "policy", "domain": True},
    {"name": "Payroll summary March.csv", "folder": "Finance", "mime": "text/csv",
     "body": "employee_id,gross\nE-101,{n}00\nE-102,{n}50\n"},
    {"name": "Architecture overview", "folder": "Engineering", "mime": "doc", "body": "architecture"},
    {"name": "On-call runbook.md", "folder": "Engineering", "mime": "text/markdown",
     "body": "# On-call runbook\n\n1. Check the status page.\n2. Page the secondary after 15 minutes.\n"},
    {"name": "Pricing sheet 2026.csv", "folder": "Sales", "mime": "text/csv",
     "body": "plan,price_usd\nStarter,{n}\nTeam,{n}9\nEnterprise,custom\n", "public": True},
    {"name": "Customer logos.txt", "folder": "Sales", "mime": "text/plain", "body": "Globex\nInitech\nUmbrella\n"},
    {"name": "Onboarding guide", "folder": "People", "mime": "doc", "body": "onboarding", "domain": True},
    {"name": "Salary bands.csv", "folder": "People", "mime": "text/csv",
     "body": "level,min,max\nL3,{n}000,{n}9000\nL4,1{n}000,1{n}9000\n"},
    {"name": "2024 offsite photos.txt", "folder": "Archive", "mime": "text/plain", "body": "photos moved to the NAS"},
    {"name": "Old org chart.txt", "folder": "Archive", "mime": "text/plain", "body": "superseded by the HR system"},
]

DOC_TEMPLATES = {
    "checklist": "Office move checklist\nBook movers for the last Friday of the month.\nOrder new desks for the "
                 "3rd floor.\nUpdate the address with the bank and {company}'s vendors.\nOwner: {me}\n",
    "notes": "Ops weekly notes\nAttendees: operations team\nDecisions: renew the hosting contract; start the "
             "laptop refresh.\nAction items: {me} to circulate the vendor list.\n",
    "policy": "Expense policy\nMeals are reimbursed up to 60 USD per day when travelling.\nReceipts are required for "
              "every expense over 25 USD.\nSubmit reports within 30 days.\n",
    "architecture": "Architecture overview\nThe platform runs three services behind one gateway.\nData is stored in "
                    "Postgres with nightly backups.\nOwner: Engineering\n",
    "onboarding": "Onboarding guide\nWelcome to {company}!\nDay 1: laptop, accounts and security training.\n"
                  "Week 1: meet your buddy and your team.\n",
}

CHANNELS = [
    {"name": "general", "topic": "Company-wide announcements", "purpose": "Everyone"},
    {"name": "random", "topic": "Off topic", "purpose": "Water cooler"},
    {"name": "engineering", "dept": "Engineering", "topic": "Builds, deploys, incidents", "purpose": "Engineering team"},
    {"name": "sales", "dept": "Sales", "topic": "Pipeline and deals", "purpose": "Sales team"},
    {"name": "ops", "dept": "Operations", "topic": "Office, IT and vendors", "purpose": "Operations requests"},
    {"name": "leadership", "private": True, "topic": "Leadership only", "purpose": "Exec and ops leads"},
]

SLACK_LINES = {
    "general": ["Reminder: all-hands is on Thursday at 17:00 UTC.", "Welcome to our new teammates this week!",
                "The office will close early on Friday.", "Please fill in the engagement survey by Monday."],
    "random": ["Anyone up for lunch at the new ramen place?", "Coffee machine on 3 is fixed :tada:",
               "Who left the plant in the meeting room?", "Book club picks next month's book tomorrow."],
    "engineering": ["Deploy of the billing service is done.", "CI is flaky on the integration suite again.",
                    "Postmortem for Tuesday's incident is in the Engineering folder.", "Who is on call this weekend?"],
    "sales": ["Closed the Globex renewal!", "Need a pricing exception for Initech, who approves?",
              "Pipeline review moved to Wednesday.", "New pricing sheet is in the Sales folder."],
    "ops": ["The printer on 2 is out of toner.", "Laptop order for new hires placed.",
            "Reminder: badge photos on Friday.", "The cleaning vendor contract is up for renewal."],
    "leadership": ["Board deck draft is ready for review.", "Q2 headcount plan needs sign-off by Friday.",
                   "Let's discuss the offsite budget on Monday."],
}

OAUTH_APPS = [
    {"name": "Zoom", "scopes": ["https://www.googleapis.com/auth/calendar.readonly", "openid", "email"]},
    {"name": "Trello", "scopes": ["https://www.googleapis.com/auth/drive.file", "email", "profile"]},
    {"name": "Calendly", "scopes": ["https://www.googleapis.com/auth/calendar", "email"]},
    {"name": "Grammarly", "scopes": ["https://www.googleapis.com/auth/documents", "email"]},
    {"name": "PDF Converter Pro", "scopes": ["https://www.googleapis.com/auth/drive", "https://mail.google.com/"]},
    {"name": "Mailmerge Free", "scopes": ["https://mail.google.com/", "https://www.googleapis.com/auth/spreadsheets"]},
]
