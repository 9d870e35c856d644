"""The PostgreSQL backend: one database, shared by many notewell servers."""
