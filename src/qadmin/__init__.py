"""qadmin: create, manage and diagnose message queues kept in database tables."""

__version__ = "0.1.0"
