"""The card table's layout (games/table.py) as an OpenAPI schema: steps and events carry it."""

from __future__ import annotations

import marshmallow as ma


class FactSchema(ma.Schema):
    label = ma.fields.String(required=True)
    value = ma.fields.String(required=True)


class BadgeSchema(ma.Schema):
    label = ma.fields.String(required=True)
    value = ma.fields.String()
    kind = ma.fields.String(metadata={"description": "role, turn, bid, count, score or warn"})


class TableSeatSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    hand = ma.fields.List(ma.fields.String(), allow_none=True, required=True,
                          metadata={"description": "its cards where they may be shown, else null"})
    count = ma.fields.Integer(allow_none=True, required=True, metadata={"description": "cards it holds"})
    badges = ma.fields.List(ma.fields.Nested(BadgeSchema), required=True)
    to_act = ma.fields.Boolean(required=True)
    last = ma.fields.Boolean(required=True, metadata={"description": "it took the last action"})
    out = ma.fields.Boolean(required=True, metadata={"description": "out of the game"})


class TableCardSchema(ma.Schema):
    card = ma.fields.String(required=True)
    seat = ma.fields.Integer(metadata={"description": "who played it"})
    note = ma.fields.String()
    last = ma.fields.Boolean()
    win = ma.fields.Boolean()


class TableLineSchema(ma.Schema):
    text = ma.fields.String(required=True, metadata={"description": "read as: <seat's name> text <to's name>"})
    seat = ma.fields.Integer()
    to = ma.fields.Integer()
    last = ma.fields.Boolean()


class PileSchema(ma.Schema):
    title = ma.fields.String(required=True)
    cards = ma.fields.List(ma.fields.Nested(TableCardSchema), required=True)
    backs = ma.fields.Integer(required=True, metadata={"description": "cards face down"})
    note = ma.fields.String()
    winner = ma.fields.Integer()
    lines = ma.fields.List(ma.fields.Nested(TableLineSchema))


class LastActionSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    text = ma.fields.String(required=True)
    cards = ma.fields.List(ma.fields.String(), required=True)
    to = ma.fields.Integer()


class TableSchema(ma.Schema):
    facts = ma.fields.List(ma.fields.Nested(FactSchema), required=True, metadata={"description": "the headline"})
    seats = ma.fields.List(ma.fields.Nested(TableSeatSchema), required=True)
    centre = ma.fields.List(ma.fields.Nested(PileSchema), required=True,
                            metadata={"description": "the middle of the table: tricks, stock, lots, auctions"})
    last = ma.fields.Nested(LastActionSchema, allow_none=True, required=True)
    faces = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Dict(), required=True,
                           metadata={"description": "how each card string of the table is drawn"})
