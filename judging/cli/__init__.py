"""Management commands: everything an admin does from a shell (``manage.py import_run`` ...).

A command translates its arguments, like a view, and calls one service or workflow.
"""
