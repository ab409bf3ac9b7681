"""Telling people: events rendered into grouped messages, the durable outbox, delivery to Telegram."""
