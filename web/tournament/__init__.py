"""Tournaments: pairs, Swiss pairings, standings with the S2 tie-break chains, exports."""
