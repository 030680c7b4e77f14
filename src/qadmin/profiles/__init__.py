"""Profiles: how a table is read as a queue (qadmin kinds, libraries, declared tables)."""
