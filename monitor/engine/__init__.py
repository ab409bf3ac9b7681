"""The engine: the task queue and rounds, health, breakers, the DLQ, retries, quota pacing, and the
time-boxed run over them. Pure: `now` comes in, I/O goes through the reader and the save callback."""
