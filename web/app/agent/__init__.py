"""The table agent: the one place a table's camera and RFID reader meet.

Frames (:mod:`.sources`) go through the recognizer's table watcher, RFID reads through
``hardware``; :mod:`.fusion` pairs their plays, :mod:`.agent` stamps table, id and time on
every event, checks it with the one parser (``referee.events.parse_event``) and puts it in
the on-disk :mod:`.outbox`; :mod:`.sender` posts the outbox to the server's event API in
order (:mod:`.poster`). :mod:`.demo` runs simulated tables through exactly this path.
Nothing below the app layer imports this package.
"""
