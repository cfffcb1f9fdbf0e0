"""The in-environment side: runs cases under the installed torch and writes records.

Everything below this package imports only the standard library and torch, and keeps
to syntax that the oldest Python of the oldest torch release in the matrix accepts.
"""
