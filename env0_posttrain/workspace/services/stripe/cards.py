"""Stripe's test cards: the numbers of its testing docs, the `pm_card_*` / `tok_*` shortcuts, and the outcome
(success or the decline) each one produces when charged."""

from __future__ import annotations

import hashlib
from typing import Any

_DECLINES: dict[str, tuple[str, str | None, str]] = {  # name -> (failure code, decline code, message)
    "generic": ("card_declined", "generic_decline", "Your card was declined."),
    "insufficient_funds": ("card_declined", "insufficient_funds", "Your card has insufficient funds."),
    "lost_card": ("card_declined", "lost_card", "Your card was declined."),
    "stolen_card": ("card_declined", "stolen_card", "Your card was declined."),
    "fraudulent": ("card_declined", "fraudulent", "Your card was declined."),
    "expired_card": ("expired_card", None, "Your card has expired."),
    "incorrect_cvc": ("incorrect_cvc", None, "Your card's security code is incorrect."),
    "processing_error": ("processing_error", None, "An error occurred while processing your card. Try again in a "
                                                   "little bit."),
}

# number -> (brand, funding, country, decline name or None)
CARDS: dict[str, tuple[str, str, str, str | None]] = {
    "4242424242424242": ("visa", "credit", "US", None),
    "4000056655665556": ("visa", "debit", "US", None),
    "5555555555554444": ("mastercard", "credit", "US", None),
    "2223003122003222": ("mastercard", "credit", "US", None),
    "5200828282828210": ("mastercard", "debit", "US", None),
    "378282246310005": ("amex", "credit", "US", None),
    "371449635398431": ("amex", "credit", "US", None),
    "6011111111111117": ("discover", "credit", "US", None),
    "6011000990139424": ("discover", "credit", "US", None),
    "3056930009020004": ("diners", "credit", "US", None),
    "3566002020360505": ("jcb", "credit", "JP", None),
    "6200000000000005": ("unionpay", "credit", "CN", None),
    "4000000000000002": ("visa", "credit", "US", "generic"),
    "4000000000009995": ("visa", "credit", "US", "insufficient_funds"),
    "4000000000009987": ("visa", "credit", "US", "lost_card"),
    "4000000000009979": ("visa", "credit", "US", "stolen_card"),
    "4100000000000019": ("visa", "credit", "US", "fraudulent"),
    "4000000000000069": ("visa", "credit", "US", "expired_card"),
    "4000000000000127": ("visa", "credit", "US", "incorrect_cvc"),
    "4000000000000119": ("visa", "credit", "US", "processing_error"),
    "4000002500003155": ("visa", "credit", "US", None),  # 3D Secure: authentication_required below
}
_AUTH_REQUIRED = {"4000002500003155"}

# the PaymentMethod / token shortcuts of Stripe's test mode
TOKENS: dict[str, str] = {
    "visa": "4242424242424242", "visa_debit": "4000056655665556", "mastercard": "5555555555554444",
    "mastercard_debit": "5200828282828210", "amex": "378282246310005", "discover": "6011111111111117",
    "diners": "3056930009020004", "jcb": "3566002020360505", "unionpay": "6200000000000005",
    "chargeDeclined": "4000000000000002", "chargeDeclinedInsufficientFunds": "4000000000009995",
    "chargeDeclinedLostCard": "4000000000009987", "chargeDeclinedStolenCard": "4000000000009979",
    "chargeDeclinedFraudulent": "4100000000000019", "chargeDeclinedExpiredCard": "4000000000000069",
    "chargeDeclinedIncorrectCvc": "4000000000000127", "chargeDeclinedProcessingError": "4000000000000119",
    "authenticationRequired": "4000002500003155", "threeDSecure2Required": "4000002500003155",
}


def number_for_token(token: str) -> str | None:
    """`pm_card_visa` / `tok_visa` -> its card number; None when it is no test shortcut."""
    for prefix in ("pm_card_", "tok_"):
        if token.startswith(prefix):
            return TOKENS.get(token[len(prefix):])
    return None


def _brand(number: str) -> str:
    if number.startswith("4"):
        return "visa"
    if number[:2] in ("34", "37"):
        return "amex"
    if number.startswith(("51", "52", "53", "54", "55", "22", "23", "24", "25", "26", "27")):
        return "mastercard"
    if number.startswith(("6011", "65", "64")):
        return "discover"
    return "unknown"


def spec_for_number(number: str) -> dict[str, Any]:
    """What a card number means in test mode (env0's `testcards.spec_for_number` keys)."""
    number = str(number).replace(" ", "")
    brand, funding, country, decline = CARDS.get(number, (_brand(number), "credit", "US", None))
    code, decline_code, message = _DECLINES[decline] if decline else (None, None, None)
    return {"brand": brand, "last4": number[-4:], "funding": funding, "country": country,
            "fingerprint": hashlib.blake2b(number.encode(), digest_size=8).hexdigest()[:16],
            "failure_code": code, "decline_code": decline_code, "failure_message": message,
            "authentication_required": number in _AUTH_REQUIRED}
