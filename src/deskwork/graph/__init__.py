"""Supervised agent graphs on LangGraph (the ``graph`` extra). Public surface: see ``_LAZY``."""
