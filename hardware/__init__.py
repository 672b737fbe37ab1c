"""RFID readers for a Guandan table: serial bytes -> tag reads -> seat plays and deck checks.

Data flow: a reader protocol (``protocols``) turns bytes into :class:`~hardware.reads.TagRead`;
``presence`` debounces reads into arrivals and removals per antenna; ``table`` groups a seat's
new tags into ``play`` observations; ``deck`` checks deck integrity (RULES.md D3). The table
agent (``web/app/agent``) is where these observations meet the camera's.
"""
