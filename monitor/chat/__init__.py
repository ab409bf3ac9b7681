"""The team's answers from Telegram: button presses and commands, read by long polling."""
