"""Stripe customers: create, list, retrieve, update, delete, search and their payment methods."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...tool_args import IntRange
from . import serialize as ser
from .errors import invalid, no_such
from .search import Search
from .state import CREATED, PAGE


class Customers(Search):
    @api("stripe.customers.create", "POST v1/customers", "Create a customer.", writes=True,
         params={"name": "", "email": "", "phone": "", "description": "", "metadata": "key-value strings",
                 "payment_method": "a PaymentMethod to attach", "invoice_settings": "{default_payment_method}"})
    def customers_create(self, name: str | None = None, email: str | None = None, phone: str | None = None,
                         description: str | None = None, metadata: dict | None = None,
                         payment_method: str | None = None, invoice_settings: dict | None = None,
                         expand: list[str] | None = None) -> dict[str, Any]:
        c = self.add_customer(name=name, email=email, phone=phone, description=description,
                              metadata=ser.meta(self.merge_meta("{}", metadata)))
        if payment_method:
            pm = self.resolve_card(payment_method, "payment_method")
            self.db.payment_methods[pm.id] = pm.model_copy(update={"customer_id": c.id})
        default = (invoice_settings or {}).get("default_payment_method")
        if default:
            pm = self.db.payment_methods.get(default)
            if pm is None or pm.customer_id != c.id:
                raise invalid(f"No such PaymentMethod: '{default}'", "invoice_settings[default_payment_method]")
            self.db.customers[c.id] = c = c.model_copy(update={"default_payment_method": default})
        out = ser.customer(c, self.db)
        self.event("customer.created", out)
        return self.expand(out, expand)

    @api("stripe.customers.list", "GET v1/customers", "List customers, newest first; filter by exact email.",
         params={"email": "exact, case-sensitive", **PAGE, **CREATED})
    def customers_list(self, email: str | None = None, limit: int | None = None, starting_after: str | None = None,
                       ending_before: str | None = None, expand: list[str] | None = None,
                       created: IntRange | None = None) -> dict[str, Any]:
        rows = [c for c in self.db.customers.values() if not c.deleted and (email is None or c.email == email)]
        return self.page(rows, lambda c: ser.customer(c, self.db), "/v1/customers", limit, starting_after,
                         ending_before, expand, created)

    @api("stripe.customers.retrieve", "GET v1/customers/{customer}", "Retrieve a customer.",
         params={"customer": "cus_ id", "expand": ""})
    def customers_retrieve(self, customer: str, expand: list[str] | None = None) -> dict[str, Any]:
        c = self.db.customers.get(customer)
        if c is None:
            raise no_such("customer", customer)
        return self.expand(ser.customer(c, self.db), expand)

    @api("stripe.customers.update", "POST v1/customers/{customer}", "Update a customer (fields given change; "
         "metadata merges, an empty value unsets a key).", writes=True,
         params={"customer": "cus_ id", "name": "", "email": "", "phone": "", "description": "", "metadata": "",
                 "invoice_settings": "{default_payment_method}"})
    def customers_update(self, customer: str, name: str | None = None, email: str | None = None,
                         phone: str | None = None, description: str | None = None, metadata: dict | None = None,
                         invoice_settings: dict | None = None, expand: list[str] | None = None) -> dict[str, Any]:
        c = self.customer_row(customer)
        update: dict[str, Any] = {k: v for k, v in (("name", name), ("email", email), ("phone", phone),
                                                    ("description", description)) if v is not None}
        update["metadata_json"] = self.merge_meta(c.metadata_json, metadata)
        if invoice_settings and "default_payment_method" in invoice_settings:
            default = invoice_settings["default_payment_method"] or None
            if default and (default not in self.db.payment_methods or
                            self.db.payment_methods[default].customer_id != c.id):
                raise invalid(f"No such PaymentMethod: '{default}'", "invoice_settings[default_payment_method]")
            update["default_payment_method"] = default
        self.db.customers[c.id] = c = c.model_copy(update=update)
        out = ser.customer(c, self.db)
        self.event("customer.updated", out)
        return self.expand(out, expand)

    @api("stripe.customers.delete", "DELETE v1/customers/{customer}", "Delete a customer.", writes=True,
         params={"customer": "cus_ id"})
    def customers_delete(self, customer: str) -> dict[str, Any]:
        c = self.customer_row(customer)
        self.db.customers[c.id] = c.model_copy(update={"deleted": True})
        self.event("customer.deleted", ser.customer(c, self.db))
        return {"id": c.id, "object": "customer", "deleted": True}

    @api("stripe.customers.listPaymentMethods", "GET v1/customers/{customer}/payment_methods",
         "List a customer's PaymentMethods (cards on file).", params={"customer": "cus_ id", "type": "card", **PAGE})
    def customers_list_payment_methods(self, customer: str, type: str | None = None, limit: int | None = None,
                                       starting_after: str | None = None, ending_before: str | None = None,
                                       expand: list[str] | None = None) -> dict[str, Any]:
        c = self.customer_row(customer)
        rows = [p for p in self.db.payment_methods.values() if p.customer_id == c.id and (type is None or p.type == type)]
        return self.page(rows, lambda p: ser.payment_method(p, self.db), f"/v1/customers/{c.id}/payment_methods",
                         limit, starting_after, ending_before, expand)

    @api("stripe.customers.search", "GET v1/customers/search", "Search customers: email:'a@b.com', name~'acme', "
         "metadata['k']:'v', created>1700000000; AND / OR.", params={"query": "Stripe search query", "limit": "",
                                                                   "page": "next_page of the last answer"})
    def customers_search(self, query: str, limit: int | None = None, page: str | None = None,
                         expand: list[str] | None = None) -> dict[str, Any]:
        return self.expand(self._search("customers", query, limit, page, lambda c: ser.customer(c, self.db)), expand)
