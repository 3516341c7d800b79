"""Tests of pricing.py (run with: python -m unittest)."""

import unittest

from pricing import apply_discount, order_total


class ApplyDiscountTest(unittest.TestCase):
    def test_no_discount_keeps_the_price(self) -> None:
        self.assertEqual(apply_discount(20.0, 0), 20.0)

    def test_ten_percent_off(self) -> None:
        self.assertEqual(apply_discount(20.0, 10), 18.0)

    def test_rejects_a_percent_over_100(self) -> None:
        with self.assertRaises(ValueError):
            apply_discount(20.0, 120)


class OrderTotalTest(unittest.TestCase):
    def test_total_with_a_discount(self) -> None:
        self.assertEqual(order_total([(2.5, 4), (5.0, 1)], discount_percent=20), 12.0)


if __name__ == "__main__":
    unittest.main()
