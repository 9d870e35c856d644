"""The backends under the note service: each answers the service's plain reads and writes
(:mod:`.records`) in its own SQL. ``sqlite``: a folder with an SQLite index beside it;
``postgres``: one PostgreSQL database shared by many servers."""
