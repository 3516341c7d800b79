"""``deskwork.worker_context``: context-window constants and helpers."""

from deskwork.runtime.context import (
    SUMMARY_ATTEMPT_LIMIT,
    SUMMARY_CHUNK_TOKENS,
    SUMMARY_MAX_OUTPUT_TOKENS,
    SUMMARY_TAIL_MESSAGES,
    compact_messages,
    is_context_limit_error,
    model_is_registered,
)

__all__ = [
    "SUMMARY_ATTEMPT_LIMIT",
    "SUMMARY_CHUNK_TOKENS",
    "SUMMARY_MAX_OUTPUT_TOKENS",
    "SUMMARY_TAIL_MESSAGES",
    "compact_messages",
    "is_context_limit_error",
    "model_is_registered",
]
