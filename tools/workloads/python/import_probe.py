"""Imported by main_imports.py: the tracer (sys.gettrace()) its import runs under."""
import sys

TRACER = sys.gettrace()
