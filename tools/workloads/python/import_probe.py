# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Imported by main_imports.py: the tracer (sys.gettrace()) its import runs under."""
import sys

TRACER = sys.gettrace()
