"""A recorded weekly sync: (seconds since start, speaker, text)."""

from __future__ import annotations

TRANSCRIPT: list[tuple[float, str, str]] = [
    (0.0, "Ana", "Morning! Two things today: the launch date and the beta feedback."),
    (6.0, "Ben", "Beta users love the export, but three of them hit the login bug."),
    (13.0, "Ana", "Then the login bug blocks the launch. Can we fix it this week?"),
    (19.0, "Chen", "Yes. I'll fix the login bug by Wednesday."),
    (27.0, "Ana", "Good. So we agreed to move the launch to the 14th."),
    (33.0, "Ben", "I'll update the release notes."),
    (50.0, "Ana", "Anything else from the beta feedback?"),
    (56.0, "Chen", "A few asked for dark mode."),
    (63.0, "Ana", "Let's go with dark mode after the launch, not before."),
    (70.0, "Ben", "I'll write the dark mode spec by next Friday."),
    (77.0, "Ana", "Great, thanks all."),
]
