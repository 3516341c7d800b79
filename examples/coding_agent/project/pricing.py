"""Prices for a small shop: discounts and order totals."""

from __future__ import annotations


def apply_discount(price: float, percent: float) -> float:
    """The price after a discount of ``percent`` percent (0-100), rounded to cents."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return round(price - price * percent, 2)


def order_total(items: list[tuple[float, int]], discount_percent: float = 0) -> float:
    """The total of ``(unit_price, quantity)`` lines, after the order discount."""
    subtotal = sum(price * quantity for price, quantity in items)
    return apply_discount(subtotal, discount_percent)
