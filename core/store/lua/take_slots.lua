--! uses take_slots
-- A slot of each slotted bot for a match, all or none (core/store/slots.py `take_slots`).
-- KEYS: `take_slots`'s keys. args: `take_slots`'s slots. 0 when taken, else the first full bot's index.
return take_slots(KEYS, cjson.decode(ARGV[1]))
