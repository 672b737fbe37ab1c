"""The referee's rules by phase of a session, one module each, as RULES.md groups them.

Each module is one mix-in of :class:`referee.machine.Machine` with the handlers for its
events and the checks for its rule IDs; every rule ID is raised in exactly one place,
so grepping for the ID in double quotes under ``referee/phases`` finds where:

* :mod:`.session`: session and deal start, faults and recognition conflicts;
* :mod:`.deck`: D3 (hand and deck counts, a card seen more often than two decks hold,
  RFID deck checks);
* :mod:`.tribute`: T1-T6;
* :mod:`.play`: P1-P7 and X2's forbidden play;
* :mod:`.reporting`: R1-R2;
* :mod:`.clock`: K1-K5;
* :mod:`.penalties`: X1-X4;
* :mod:`.results`: P7's deal end, U1-U3, W1-W2, S1.
"""
