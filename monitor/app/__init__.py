"""Composition roots: a run wired from a Config (`run`), its notify step, and the demo."""
