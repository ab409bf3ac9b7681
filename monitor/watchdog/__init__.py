"""The watchdog: judging whether the runs go on, with its own memory and outbox. No Google stack."""
