"""The switches every Google-imitating model of the sandbox shares (the latency, the change-feed delay):
a model ("google" or "off"), a scale of Google's figures, a seed, each validated the same way.

``ModelSwitch`` holds them for one model, under the model's own lock; what a setting means is the
model's business (latency.py, feed_delay.py).
"""

from __future__ import annotations

import math
import threading

GOOGLE = "google"
OFF = "off"
MODELS = (GOOGLE, OFF)


def parse_setting(value: object, what: str, max_scale: float) -> tuple[str, float]:
    """(model, scale) for a ``what=`` argument: "google", "off", or a scale of the Google model.

    A scale of 0 turns the model off like "off" does. Raises ValueError saying what is allowed.
    """
    if value in MODELS:
        return str(value), 1.0
    if isinstance(value, int | float) and not isinstance(value, bool):
        return GOOGLE, checked_scale(value, what, max_scale)
    raise ValueError(
        f"{what} must be {GOOGLE!r}, {OFF!r} or a scale of the Google model (a number from 0 to "
        f"{max_scale:g}), got {value!r}"
    )


def checked_scale(value: object, what: str, max_scale: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f'{what} "scale" must be a number from 0 to {max_scale:g}, got {value!r}')
    if not 0 <= value <= max_scale:
        raise ValueError(f'{what} "scale" must be from 0 to {max_scale:g}, got {value!r}')
    return float(value)


def scale_text(scale: float) -> str:
    """"full scale", "1/10 scale", "scale 2.5": how a description names a scale."""
    if scale == 1:
        return "full scale"
    if scale < 1 and (1 / scale).is_integer():
        return f"1/{int(1 / scale)} scale"
    return f"scale {scale:g}"


class ModelSwitch:
    """One model's switches (model, scale, seed). Callers hold ``lock`` to read them consistently
    with their own state; ``configure`` takes it itself."""

    def __init__(self, setting: object, seed: int, what: str, max_scale: float) -> None:
        self.what, self.max_scale = what, max_scale
        self.model, self.scale = parse_setting(setting, what, max_scale)
        self.seed = seed
        self.lock = threading.Lock()

    @property
    def active(self) -> bool:
        """On, at a scale above zero (callers hold ``lock``)."""
        return self.model == GOOGLE and self.scale > 0

    def configure(self, *, model: object = None, scale: object = None, seed: object = None) -> bool:
        """Change any of model ("google"/"off"), scale (0..max_scale) and seed (an int); True when
        a new seed was given. All are validated before any is applied (ValueError naming the key)."""
        if model is not None and model not in MODELS:
            raise ValueError(f'{self.what} "model" must be one of {", ".join(MODELS)}, got {model!r}')
        new_scale = checked_scale(scale, self.what, self.max_scale) if scale is not None else None
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f'{self.what} "seed" must be an integer, got {seed!r}')
        with self.lock:
            if model is not None:
                self.model = str(model)
            if new_scale is not None:
                self.scale = new_scale
            if seed is not None:
                self.seed = seed
        return seed is not None

    def settings(self) -> dict:
        """model, scale, seed, active: JSON-ready (callers hold ``lock``)."""
        return {"model": self.model, "scale": self.scale, "seed": self.seed, "active": self.active}
