"""The seeded company: its name, domain and people directory (the same people across all six services)."""

from __future__ import annotations

import functools
import random

from pydantic import BaseModel, ConfigDict

from .base import DIGITS, SLACK_ALPHABET, make_id

FIRST = ["Ana", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Isabel", "Jonas", "Kavya", "Liam",
         "Maya", "Noah", "Olivia", "Pedro", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wes", "Xin",
         "Yara", "Zoe", "Aiden", "Bea", "Caleb", "Dina", "Emil", "Fatima", "Gabe", "Hana", "Ivan", "Julia",
         "Kofi", "Lena", "Marco", "Nadia", "Owen", "Priya", "Rafael", "Sofia", "Theo", "Uma", "Victor", "Wren"]
LAST = ["Alvarez", "Brooks", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Larsen", "Mendes", "Nakamura", "Okafor", "Patel", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Abbott", "Bianchi", "Costa", "Dawson", "Evans",
        "Ferreira", "Gupta", "Hughes", "Ivanova", "Kim", "Lopez", "Moreau", "Novak", "Olsen", "Reyes", "Singh"]
COMPANIES = [("Northwind Analytics", "northwind.io"), ("Bluefin Robotics", "bluefin.dev"),
             ("Cedar & Pine Studio", "cedarpine.co"), ("Helio Health", "heliohealth.com"),
             ("Quarry Logistics", "quarrylogistics.com"), ("Lumen Finance", "lumenfin.com")]
# (department, titles): the first title of a department is its head
DEPARTMENTS = [
    ("Executive", ["Chief Executive Officer", "Chief Operating Officer"]),
    ("Engineering", ["VP Engineering", "Staff Engineer", "Senior Engineer", "Software Engineer", "Software Engineer",
                     "Site Reliability Engineer", "QA Engineer"]),
    ("Product", ["Head of Product", "Product Manager", "Product Designer"]),
    ("Sales", ["VP Sales", "Account Executive", "Account Executive", "Sales Development Rep"]),
    ("Marketing", ["Head of Marketing", "Content Marketer", "Growth Marketer"]),
    ("Finance", ["Finance Director", "Accountant"]),
    ("People", ["Head of People", "Recruiter"]),
    ("Operations", ["Operations Manager", "IT Administrator", "Office Manager"]),
    ("Legal", ["General Counsel"]),
]


class Person(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    first: str
    last: str
    email: str
    slack_user_id: str
    title: str
    department: str
    handle: str
    user_id: str  # Admin SDK numeric id, also the Drive permission id of the user


class Company(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    domain: str
    people: tuple[Person, ...]
    me: Person  # the user the agent acts as: operations manager and workspace admin

    def by_email(self, email: str) -> Person | None:
        return _index(self)[0].get(email.strip().lower())

    def by_slack_id(self, uid: str) -> Person | None:
        return _index(self)[1].get(uid)


_INDEXES: dict[int, tuple[Company, tuple[dict[str, Person], dict[str, Person]]]] = {}


def _index(c: Company) -> tuple[dict[str, Person], dict[str, Person]]:
    """By-email and by-Slack-id lookups, memoised per company object (identity, not a deep hash per call)."""
    hit = _INDEXES.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    index = {p.email: p for p in c.people}, {p.slack_user_id: p for p in c.people}
    if len(_INDEXES) >= 256:
        _INDEXES.clear()
    _INDEXES[id(c)] = (c, index)  # the entry holds the company, so its id cannot be reused while cached
    return index


@functools.lru_cache(maxsize=64)
def build_company(seed: int) -> Company:
    """The company of a seed; made once per seed and shared (it is frozen: people, names, ids)."""
    return _build_company(seed)


def _build_company(seed: int) -> Company:
    rng = random.Random(f"{seed}:company")
    name, domain = COMPANIES[rng.randrange(len(COMPANIES))]
    slots = [(dept, title) for dept, titles in DEPARTMENTS for title in titles]
    n = min(len(slots), 24 + rng.randrange(4))
    firsts = rng.sample(FIRST, n)
    lasts = rng.sample(LAST, n)
    people = []
    for i in range(n):
        first, last = firsts[i], lasts[i]
        dept, title = slots[i]
        handle = f"{first}.{last}".lower()
        people.append(Person(
            name=f"{first} {last}", first=first, last=last, email=f"{handle}@{domain}",
            slack_user_id="U" + make_id(seed, "slack.user", i, SLACK_ALPHABET, 10), title=title, department=dept,
            handle=handle, user_id="1" + make_id(seed, "admin.user", i, DIGITS, 20),
        ))
    me = next(p for p in people if p.title == "Operations Manager")
    return Company(name=name, domain=domain, people=tuple(people), me=me)
