"""Gmail v1 users.settings, one module per resource as the method ids name them: the settings' own methods
(user_settings.py: vacation, autoForwarding, imap, pop, language), filters, forwardingAddresses, sendAs and
delegates; fields.py holds what they share."""

from .delegates import Delegates
from .filters import Filters
from .forwarding_addresses import ForwardingAddresses
from .send_as import SendAsAliases
from .user_settings import UserSettings


class MailSettings(UserSettings, Filters, ForwardingAddresses, SendAsAliases, Delegates):
    """Every users.settings resource of one mailbox service."""
