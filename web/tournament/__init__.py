"""Tournaments: pairs, Swiss pairings, standings with the S2 tie-break chains, sign-off (S3),
rulings, score sheets and exports. The store knows none of it: a tournament plugs into the
store as its ``TableRules`` (``tables.TournamentTables``) and keeps its own records beside it."""
